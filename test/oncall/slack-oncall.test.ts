/**
 * On-call routing through the real Slack adapter (Bolt, Socket Mode) and the fake Slack, with
 * on-call people read from the fake PagerDuty: the person on call now is mentioned (found by
 * e-mail with users.lookupByEmail) and is the only one allowed, beside the route's own
 * responders; a rota change between two asks is followed; escalation follows the policy's
 * levels; PagerDuty down uses the last known on-call, else the route's fallback, and says so.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { SlackAdapter } from '../../adapters/slack/index.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import { type ComponentRef, decodeComponentId } from '../../src/card/codec.js'
import { OnCallLookup } from '../../src/oncall/lookup.js'
import { PagerDutyClient } from '../../src/oncall/pagerduty.js'
import { People } from '../../src/routing/people.js'
import { routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import { FakePagerDuty } from '../fakes/pagerduty/server.js'
import { FakeSlack, type FakeUser, type StoredMessage } from '../fakes/slack/server.js'
import { deployApproval, manualClock } from '../helpers/routing.js'
import { until } from '../helpers/service.js'
import { blocksText } from '../slack/rig.js'

const alice: FakeUser = { id: 'U0ALICE', name: 'Alice' }
const bob: FakeUser = { id: 'U0BOB', name: 'Bob' }
const carol: FakeUser = { id: 'U0CAROL', name: 'Carol' }
const lead: FakeUser = { id: 'U0LEAD', name: 'Lead' }
const NOT_ALLOWED = 'You are not one of the people who may answer this question.'
const MINUTE = 60_000

const routes = validateRoutes(
  {
    // Carol's Slack account is in the people map; Alice and Bob are found by e-mail.
    people: { 'carol@example.com': { slack: carol.id } },
    routes: [
      {
        name: 'primary',
        match: { route: 'primary' },
        destinations: [{ platform: 'slack', channel: 'C0ONCALL' }],
        responders: { slack: { users: [lead.id] } },
        oncall: { pagerduty: { schedule: 'PSCHED1' }, fallback: ['subteam:S0LEADS'] },
      },
      {
        name: 'ladder',
        match: { route: 'ladder' },
        destinations: [{ platform: 'slack', channel: 'C0ONCALL' }],
        oncall: { pagerduty: { escalationPolicy: 'PPOLICY' } },
        escalation: [{ after: '10m', oncallLevel: 2 }],
      },
    ],
  },
  PLATFORMS,
)

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function start() {
  const c = manualClock(1_800_000_000_000)
  const slack = await FakeSlack.start({ pingIntervalMs: 1000, rateLimits: false })
  cleanups.push(() => slack.close())
  slack.users.set(alice.id, { name: 'Alice', email: 'alice@example.com' })
  slack.users.set(bob.id, { name: 'Bob', email: 'Bob@Example.com' })
  slack.usergroups.set('S0LEADS', [lead.id])
  const pd = await FakePagerDuty.start({ now: c.now })
  cleanups.push(() => pd.close())
  pd.users.set('PALICE', { id: 'PALICE', name: 'Alice Smith', email: 'alice@example.com' })
  pd.users.set('PBOB', { id: 'PBOB', name: 'Bob Jones', email: 'bob@example.com' })
  pd.users.set('PCAROL', { id: 'PCAROL', name: 'Carol White', email: 'carol@example.com' })
  pd.schedules.set('PSCHED1', 'Primary')
  pd.policies.set('PPOLICY', 'Deploys')

  const store = openStore('memory')
  const service = new UserQuestionService({ store, now: c.now })
  const adapter = new SlackAdapter({
    botToken: slack.options.botToken,
    appToken: slack.options.appToken,
    apiUrl: slack.apiUrl,
    rateLimit: { perChannelIntervalMs: 0, pace: false },
    now: c.now,
  })
  const chat = new ChatAnswerer({
    service,
    adapters: [adapter],
    router: routesRouter(routes, [{ platform: 'slack', channel: 'C0DEFAULT' }], PLATFORMS),
    people: new People(routes.people),
    oncall: new OnCallLookup({
      source: new PagerDutyClient({ token: pd.token, apiUrl: pd.url }),
      now: c.now,
      ttlMs: 5 * MINUTE,
    }),
    now: c.now,
    escalationIntervalMs: 0,
  })
  service.use(chat.answerer)
  await chat.start()
  await slack.waitForSocket()
  cleanups.push(async () => {
    await service.close({ keepCalls: true })
    await chat.stop()
    await store.close()
  })
  const ask = (callId: string, route: string) => {
    const asking = service.ask({
      questions: [deployApproval],
      agent: service.agents.register('deploy-api'),
      wait: { callId },
      route,
    })
    asking.catch(() => {})
    return asking
  }
  return { c, slack, pd, service, chat, adapter, ask }
}

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

async function approve(fake: FakeSlack, callId: string, person: FakeUser) {
  const found = controls(fake, callId).find((x) => x.ref.verb === 'approve')
  if (!found) throw new Error(`no live approve button on ${callId}`)
  const delivery = await fake.deliver(fake.actionPayload(person, found.message, found.actionId))
  if (delivery.timedOut) throw new Error('the adapter did not acknowledge within 3 seconds')
}

const notice = (fake: FakeSlack, person: FakeUser, n: number) =>
  until(() => fake.noticesFor(person.id)[n - 1], `notice ${n} to ${person.id}`)
const mentionLine = (m: StoredMessage | undefined) =>
  (m?.blocks[0]?.text as { text?: string } | undefined)?.text
const posted = (fake: FakeSlack, callId: string, n = 1) =>
  until(() => {
    const m = fake.messagesOf(callId)
    return m.length === n ? m : undefined
  }, `${n} message(s) for ${callId}`)

describe('on call from PagerDuty, in Slack', () => {
  it('mentions the person on call (found by e-mail) and lets only them and the route’s responders answer', async () => {
    const { slack, pd, ask, c } = await start()
    pd.shifts = [
      { user: 'PALICE', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1', start: c.now() - MINUTE },
    ]
    const asking = ask('gate', 'primary')
    const [card] = await posted(slack, 'gate')
    expect(card?.channel).toBe('C0ONCALL')
    expect(mentionLine(card)).toBe('<@U0ALICE>')
    expect(
      slack.calls.filter((x) => x.method === 'users.lookupByEmail').map((x) => [x.args.email, x.ok]),
    ).toEqual([['alice@example.com', true]])
    expect(blocksText(card?.blocks ?? [])).toContain('On call (PagerDuty): Alice Smith')
    const asked = pd.requests.find((r) => r.path === '/oncalls')
    expect(asked?.query.getAll('schedule_ids[]')).toEqual(['PSCHED1'])
    expect(asked?.query.getAll('include[]')).toEqual(['users'])

    await approve(slack, 'gate', bob)
    expect(await notice(slack, bob, 1)).toBe(NOT_ALLOWED)
    await approve(slack, 'gate', alice)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })

  it('the route’s own responders still answer beside the on-call person', async () => {
    const { slack, pd, ask } = await start()
    pd.shifts = [{ user: 'PALICE', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1' }]
    const asking = ask('lead', 'primary')
    await posted(slack, 'lead')
    await approve(slack, 'lead', lead)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })

  it('follows a rota change between two asks (the cache ends with the shift)', async () => {
    const { slack, pd, ask, c } = await start()
    const handover = c.now() + MINUTE
    pd.shifts = [
      { user: 'PALICE', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1', end: handover },
      { user: 'PCAROL', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1', start: handover },
    ]
    void ask('before', 'primary')
    expect(mentionLine((await posted(slack, 'before'))[0])).toBe('<@U0ALICE>')
    c.advance(2 * MINUTE)
    const after = ask('after', 'primary')
    const [card] = await posted(slack, 'after')
    // Carol's Slack id comes from the people map: no e-mail look-up for her.
    expect(mentionLine(card)).toBe('<@U0CAROL>')
    expect(blocksText(card?.blocks ?? [])).toContain('On call (PagerDuty): Carol White')
    expect(slack.calls.filter((x) => x.method === 'users.lookupByEmail').map((x) => x.args.email)).toEqual([
      'alice@example.com',
    ])
    await approve(slack, 'after', alice)
    expect(await notice(slack, alice, 1)).toBe(NOT_ALLOWED)
    await approve(slack, 'after', carol)
    expect(await after).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })

  it('escalates by the policy’s levels: level 2 is mentioned and may answer only once its tier is due', async () => {
    const { slack, pd, ask, c, chat } = await start()
    pd.shifts = [
      { user: 'PALICE', policy: 'PPOLICY', level: 1 },
      { user: 'PBOB', policy: 'PPOLICY', level: 2 },
    ]
    const asking = ask('ladder', 'ladder')
    const [first] = await posted(slack, 'ladder')
    expect(mentionLine(first)).toBe('<@U0ALICE>')
    await approve(slack, 'ladder', bob)
    expect(await notice(slack, bob, 1)).toBe(NOT_ALLOWED)

    c.advance(9 * MINUTE)
    await chat.tick()
    expect(slack.messagesOf('ladder')).toHaveLength(1)
    c.advance(MINUTE)
    await chat.tick()
    const [, second] = await posted(slack, 'ladder', 2)
    expect(mentionLine(second)).toBe('<@U0BOB>')
    expect(blocksText(second?.blocks ?? [])).toContain('On call level 2 (PagerDuty): Bob Jones')
    expect(
      pd.requests
        .filter((r) => r.path === '/oncalls')
        .every((r) => r.query.getAll('escalation_policy_ids[]')[0] === 'PPOLICY'),
    ).toBe(true)
    await approve(slack, 'ladder', bob)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })

  it('PagerDuty down: the last known on-call, and the card says so', async () => {
    const { slack, pd, ask, c } = await start()
    pd.shifts = [{ user: 'PALICE', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1' }]
    void ask('known', 'primary')
    await posted(slack, 'known')
    pd.down = true
    c.advance(10 * MINUTE) // past the cache
    const asking = ask('stale', 'primary')
    const [card] = await posted(slack, 'stale')
    expect(mentionLine(card)).toBe('<@U0ALICE>')
    expect(blocksText(card?.blocks ?? [])).toMatch(
      /PagerDuty unreachable: last known on call \(as of .* UTC\): Alice Smith/,
    )
    await approve(slack, 'stale', alice)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })

  it('PagerDuty down and nothing known: the route’s fallback is mentioned and allowed, and the card says so', async () => {
    const { slack, pd, ask } = await start()
    pd.down = true
    const asking = ask('fallback', 'primary')
    const [card] = await posted(slack, 'fallback')
    expect(mentionLine(card)).toBe('<!subteam^S0LEADS>')
    expect(blocksText(card?.blocks ?? [])).toContain(
      "PagerDuty unreachable: the route's fallback was called instead",
    )
    await approve(slack, 'fallback', alice)
    expect(await notice(slack, alice, 1)).toBe(NOT_ALLOWED)
    await approve(slack, 'fallback', lead)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })
})

describe('the fake Slack’s users.lookupByEmail', () => {
  it('finds a user by address, case-insensitively, and answers users_not_found otherwise', async () => {
    const { adapter, slack } = await start()
    expect(await adapter.lookupByEmail('ALICE@example.com')).toBe(alice.id)
    expect(await adapter.lookupByEmail('bob@example.com')).toBe(bob.id)
    expect(await adapter.lookupByEmail('nobody@example.com')).toBeUndefined()
    expect(slack.calls.filter((x) => x.method === 'users.lookupByEmail').map((x) => x.error ?? 'ok')).toEqual(
      ['ok', 'ok', 'users_not_found'],
    )
  })
})
