/**
 * Routing through the real Discord adapter (the real discord.js Client) and the fake Discord:
 * responders by role, role mentions that ping exactly the configured role, and an escalation tier
 * that mirrors the card into a second channel. The real ChatAnswerer and service on SQLite, a
 * routes file validated like ASKBRIDGE_ROUTES, and a clock the test controls.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { DiscordAdapter } from '../../adapters/discord/index.js'
import { PLATFORMS } from '../../adapters/platforms.js'
import { type ComponentRef, decodeComponentId } from '../../src/card/codec.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { waitResponded } from '../discord/rig.js'
import { FakeDiscord, type FakeUser, type StoredMessage } from '../fakes/discord/server.js'
import { startAnswerer } from '../helpers/answerer.js'
import { keyFor, refFor, until } from '../helpers/service.js'

const CHANNEL = '110000000000000003'
const ESCALATION_CHANNEL = '110000000000000005'
const RELEASERS = '110000000000000010'
const PAGER = '110000000000000011'

/** A guild member with no role, one with the releasers' role, one with only the pager role. */
const alice: FakeUser = { id: '210000000000000001', username: 'alice', global_name: 'Alice' }
const rita: FakeUser = {
  id: '210000000000000003',
  username: 'rita',
  global_name: 'Rita',
  roles: [RELEASERS],
}
const pete: FakeUser = { id: '210000000000000004', username: 'pete', global_name: 'Pete', roles: [PAGER] }

const release: AskUserQuestionItem = {
  id: 'release',
  question: 'Promote build 812 to the live branch?',
  detail: 'Fixes the matchmaking crash.',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
  intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
}

const ROUTES = validateRoutes(
  {
    routes: [
      {
        name: 'release-gate',
        match: { intent: 'approval', agentId: 'build-*' },
        destinations: [{ platform: 'discord', channel: CHANNEL, mention: [`role:${RELEASERS}`] }],
        responders: { discord: { roles: [RELEASERS] } },
        escalation: [
          {
            after: '15m',
            mention: [`role:${PAGER}`],
            destinations: [{ platform: 'discord', channel: ESCALATION_CHANNEL }],
          },
        ],
      },
    ],
  },
  PLATFORMS,
)
const NOT_ALLOWED = 'You are not one of the people who may answer this question.'
const MINUTE = 60_000

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A bridge on the fake Discord with a second guild channel for escalation, on a manual clock. */
async function start() {
  let t = 1_700_000_000_000
  const clock = { now: () => t, advance: (ms: number) => (t += ms) }
  const fake = await new FakeDiscord({ channelId: CHANNEL }).start()
  cleanups.push(() => fake.close())
  fake.addChannel(ESCALATION_CHANNEL)
  const adapter = new DiscordAdapter({ token: fake.token, apiUrl: fake.apiUrl })
  const { store, service, chat, close } = await startAnswerer({
    adapters: [adapter],
    router: routesRouter(ROUTES, [{ platform: 'discord', channel: CHANNEL }], PLATFORMS),
    now: clock.now,
  })
  cleanups.push(close)

  /** The call's messages in the fake, in posting order, across every channel. */
  const messages = (callId: string): StoredMessage[] =>
    [...fake.messages.values()].filter((m) => m.history.some((body) => componentsOf(body, callId).length > 0))

  /** `user` presses the `verb` button on the first of the call's messages in `channel`. */
  const press = async (callId: string, verb: ComponentRef['verb'], user: FakeUser, channel = CHANNEL) => {
    for (const message of messages(callId).filter((m) => m.channel_id === channel)) {
      const found = componentsOf(message, callId).find((c) => c.ref.verb === verb)
      if (!found) continue
      const record = await fake.click(message.id, found.customId, user)
      await waitResponded(record)
      return record
    }
    throw new Error(`no live ${verb} button on ${callId} in ${channel}`)
  }
  const live = (callId: string) => messages(callId).some((m) => componentsOf(m, callId).length > 0)
  return { fake, clock, store, service, adapter, chat, messages, press, live }
}

function componentsOf(message: { components?: unknown }, callId: string) {
  const rows = (message.components as { components?: Record<string, unknown>[] }[] | undefined) ?? []
  return rows.flatMap((row) =>
    (row.components ?? []).flatMap((c) => {
      const ref = decodeComponentId(String(c.custom_id))
      return ref?.callId === callId ? [{ customId: String(c.custom_id), ref }] : []
    }),
  )
}

