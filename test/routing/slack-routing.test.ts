/**
 * Routing through the real Slack adapter (real Bolt App over Socket Mode) and the fake Slack:
 * the deployApproval gate (scenario 2) and a night on call (scenario 6). A routes file validated like
 * ASKBRIDGE_ROUTES, the real ChatAnswerer and service on SQLite, and a clock the test controls.
 * People only use what is rendered on the fake's messages.
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { SlackAdapter } from '../../adapters/slack/index.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import { type ComponentRef, decodeComponentId } from '../../src/card/codec.js'
import { routesRouter } from '../../src/routing/routes.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import type { Store } from '../../src/store/types.js'
import { FakeSlack, type FakeUser, type StoredMessage } from '../fakes/slack/server.js'
import { deployApproval, manualClock, onCallRoutes } from '../helpers/routing.js'
import { keyFor, refFor, tempDir, until } from '../helpers/service.js'
import { blocksText } from '../slack/rig.js'

const lead: FakeUser = { id: 'U0LEAD', name: 'Lead' }
const ona: FakeUser = { id: 'U0ONA', name: 'Ona' }
const otto: FakeUser = { id: 'U0OTTO', name: 'Otto' }
const stranger: FakeUser = { id: 'U0STRANGER', name: 'Stranger' }
const newbie: FakeUser = { id: 'U0NEWBIE', name: 'Newbie' }

const DEFAULTS = [{ platform: 'slack' as const, channel: 'C0DEFAULT' }]
const NOT_ALLOWED = 'You are not one of the people who may answer this question.'
const MINUTE = 60_000

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

type Clock = ReturnType<typeof manualClock>

async function fakeSlack(): Promise<FakeSlack> {
  const fake = await FakeSlack.start({ pingIntervalMs: 1000, rateLimits: false })
  fake.usergroups.set('S0ONCALL', [ona.id, otto.id])
  fake.usergroups.set('S0SECONDARY', ['U0SECOND'])
  cleanups.push(() => fake.close())
  return fake
}

/**
 * One run of the bridge: service, chat answerer and a new SlackAdapter (Socket Mode) on `store`.
 * `stop()` shuts down the way `askbridge serve` does for a restart: calls stay open in the store.
 */
async function startBridge(fake: FakeSlack, store: Store, c: Clock, options: { groupTtlMs?: number } = {}) {
  const service = new UserQuestionService({ store, now: c.now })
  const adapter = new SlackAdapter({
    botToken: fake.options.botToken,
    appToken: fake.options.appToken,
    apiUrl: fake.apiUrl,
    rateLimit: { perChannelIntervalMs: 0, pace: false },
    now: c.now,
  })
  const chat = new ChatAnswerer({
    service,
    adapters: [adapter],
    router: routesRouter(onCallRoutes, DEFAULTS, PLATFORMS),
    now: c.now,
    escalationIntervalMs: 0,
    ...(options.groupTtlMs === undefined ? {} : { groupTtlMs: options.groupTtlMs }),
  })
  service.use(chat.answerer)
  await chat.start()
  await fake.waitForSocket()
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await service.close({ keepCalls: true })
    await chat.stop()
    await store.close()
    // The next run must not receive clicks over this run's closing socket.
    await until(() => !fake.socketConnected, 'the old Socket Mode connection closed')
  }
  cleanups.push(stop)
  /** Every pending interaction handled and every card update sent. */
  const settle = async (callId: string) => {
    await adapter.idle()
    await chat.refresh(await keyFor(store, callId))
    await adapter.idle()
  }
  return { service, adapter, chat, store, stop, settle }
}

/** The live controls on a call's messages in the fake, with what each decodes to. */
function controls(fake: FakeSlack, callId: string) {
  const out: { message: StoredMessage; actionId: string; ref: ComponentRef }[] = []
  for (const message of fake.messagesOf(callId)) {
    for (const block of message.blocks) {
      if (block.type !== 'actions' || !Array.isArray(block.elements)) continue
      for (const el of block.elements as Record<string, unknown>[]) {
        const ref = decodeComponentId(String(el.action_id))
        if (ref?.callId === callId) out.push({ message, actionId: String(el.action_id), ref })
      }
    }
  }
  return out
}

