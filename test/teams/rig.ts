/**
 * The real TeamsAdapter wired to the fake Teams: the bot's `POST /teams/messages` on a local port,
 * the fake's token, key and connector endpoints as its Microsoft endpoints. People act only
 * through buttons and inputs actually rendered on the card as they see it (refreshed for them
 * when the card's `refresh.userIds` lists them).
 */
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ACTION_KEY } from '../../adapters/teams/card-schema.js'
import { TeamsAdapter, type TeamsAdapterOptions, type TeamsRef } from '../../adapters/teams/index.js'
import { decodeComponentId } from '../../src/card/codec.js'
import type { CardState, Destination } from '../../src/card/types.js'
import { FakeTeams, type FakeTeamsUser, type StoredActivity } from '../fakes/teams/server.js'

type Json = Record<string, unknown>

/** The real adapter, remembering where it posted each card (what the answerer's store keeps). */
export class ObservedTeamsAdapter extends TeamsAdapter {
  readonly refs = new Map<string, TeamsRef>()
  override async post(card: CardState, destination: Destination): Promise<TeamsRef> {
    const ref = await super.post(card, destination)
    this.refs.set(card.callId, ref)
    return ref
  }
}

export interface TeamsRig {
  fake: FakeTeams
  adapter: ObservedTeamsAdapter
  botUrl: string
  activity(callId: string): StoredActivity | undefined
  /** The posted card's elements: what everyone sees. */
  elements(callId: string): Json[]
  /** The elements of the card as this person sees it. */
  seen(callId: string, user: FakeTeamsUser): Promise<Json[]>
  text(callId: string): string
  /**
   * Use the Action.Execute whose component matches `test` on the card as the person sees it, with
   * typed inputs. When Teams hides the button from them (the card's refresh does not list them),
   * the click comes from a stale or forged client: the button of the card its people see.
   */
  execute(
    callId: string,
    test: (verb: string, q?: number, o?: number) => boolean,
    user: FakeTeamsUser,
    inputs?: (elements: Json[]) => Json,
  ): Promise<Json | undefined>
  close(): Promise<void>
}

export async function teamsRig(options: Partial<TeamsAdapterOptions> = {}): Promise<TeamsRig> {
  const fake = await new FakeTeams().start()
  const adapter = new ObservedTeamsAdapter({
    appId: fake.appId,
    appPassword: fake.appPassword,
    tenantId: fake.tenantId,
    serviceUrl: fake.serviceUrl,
    authorityUrl: fake.authorityUrl,
    ...options,
  })
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/teams/messages') void adapter.handleHttp(req, res)
    else res.writeHead(404).end()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const botUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/teams/messages`
  fake.botUrl = botUrl

  const activity = (callId: string) => {
    const ref = adapter.refs.get(callId)
    return ref ? fake.activities.get(ref.activityId) : undefined
  }
  const flatten = (root: unknown): Json[] => {
    const out: Json[] = []
    const visit = (x: unknown) => {
      if (Array.isArray(x)) x.forEach(visit)
      else if (x && typeof x === 'object') {
        out.push(x as Json)
        for (const v of Object.values(x)) visit(v)
      }
    }
    visit(root)
    return out
  }
  const seen = async (callId: string, user: FakeTeamsUser): Promise<Json[]> => {
    const stored = activity(callId)
    if (!stored) throw new Error(`card ${callId} not posted`)
    return flatten(await fake.view(stored.id, user))
  }
  const elements = (callId: string): Json[] => {
    const out: Json[] = []
    const visit = (x: unknown) => {
      if (Array.isArray(x)) x.forEach(visit)
      else if (x && typeof x === 'object') {
        out.push(x as Json)
        for (const v of Object.values(x)) visit(v)
      }
    }
    visit(activity(callId)?.activity.attachments)
    return out
  }
  return {
    fake,
    adapter,
    botUrl,
    activity,
    elements,
    text: (callId) =>
      elements(callId)
        .filter((e) => e.type === 'TextBlock')
        .map((e) => String(e.text).replace(/\\(.)/g, '$1'))
        .join('\n'),
    seen,
    async execute(callId, test, user, inputs) {
      const stored = activity(callId)
      if (!stored) throw new Error(`card ${callId} not posted`)
      const find = (all: Json[]) =>
        all.find((e) => {
          if (e.type !== 'Action.Execute') return false
          const ref = decodeComponentId(String((e.data as Json)[ACTION_KEY]))
          return ref?.callId === callId && test(ref.verb, ref.q, ref.o)
        })
      let all = await seen(callId, user)
      let action = find(all)
      const listed = (fake.card(stored.id)?.refresh as { userIds?: string[] } | undefined)?.userIds?.[0]
      if (!action && listed) {
        all = await seen(callId, { aadObjectId: listed.replace(/^29:/, ''), name: 'stale client' })
        action = find(all)
      }
      if (!action) throw new Error(`no matching button on ${callId}`)
      const record = await fake.execute(stored.id, action, inputs?.(all) ?? {}, user, all[0])
      if (record.status !== 200) throw new Error(`invoke answered ${record.status}`)
      return record.body
    },
    async close() {
      await adapter.stop()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      if (fake.rejected.length) throw new Error(`the fake refused payloads: ${JSON.stringify(fake.rejected)}`)
      await fake.close()
    },
  }
}