describe('Discord routing by role', () => {
  it('mentions exactly the route’s role; a member without it is refused privately; a member with it approves', async () => {
    const d = await start()
    const asking = d.service.ask({
      questions: [release],
      agent: d.service.agents.register('build-bot'),
      wait: { callId: 'rel' },
    })
    asking.catch(() => {})
    const [card] = await until(() => {
      const m = d.messages('rel')
      return m.length === 1 ? m : undefined
    }, 'card posted')
    expect(card?.channel_id).toBe(CHANNEL)
    expect(card?.content).toContain(`<@&${RELEASERS}>`)
    expect(card?.allowed_mentions).toEqual({ parse: [], roles: [RELEASERS] })

    const edits = card?.history.length
    const refused = await d.press('rel', 'approve', alice)
    expect(refused.response).toMatchObject({ type: 4, data: { flags: 64, content: NOT_ALLOWED } })
    expect(d.fake.notices.get(alice.id)).toEqual([NOT_ALLOWED])
    expect((await d.chat.host.getCard(refFor('rel', 'build-bot')))?.status).toBe('open')
    await d.chat.refresh(await keyFor(d.service.store, 'rel'))
    expect(d.messages('rel')[0]?.history.length).toBe(edits)

    await d.press('rel', 'approve', rita)
    expect(await asking).toEqual({ answers: [{ id: 'release', selected: ['Approve'] }] })
    await until(() => !d.live('rel'), 'buttons removed')
    const [done] = d.messages('rel')
    expect(JSON.stringify([done?.content, done?.embeds])).toMatch(/by Rita/)
    // Edits keep the mention allowance to the one role (an edit re-renders the header).
    expect(d.messages('rel')[0]?.allowed_mentions).toEqual({ parse: [], roles: [RELEASERS] })
    expect(d.fake.rejected).toEqual([])
  })

  it('escalation mirrors the card into a second channel with the pager role; one approval completes both; the audit export matches', async () => {
    const d = await start()
    const asking = d.service.ask({
      questions: [release],
      agent: d.service.agents.register('build-bot'),
      wait: { callId: 'esc' },
    })
    asking.catch(() => {})
    await until(() => d.messages('esc').length === 1, 'card posted')

    d.clock.advance(14 * MINUTE)
    await d.chat.tick()
    expect(d.messages('esc')).toHaveLength(1)
    d.clock.advance(MINUTE)
    await d.chat.tick()
    await d.chat.tick()
    const copies = d.messages('esc')
    expect(copies.map((m) => m.channel_id)).toEqual([CHANNEL, ESCALATION_CHANNEL])
    const mirrored = copies[1]
    expect(mirrored?.content).toContain(`<@&${PAGER}>`)
    expect(mirrored?.content).not.toContain(`<@&${RELEASERS}>`)
    expect(mirrored?.allowed_mentions).toEqual({ parse: [], roles: [PAGER] })
    expect(componentsOf(mirrored ?? {}, 'esc').map((c) => c.ref.verb)).toEqual(
      componentsOf(copies[0] ?? {}, 'esc').map((c) => c.ref.verb),
    )

    // The pager role is mentioned, but only the releasers may answer.
    const refused = await d.press('esc', 'approve', pete, ESCALATION_CHANNEL)
    expect(refused.response).toMatchObject({ type: 4, data: { flags: 64, content: NOT_ALLOWED } })
    await d.press('esc', 'approve', rita, ESCALATION_CHANNEL)
    expect(await asking).toEqual({ answers: [{ id: 'release', selected: ['Approve'] }] })
    await until(() => !d.live('esc'), 'no live buttons on either copy')
    expect(d.fake.rejected).toEqual([])

    const audit = await d.store.listAudit({ callId: 'esc' })
    expect(
      audit.map((e) => ({
        kind: e.kind,
        ...(e.actor ? { actor: e.actor.userId } : {}),
        ...(e.refused ? { refused: e.code } : {}),
      })),
    ).toEqual([
      { kind: 'asked' },
      { kind: 'escalated' },
      { kind: 'interaction', actor: pete.id, refused: 'not-allowed' },
      { kind: 'interaction', actor: rita.id },
      { kind: 'completed', actor: rita.id },
    ])
    expect(audit.find((e) => e.kind === 'escalated')?.detail).toEqual({ tier: 1, after: 15 * MINUTE })
    expect(audit.filter((e) => e.kind === 'interaction').every((e) => e.platform === 'discord')).toBe(true)
  })
})
