import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import type { Person } from '../../src/card/types.js'
import { routesRouter } from '../../src/routing/routes.js'
import { openStore } from '../../src/store/index.js'
import type { Store } from '../../src/store/types.js'
import { MemoryAdapter } from '../fakes/memory-adapter.js'
import { startAnswerer } from '../helpers/answerer.js'
import { deployApproval, manualClock, onCallRoutes } from '../helpers/routing.js'
import { refFor, tempDir, until } from '../helpers/service.js'

const lead: Person = { platform: 'slack', userId: 'U0LEAD', name: 'Lead' }
const oncall1: Person = { platform: 'slack', userId: 'U0ONCALL1', name: 'Ona' }
const oncall2: Person = { platform: 'slack', userId: 'U0ONCALL2', name: 'Otto' }
const stranger: Person = { platform: 'slack', userId: 'U0STRANGE', name: 'Stranger' }

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(
  options: { store?: Store; now?: () => number; groupTtlMs?: number; adapter?: MemoryAdapter } = {},
) {
  const now = options.now ?? Date.now
  const adapter = options.adapter ?? new MemoryAdapter('slack')
  if (!adapter.groups.has('S0ONCALL')) adapter.groups.set('S0ONCALL', ['U0ONCALL1', 'U0ONCALL2'])
  const { store, service, chat, close } = await startAnswerer({
    adapters: [adapter],
    router: routesRouter(onCallRoutes, [{ platform: 'slack', channel: 'C0DEFAULT' }], PLATFORMS),
    now,
    ...(options.store ? { store: options.store } : {}),
    ...(options.groupTtlMs === undefined ? {} : { groupTtlMs: options.groupTtlMs }),
  })
  cleanups.push(close)
  let n = 0
  const press = (callId: string, person: Person, type: 'approve' | 'reject') =>
    chat.host.handle({
      ...refFor(callId, 'deploy-api'),
      interaction: { id: `i${++n}`, actor: person, action: { type }, at: now() },
    })
  return { store, service, adapter, chat, press }
}

describe('allowed responders, quorum and requester exclusion', () => {
  it('an unauthorized click on an approval is refused privately, changes nothing and is audited', async () => {
    const { service, adapter, press, chat, store } = await setup()
    const agent = service.agents.register('deploy-api')
    void service.ask({ questions: [deployApproval], agent, wait: { callId: 'gate' } }).catch(() => {})
    await until(() => adapter.messagesFor('gate').length === 1, 'posted')
    const before = await chat.host.getCard(refFor('gate', 'deploy-api'))
    const outcome = await press('gate', stranger, 'approve')
    expect(outcome).toMatchObject({
      ok: false,
      message: 'You are not one of the people who may answer this question.',
    })
    expect((await chat.host.getCard(refFor('gate', 'deploy-api')))?.approvals).toEqual(before?.approvals)
    const audit = await store.listAudit({ callId: 'gate' })
    expect(audit.filter((e) => e.refused)).toEqual([
      expect.objectContaining({
        kind: 'interaction',
        refused: true,
        code: 'not-allowed',
        actor: expect.objectContaining({ userId: 'U0STRANGE' }),
      }),
    ])
  })

  it('2-of-3 quorum: a repeated approver counts once, the card shows progress, the second distinct approver completes', async () => {
    const { service, adapter, press } = await setup()
    const agent = service.agents.register('deploy-api')
    const asking = service.ask({ questions: [deployApproval], agent, wait: { callId: 'q2' } })
    await until(() => adapter.messagesFor('q2').length === 1, 'posted')
    expect(await press('q2', oncall1, 'approve')).toMatchObject({
      ok: true,
      message: 'Approval recorded: 1 of 2.',
    })
    await until(() => adapter.messagesFor('q2')[0]?.text.includes('1 of 2 approvals'), 'progress shown')
    expect(await press('q2', oncall1, 'approve')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/already approved/),
    })
    expect(await press('q2', lead, 'approve')).toMatchObject({ ok: true })
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })

  it('one reject ends it', async () => {
    const { service, adapter, press } = await setup()
    const agent = service.agents.register('deploy-api')
    const asking = service.ask({ questions: [deployApproval], agent, wait: { callId: 'rej' } })
    await until(() => adapter.messagesFor('rej').length === 1, 'posted')
    await press('rej', oncall1, 'approve')
    await press('rej', oncall2, 'reject')
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Reject'] }] })
  })

  it('the requester cannot approve their own request', async () => {
    const { service, adapter, press } = await setup()
    const agent = service.agents.register('deploy-api', {
      requester: { platform: 'slack', userId: 'U0ONCALL1' },
    })
    void service.ask({ questions: [deployApproval], agent, wait: { callId: 'self' } }).catch(() => {})
    await until(() => adapter.messagesFor('self').length === 1, 'posted')
    expect(await press('self', oncall1, 'approve')).toMatchObject({ ok: false })
    expect(await press('self', oncall2, 'approve')).toMatchObject({ ok: true })
  })

  it('a group membership change is honoured after the cache expires', async () => {
    const c = manualClock()
    const { service, adapter, press } = await setup({ now: c.now, groupTtlMs: 60_000 })
    const agent = service.agents.register('deploy-api')
    void service.ask({ questions: [deployApproval], agent, wait: { callId: 'grp' } }).catch(() => {})
    await until(() => adapter.messagesFor('grp').length === 1, 'posted')
    const newcomer: Person = { platform: 'slack', userId: 'U0NEWBIE', name: 'Newbie' }
    expect(await press('grp', newcomer, 'approve')).toMatchObject({ ok: false })
    adapter.groups.set('S0ONCALL', ['U0ONCALL1', 'U0ONCALL2', 'U0NEWBIE'])
    c.advance(30_000)
    expect(await press('grp', newcomer, 'approve')).toMatchObject({ ok: false }) // still cached
    c.advance(31_000)
    expect(await press('grp', newcomer, 'approve')).toMatchObject({
      ok: true,
      message: 'Approval recorded: 1 of 2.',
    })
    adapter.groups.set('S0ONCALL', ['U0ONCALL1'])
    c.advance(61_000)
    expect(await press('grp', oncall2, 'approve')).toMatchObject({ ok: false })
  })
})