/** `person` clicks the `verb` button, on the first message that `where` accepts. */
async function click(
  fake: FakeSlack,
  callId: string,
  person: FakeUser,
  verb: ComponentRef['verb'],
  where: (m: StoredMessage) => boolean = () => true,
) {
  const found = controls(fake, callId).find((x) => x.ref.verb === verb && where(x.message))
  if (!found) throw new Error(`no live ${verb} button on ${callId}`)
  const delivery = await fake.deliver(fake.actionPayload(person, found.message, found.actionId))
  if (delivery.timedOut) throw new Error('the adapter did not acknowledge within 3 seconds')
}

/** Wait for the n-th private notice to `person` and return it. */
const notice = (fake: FakeSlack, person: FakeUser, n: number) =>
  until(() => fake.noticesFor(person.id)[n - 1], `notice ${n} to ${person.id}`)

const raw = (m: StoredMessage | undefined) => JSON.stringify(m?.blocks ?? [])
/** The mention line a destination puts above the card, if any. */
const mentionLine = (m: StoredMessage | undefined) => {
  const text = (m?.blocks[0]?.text as { text?: string } | undefined)?.text
  return text?.startsWith('<!') ? text : undefined
}
/** An ask whose rejection (a failed test's cleanup closes the service) is not unhandled. */
function asked<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}
const shown = (fake: FakeSlack, callId: string) => fake.messagesOf(callId).map((m) => blocksText(m.blocks))

