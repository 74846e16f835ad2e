/**
 * A Slack test rig: the fake Slack, the real adapter (real Bolt App) connected to it by Socket Mode
 * or by signed HTTP on a plain node:http server, and people who use what is actually rendered.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SlackAdapter, type SlackAdapterOptions } from '../../adapters/slack/index.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import { type ComponentRef, decodeComponentId } from '../../src/card/codec.js'
import type { AnswererRequest } from '../../src/protocol/types.js'
import type { RoutePlan, Router } from '../../src/routing/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import type { ContractHarness, PersonSpec } from '../contract/adapter-contract.js'
import {
  type FakeSlack,
  FakeSlack as FakeSlackServer,
  type FakeUser,
  type StoredMessage,
} from '../fakes/slack/server.js'
import { until } from '../helpers/service.js'

export type SlackMode = 'socket' | 'http'

export interface SlackRig {
  fake: FakeSlack
  adapter: SlackAdapter
  mode: SlackMode
  /** The HTTP server mounting `adapter.handleHttp` at /slack/events (HTTP mode). */
  server?: Server
  people: { ann: PersonSpec; bob: PersonSpec; cat: PersonSpec }
  /** Wait until the Socket Mode connection is up (no-op in HTTP mode). */
  connected(): Promise<void>
  /** The first element on a call's messages whose decoded id matches. */
  element(
    callId: string,
    match: (ref: ComponentRef) => boolean,
  ): { message: StoredMessage; actionId: string; element: Record<string, unknown> } | undefined
  /** Use an element as a person would. */
  use(
    callId: string,
    match: (ref: ComponentRef) => boolean,
    person: PersonSpec,
    values?: string[],
  ): Promise<void>
  /** What a Slack client would show for a call's messages (mentions and dates resolved). */
  text(callId: string): string
  close(): Promise<void>
}

const PEOPLE = {
  ann: { userId: 'U0ANN', name: 'Ann' },
  bob: { userId: 'U0BOB', name: 'Bob' },
  cat: { userId: 'U0CAT', name: 'Cat' },
}

export function fakeUser(p: PersonSpec): FakeUser {
  return { id: p.userId, name: p.name }
}

/** Render mrkdwn the way a Slack client shows it: mentions as names, dates by fallback, entities decoded. */
export function clientText(mrkdwn: string): string {
  const names = new Map(Object.values(PEOPLE).map((p) => [p.userId, p.name]))
  return mrkdwn
    .replace(/<@([UW][A-Z0-9]+)>/g, (_m, id: string) => `@${names.get(id) ?? id}`)
    .replace(/<!date\^\d+\^[^|>]*\|([^>]*)>/g, '$1')
    .replace(/<!subteam\^([A-Z0-9]+)>/g, '@group-$1')
    .replace(/<([^|>]+)\|([^>]*)>/g, '$2')
    .replace(/(^|[\s(“])\*([^*\n]+)\*(?=$|[\s).,:;!?”])/gm, '$1$2')
    .replace(/(^|[\s(“])_([^_\n]+)_(?=$|[\s).,:;!?”])/gm, '$1$2')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

/** All visible text of some blocks, one line per text object. */
export function blocksText(blocks: Record<string, unknown>[]): string {
  const out: string[] = []
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x)
      return
    }
    if (typeof v !== 'object' || v === null) return
    const o = v as Record<string, unknown>
    if ((o.type === 'mrkdwn' || o.type === 'plain_text') && typeof o.text === 'string') {
      out.push(clientText(o.text))
      return
    }
    for (const x of Object.values(o)) walk(x)
  }
  walk(blocks)
  return out.join('\n')
}