describe('escalation', () => {
  it('fires each tier at the right time, mirroring the card; the first answer anywhere completes it everywhere', async () => {
    const c = manualClock()
    const { service, adapter, chat, press, store } = await setup({ now: c.now })
    const agent = service.agents.register('deploy-api')
    const asking = service.ask({ questions: [deployApproval], agent, wait: { callId: 'night' } })
    await until(() => adapter.messagesFor('night').length === 1, 'posted')
    c.advance(9 * 60_000)
    await chat.tick()
    expect(adapter.messagesFor('night')).toHaveLength(1)
    c.advance(60_000)
    await chat.tick()
    await chat.tick() // ticking again does not repeat a tier
    const afterTier1 = adapter.messagesFor('night')
    expect(afterTier1).toHaveLength(2)
    expect(afterTier1[1]?.destination).toEqual({
      platform: 'slack',
      channel: 'C0123ONCALL',
      mention: [{ platform: 'slack', kind: 'group', id: 'S0SECONDARY' }],
    })
    c.advance(20 * 60_000)
    await chat.tick()
    expect(adapter.messagesFor('night').map((m) => m.destination.channel)).toEqual([
      'C0123ONCALL',
      'C0123ONCALL',
      'C0MANAGERS',
    ])
    await press('night', oncall1, 'approve')
    await press('night', lead, 'approve')
    await asking
    await until(
      () => adapter.messagesFor('night').every((m) => m.components.length === 0),
      'every copy finished',
    )
    const kinds = (await store.listAudit({ callId: 'night' })).map((e) => e.kind)
    expect(kinds.filter((k) => k === 'escalated')).toHaveLength(2)
  })

  it('a restart at 03:05 neither loses nor repeats a tier, and the card already posted still works', async () => {
    const { dir, cleanup } = tempDir()
    cleanups.push(cleanup)
    const file = join(dir, 'askbridge.db')
    const c = manualClock()
    const first = await setup({ store: openStore(file), now: c.now })
    const agent = first.service.agents.register('deploy-api')
    void first.service.ask({ questions: [deployApproval], agent, wait: { callId: 'night' } }).catch(() => {})
    await until(() => first.adapter.messagesFor('night').length === 1, 'posted')
    c.advance(5 * 60_000)
    await first.chat.tick()
    await first.chat.stop()
    await first.store.close()

    // The bridge restarts (same platform messages, same SQLite file).
    const adapter = new MemoryAdapter('slack')
    for (const [id, m] of first.adapter.messages) adapter.messages.set(id, { ...m })
    const second = await setup({ store: openStore(file), now: c.now, adapter })
    c.advance(5 * 60_000)
    await second.chat.tick()
    expect(adapter.messagesFor('night')).toHaveLength(2)
    c.advance(25 * 60_000)
    await second.chat.tick()
    await second.chat.tick()
    expect(adapter.messagesFor('night')).toHaveLength(3)
    // The blocking ask re-attaches; the original card still takes the approvals.
    const again = second.service.ask({
      questions: [deployApproval],
      agent: second.service.agents.register('deploy-api'),
      wait: { callId: 'night' },
    })
    await until(() => second.service.inflight('deploy-api', 'night') !== undefined, 're-attached')
    await second.press('night', oncall1, 'approve')
    await second.press('night', oncall2, 'approve')
    expect(await again).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    expect(adapter.messagesFor('night')).toHaveLength(3)
  })
})