describe('Slack routing: the deployApproval gate', () => {
  it('goes to the on-call channel with the group mention; a non-member is refused privately, changes nothing, and is audited', async () => {
    const fake = await fakeSlack()
    const c = manualClock(1_700_000_000_000)
    const b = await startBridge(fake, openStore('memory'), c)
    const agent = b.service.agents.register('deploy-api')
    void b.service.ask({ questions: [deployApproval], agent, wait: { callId: 'gate' } }).catch(() => {})
    const [card] = await until(() => {
      const m = fake.messagesOf('gate')
      return m.length === 1 ? m : undefined
    }, 'card posted')
    expect(card?.channel).toBe('C0123ONCALL')
    expect(mentionLine(card)).toBe('<!subteam^S0ONCALL>')
    expect(fake.mentions).toContain('!subteam^S0ONCALL')
    expect(blocksText(card?.blocks ?? [])).toMatch(/Answerable by .*@group-S0ONCALL/)

    await b.settle('gate')
    const updatesBefore = fake.calls.filter((x) => x.method === 'chat.update').length
    const historyBefore = card?.history.length
    await click(fake, 'gate', stranger, 'approve')
    expect(await notice(fake, stranger, 1)).toBe(NOT_ALLOWED)
    expect(fake.ephemerals.find((e) => e.user === stranger.id)?.channel).toBe('C0123ONCALL')
    await b.settle('gate')
    expect(fake.calls.filter((x) => x.method === 'chat.update').length).toBe(updatesBefore)
    expect(fake.messagesOf('gate')[0]?.history.length).toBe(historyBefore)
    expect((await b.chat.host.getCard(refFor('gate', 'deploy-api')))?.approvals).toEqual([])
    expect(controls(fake, 'gate').map((x) => x.ref.verb)).toContain('approve')
    const refused = (await b.store.listAudit({ callId: 'gate' })).filter((e) => e.refused)
    expect(refused).toEqual([
      expect.objectContaining({
        kind: 'interaction',
        platform: 'slack',
        actor: expect.objectContaining({ platform: 'slack', userId: stranger.id }),
        refused: true,
        code: 'not-allowed',
      }),
    ])

    // Another agent's question does not match the route: the default channel, no mention.
    void b.service
      .ask({
        questions: [deployApproval],
        agent: b.service.agents.register('build-bot'),
        wait: { callId: 'other' },
      })
      .catch(() => {})
    const [other] = await until(() => {
      const m = fake.messagesOf('other')
      return m.length === 1 ? m : undefined
    }, 'default route posted')
    expect(other?.channel).toBe('C0DEFAULT')
    expect(mentionLine(other)).toBeUndefined()
    expect(raw(other)).not.toContain('Answerable by')
  })

  it('a change of group membership in Slack counts only after the answerer’s cache expires', async () => {
    const fake = await fakeSlack()
    const c = manualClock(1_700_000_000_000)
    // The answerer caches 2 minutes; the adapter's own cache (60 s) runs on the same clock.
    const b = await startBridge(fake, openStore('memory'), c, { groupTtlMs: 2 * MINUTE })
    const agent = b.service.agents.register('deploy-api')
    void b.service.ask({ questions: [deployApproval], agent, wait: { callId: 'grp' } }).catch(() => {})
    await until(() => fake.messagesOf('grp').length === 1, 'card posted')
    const lookups = () => fake.calls.filter((x) => x.method === 'usergroups.users.list' && x.ok).length

    await click(fake, 'grp', newbie, 'approve')
    expect(await notice(fake, newbie, 1)).toBe(NOT_ALLOWED)
    expect(lookups()).toBe(1)

    fake.usergroups.set('S0ONCALL', [ona.id, otto.id, newbie.id])
    c.advance(MINUTE + 1_000)
    await click(fake, 'grp', newbie, 'approve')
    expect(await notice(fake, newbie, 2)).toBe(NOT_ALLOWED) // still the cached membership
    expect(lookups()).toBe(1)

    c.advance(MINUTE)
    await click(fake, 'grp', newbie, 'approve')
    expect(await notice(fake, newbie, 3)).toBe('Approval recorded: 1 of 2.')
    expect(lookups()).toBe(2)
    await until(() => shown(fake, 'grp')[0]?.includes('1 of 2 approvals: @U0NEWBIE'), 'progress shown')

    // Leaving the group works the same way: refused once the cache has expired.
    fake.usergroups.set('S0ONCALL', [ona.id])
    c.advance(2 * MINUTE + 1_000)
    await click(fake, 'grp', otto, 'approve')
    expect(await notice(fake, otto, 1)).toBe(NOT_ALLOWED)
    expect((await b.chat.host.getCard(refFor('grp', 'deploy-api')))?.approvals.map((p) => p.userId)).toEqual([
      newbie.id,
    ])
  })

  it('quorum 2 of 3: the requester cannot approve, a repeated approver counts once, the card shows progress', async () => {
    const fake = await fakeSlack()
    const b = await startBridge(fake, openStore('memory'), manualClock(1_700_000_000_000))
    const agent = b.service.agents.register('deploy-api', {
      requester: { platform: 'slack', userId: ona.id },
    })
    const asking = asked(b.service.ask({ questions: [deployApproval], agent, wait: { callId: 'q2' } }))
    await until(() => fake.messagesOf('q2').length === 1, 'card posted')

    // Ona is in the on-call group, but she asked for this deploy.
    await click(fake, 'q2', ona, 'approve')
    expect(await notice(fake, ona, 1)).toBe(NOT_ALLOWED)
    expect((await b.chat.host.getCard(refFor('q2', 'deploy-api')))?.approvals).toEqual([])

    await click(fake, 'q2', otto, 'approve')
    expect(await notice(fake, otto, 1)).toBe('Approval recorded: 1 of 2.')
    await until(() => shown(fake, 'q2')[0]?.includes('1 of 2 approvals: @U0OTTO'), 'progress shown')
    await click(fake, 'q2', otto, 'approve')
    expect(await notice(fake, otto, 2)).toMatch(/already approved/i)
    await b.settle('q2')
    expect((await b.chat.host.getCard(refFor('q2', 'deploy-api')))?.approvals.map((p) => p.userId)).toEqual([
      otto.id,
    ])
    expect(shown(fake, 'q2')[0]).toContain('1 of 2 approvals: @U0OTTO')

    await click(fake, 'q2', lead, 'approve')
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    await until(() => fake.liveActionIds('q2').length === 0, 'buttons gone')
    await until(() => shown(fake, 'q2')[0]?.includes('Approved by @U0OTTO, @U0LEAD'), 'approvers shown')
    const audit = await b.store.listAudit({ callId: 'q2' })
    expect(audit.filter((e) => e.refused).map((e) => [e.actor?.userId, e.code])).toEqual([
      [ona.id, 'not-allowed'],
      [otto.id, 'already-approved'],
    ])
  })
})