export async function startSlackRig(
  mode: SlackMode,
  options: Partial<SlackAdapterOptions> & { fake?: FakeSlack } = {},
): Promise<SlackRig> {
  const fake = options.fake ?? (await FakeSlackServer.start({ pingIntervalMs: 1000, rateLimits: false }))
  const adapter = new SlackAdapter({
    botToken: fake.options.botToken,
    ...(mode === 'socket'
      ? { appToken: fake.options.appToken }
      : { signingSecret: fake.options.signingSecret }),
    apiUrl: fake.apiUrl,
    rateLimit: { perChannelIntervalMs: 0, pace: false },
    ...options,
  })
  let server: Server | undefined
  if (mode === 'http') {
    const s = createServer((req, res) => {
      if (req.url === '/slack/events') void adapter.handleHttp(req, res)
      else res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
    fake.interactivityUrl = `http://127.0.0.1:${(s.address() as AddressInfo).port}/slack/events`
    server = s
  }

  const element: SlackRig['element'] = (callId, match) => {
    for (const message of fake.messagesOf(callId)) {
      for (const block of message.blocks) {
        if (block.type !== 'actions' || !Array.isArray(block.elements)) continue
        for (const el of block.elements as Record<string, unknown>[]) {
          const ref = decodeComponentId(String(el.action_id))
          if (ref && ref.callId === callId && match(ref))
            return { message, actionId: String(el.action_id), element: el }
        }
      }
    }
    return undefined
  }

  const rig: SlackRig = {
    fake,
    adapter,
    mode,
    ...(server ? { server } : {}),
    people: PEOPLE,
    async connected() {
      if (mode === 'socket') await fake.waitForSocket()
    },
    element,
    async use(callId, match, person, values) {
      const found = element(callId, match)
      if (!found) throw new Error(`no matching live element on call ${callId}`)
      const payload = fake.actionPayload(
        fakeUser(person),
        found.message,
        found.actionId,
        values ? { values } : {},
      )
      const delivery = await fake.deliver(payload)
      if (delivery.timedOut) throw new Error('the adapter did not acknowledge within 3 seconds')
      if (delivery.status !== undefined && delivery.status !== 200) throw new Error(`HTTP ${delivery.status}`)
    },
    text(callId) {
      return fake
        .messagesOf(callId)
        .map((m) => blocksText(m.blocks))
        .join('\n')
    },
    async close() {
      await adapter.stop()
      if (server) {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server?.close(() => resolve()))
      }
      await fake.close()
    },
  }
  return rig
}

/** The contract harness over a rig. */
export function slackHarness(rig: SlackRig): ContractHarness {
  const { fake } = rig
  const optionValue = (el: Record<string, unknown>, label: string): string => {
    const groups = Array.isArray(el.option_groups) ? (el.option_groups as { options: unknown[] }[]) : []
    const all = [...(Array.isArray(el.options) ? el.options : []), ...groups.flatMap((g) => g.options)] as {
      text: { text: string }
      value: string
    }[]
    const found = all.find((o) => o.text.text === label || o.text.text.replace(/^\d+\.\s/, '') === label)
    if (!found) throw new Error(`no option ${label}`)
    return found.value
  }
  return {
    adapter: rig.adapter,
    destination: { platform: 'slack', channel: 'C0QUESTIONS' },
    people: { ann: rig.people.ann, bob: rig.people.bob },
    onlyAnn: { slack: { users: [rig.people.ann.userId] } },
    async press(callId, target, person) {
      await rig.connected()
      const exact = (r: ComponentRef) => r.verb === target.verb && r.q === target.q && r.o === target.o
      if (rig.element(callId, exact)) return rig.use(callId, exact, person)
      // An option inside a menu rather than a button of its own.
      const menu = (r: ComponentRef) => r.verb === target.verb && r.q === target.q && r.o === undefined
      await rig.use(callId, menu, person, [String(target.o)])
    },
    async select(callId, q, labels, person) {
      await rig.connected()
      const match = (r: ComponentRef) =>
        (r.verb === 'set' || r.verb === 'choose') && r.q === q && r.o === undefined
      const found = rig.element(callId, match)
      if (found) {
        return rig.use(
          callId,
          match,
          person,
          labels.map((l) => optionValue(found.element, l)),
        )
      }
      // Single-select buttons: a selection is a press of the button with that label.
      for (const label of labels) {
        await rig.use(
          callId,
          (r) => r.verb === 'choose' && r.q === q && buttonLabel(rig, callId, r) === label,
          person,
        )
      }
    },
    async submitForm(callId, verb, q, text, person) {
      await rig.connected()
      const before = new Set([...fake.views.keys()])
      const match = (r: ComponentRef) => r.verb === verb && (verb === 'decline' || r.q === q)
      await rig.use(callId, match, person)
      const view = await until(
        async () =>
          [...fake.views.values()].find((v) => !before.has(v.id) && v.user === person.userId && v.open),
        'modal opened',
      )
      const input = (view.view.blocks as Record<string, unknown>[]).find((b) => b.type === 'input')
      if (!input) throw new Error('the modal has no input')
      const actionId = String((input.element as Record<string, unknown>).action_id)
      const delivery = await fake.submitView(person.userId, view.id, {
        [String(input.block_id)]: { [actionId]: text },
      })
      if (delivery.timedOut) throw new Error('the modal submission was not acknowledged in time')
    },
    async notices(person) {
      return fake.noticesFor(person.userId).map(clientText)
    },
    async text(callId) {
      return rig.text(callId)
    },
    async live(callId) {
      return fake.liveActionIds(callId).length > 0
    },
    async messageCount(callId) {
      return fake.messagesOf(callId).length
    },
    async close() {
      await rig.close()
    },
  }
}

function buttonLabel(rig: SlackRig, callId: string, ref: ComponentRef): string | undefined {
  const found = rig.element(callId, (r) => r.verb === ref.verb && r.q === ref.q && r.o === ref.o)
  const text = (found?.element.text as { text?: string } | undefined)?.text
  return text?.replace(/^\d+\.\s/, '')
}

/** The real service and chat answerer on a SQLite store, posting through the rig's adapter. */
export interface Bridge {
  service: UserQuestionService
  chat: ChatAnswerer
  agent(): ReturnType<UserQuestionService['agents']['ensure']>
  close(): Promise<void>
}

export async function startBridge(
  rig: SlackRig,
  plan: Partial<RoutePlan> | ((request: AnswererRequest) => Partial<RoutePlan>) = {},
): Promise<Bridge> {
  const service = new UserQuestionService({ store: openStore('memory') })
  const router: Router = {
    resolve: (request) => ({
      name: 'slack-test',
      destinations: [{ platform: 'slack', channel: 'C0QUESTIONS' }],
      quorum: 1,
      excludeRequester: false,
      escalation: [],
      ...(typeof plan === 'function' ? plan(request) : plan),
    }),
  }
  const chat = new ChatAnswerer({ service, adapters: [rig.adapter], router, escalationIntervalMs: 0 })
  service.use(chat.answerer)
  await chat.start()
  await rig.connected()
  return {
    service,
    chat,
    agent: () => service.agents.ensure('agent-1'),
    async close() {
      await service.close()
      await chat.stop()
      await rig.close()
      await service.store.close()
    },
  }
}