describe('Slack routing: a night on call', () => {
  it('tiers fire on the clock and mirror the card; the first answer anywhere completes every copy; the audit export tells the same story', async () => {
    const fake = await fakeSlack()
    const c = manualClock(1_700_000_000_000)
    const b = await startBridge(fake, openStore('memory'), c)
    const agent = b.service.agents.register('deploy-api')
    const asking = asked(b.service.ask({ questions: [deployApproval], agent, wait: { callId: 'night' } }))
    await until(() => fake.messagesOf('night').length === 1, 'card posted')

    c.advance(9 * MINUTE)
    await b.chat.tick()
    expect(fake.messagesOf('night')).toHaveLength(1)
    c.advance(MINUTE)
    await b.chat.tick()
    await b.chat.tick() // a second tick does not repeat the tier
    const afterTier1 = fake.messagesOf('night')
    expect(afterTier1).toHaveLength(2)
    expect(afterTier1[1]?.channel).toBe('C0123ONCALL')
    expect(mentionLine(afterTier1[0])).toBe('<!subteam^S0ONCALL>')
    expect(mentionLine(afterTier1[1])).toBe('<!subteam^S0SECONDARY>')
    expect(
      controls(fake, 'night').filter((x) => x.ref.verb === 'approve' && x.ref.q === undefined),
    ).toHaveLength(2)

    c.advance(19 * MINUTE)
    await b.chat.tick()
    expect(fake.messagesOf('night')).toHaveLength(2)
    c.advance(MINUTE)
    await b.chat.tick()
    const all = fake.messagesOf('night')
    expect(all.map((m) => m.channel)).toEqual(['C0123ONCALL', 'C0123ONCALL', 'C0MANAGERS'])
    expect(mentionLine(all[2])).toBeUndefined()
    expect(new Set(fake.mentions.filter((m) => m.startsWith('!subteam^')))).toEqual(
      new Set(['!subteam^S0ONCALL', '!subteam^S0SECONDARY']),
    )

    // On the managers' copy: a stranger is refused, Ona approves; every copy shows the progress.
    const managers = (m: StoredMessage) => m.channel === 'C0MANAGERS'
    await click(fake, 'night', stranger, 'approve', managers)
    expect(await notice(fake, stranger, 1)).toBe(NOT_ALLOWED)
    await click(fake, 'night', ona, 'approve', managers)
    expect(await notice(fake, ona, 1)).toBe('Approval recorded: 1 of 2.')
    await until(
      () => shown(fake, 'night').every((t) => t.includes('1 of 2 approvals: @U0ONA')),
      'progress on every copy',
    )
    // The lead completes it from the secondary's copy.
    const secondary = (m: StoredMessage) => m.ts === all[1]?.ts
    await click(fake, 'night', lead, 'approve', secondary)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    await until(() => fake.liveActionIds('night').length === 0, 'no live buttons on any copy')
    await b.settle('night')
    expect(fake.messagesOf('night')).toHaveLength(3)
    for (const text of shown(fake, 'night')) expect(text).toContain('Approved by @U0ONA, @U0LEAD')

    // The audit export, in order, is what happened above.
    const audit = await b.store.listAudit({ callId: 'night' })
    expect(
      audit.map((e) => ({
        kind: e.kind,
        ...(e.actor ? { actor: e.actor.userId } : {}),
        ...(e.refused ? { refused: e.code } : {}),
        ...(e.kind === 'escalated' ? { tier: (e.detail as { tier: number }).tier } : {}),
      })),
    ).toEqual([
      { kind: 'asked' },
      { kind: 'escalated', tier: 1 },
      { kind: 'escalated', tier: 2 },
      { kind: 'interaction', actor: stranger.id, refused: 'not-allowed' },
      { kind: 'interaction', actor: ona.id },
      { kind: 'interaction', actor: lead.id },
      { kind: 'completed', actor: lead.id },
    ])
    expect(audit.find((e) => e.kind === 'asked')?.detail).toEqual({ route: 'prod-approvals' })
    expect(audit.filter((e) => e.kind === 'interaction').map((e) => e.detail)).toEqual([
      { type: 'approve' },
      { type: 'approve' },
      { type: 'approve' },
    ])
    expect(audit.find((e) => e.kind === 'completed')?.detail).toEqual({
      answers: [{ id: 'deploy', selected: ['Approve'] }],
    })
  })

  it('restarts at 03:05 and 03:15 neither lose nor repeat a tier, and the card posted before them still works', async () => {
    const { dir, cleanup } = tempDir()
    cleanups.push(cleanup)
    const file = join(dir, 'askbridge.db')
    const fake = await fakeSlack()
    const c = manualClock(1_700_000_000_000)

    const first = await startBridge(fake, openStore(file), c)
    const ask = (b: typeof first) =>
      b.service.ask({
        questions: [deployApproval],
        agent: b.service.agents.register('deploy-api'),
        wait: { callId: 'night' },
      })
    void ask(first).catch(() => {})
    await until(() => fake.messagesOf('night').length === 1, 'card posted')
    const original = fake.messagesOf('night')[0]
    c.advance(5 * MINUTE)
    await first.chat.tick()
    await first.stop()

    // 03:05: a new process, a new Bolt app, the same SQLite file and the same Slack.
    const second = await startBridge(fake, openStore(file), c)
    expect(fake.messagesOf('night')).toHaveLength(1)
    c.advance(5 * MINUTE)
    await second.chat.tick()
    await second.chat.tick()
    expect(fake.messagesOf('night')).toHaveLength(2)
    c.advance(5 * MINUTE)
    await second.stop()

    // 03:15: tier 1 already fired before this restart, so it does not fire again.
    const third = await startBridge(fake, openStore(file), c)
    await third.chat.tick()
    expect(fake.messagesOf('night')).toHaveLength(2)
    c.advance(15 * MINUTE)
    await third.chat.tick()
    await third.chat.tick()
    expect(fake.messagesOf('night').map((m) => m.channel)).toEqual([
      'C0123ONCALL',
      'C0123ONCALL',
      'C0MANAGERS',
    ])
    const escalated = (await third.store.listAudit({ callId: 'night' })).filter((e) => e.kind === 'escalated')
    expect(escalated.map((e) => (e.detail as { tier: number }).tier)).toEqual([1, 2])

    // The blocking ask re-attaches; the card the first process posted takes both approvals.
    const again = asked(ask(third))
    const onOriginal = (m: StoredMessage) => m.ts === original?.ts
    await click(fake, 'night', otto, 'approve', onOriginal)
    expect(await notice(fake, otto, 1)).toBe('Approval recorded: 1 of 2.')
    await click(fake, 'night', lead, 'approve', onOriginal)
    expect(await again).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    await until(() => fake.liveActionIds('night').length === 0, 'every copy finished')
    expect(fake.messagesOf('night')).toHaveLength(3)
  })
})
