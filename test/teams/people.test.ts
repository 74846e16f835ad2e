/**
 * Finding Teams accounts by e-mail: the real TeamsAdapter reads the channel's roster from the fake
 * connector (`pagedmembers`, page by page), matches e-mail or UPN without regard to case, and
 * caches it. End to end with the real ChatAnswerer and the fake PagerDuty: the person on call,
 * known only by e-mail, gets an `<at>` mention and may answer; an address Teams does not know
 * mentions nobody (as in Slack) and the route's own responders still answer.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import type { Logger } from '../../src/log.js'
import { OnCallLookup } from '../../src/oncall/lookup.js'
import { PagerDutyClient } from '../../src/oncall/pagerduty.js'
import { People } from '../../src/routing/people.js'
import { routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import { FakePagerDuty } from '../fakes/pagerduty/server.js'
import type { FakeTeamsUser } from '../fakes/teams/server.js'
import { deployApproval } from '../helpers/routing.js'
import { until } from '../helpers/service.js'
import { teamsRig } from './rig.js'

const dana: FakeTeamsUser = {
  aadObjectId: '44444444-4444-4444-8444-444444444444',
  name: 'Dana',
  email: 'Dana@Example.com',
}
const lead: FakeTeamsUser = { aadObjectId: '66666666-6666-4666-8666-666666666666', name: 'Lead' }
const eve: FakeTeamsUser = { aadObjectId: '55555555-5555-4555-8555-555555555555', name: 'Eve' }
/** The fake's channel (FakeTeams.channelId): TEAMS_CHANNEL, whose roster is searched. */
const CHANNEL = '19:askbridge-test@thread.tacv2'
const NOT_ALLOWED = 'You are not one of the people who may answer this question.'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const rosterReads = (rig: Awaited<ReturnType<typeof teamsRig>>) =>
  rig.fake.requests.filter((r) => r.path.endsWith('/pagedmembers'))

describe('Teams people by e-mail', () => {
  it('finds a member by e-mail or UPN, any case, over several roster pages, and caches the roster', async () => {
    const rig = await teamsRig({ pace: false, channels: [CHANNEL] })
    cleanups.push(() => rig.close())
    for (let i = 0; i < 600; i++) {
      const hex = i.toString(16).padStart(12, '0')
      rig.fake.addMember({
        aadObjectId: `00000000-0000-4000-8000-${hex}`,
        name: `P${i}`,
        email: `p${i}@example.com`,
      })
    }
    rig.fake.addMember(dana)
    rig.fake.addMember({ ...eve, email: 'eve@example.com', upn: 'eve.adams@corp.example.com' })
    expect(await rig.adapter.lookupByEmail('dana@example.COM')).toBe(dana.aadObjectId)
    // 602 members: two pages of 500 at most.
    expect(rosterReads(rig).map((r) => r.status)).toEqual([200, 200])
    expect(await rig.adapter.lookupByEmail('Eve.Adams@corp.example.com')).toBe(eve.aadObjectId)
    expect(await rig.adapter.lookupByEmail('eve@example.com')).toBe(eve.aadObjectId)
    expect(await rig.adapter.lookupByEmail('p599@example.com')).toBe('00000000-0000-4000-8000-000000000257')
    expect(await rig.adapter.lookupByEmail('nobody@example.com')).toBeUndefined()
    // Cached: no further roster reads.
    expect(rosterReads(rig)).toHaveLength(2)
  })

  it('a channel the bot is not in is skipped with a warning; no known channel finds nobody', async () => {
    const warnings: string[] = []
    const logger: Logger = {
      debug() {},
      info() {},
      warn: (message: string) => void warnings.push(message),
      error() {},
    }
    const none = await teamsRig({ pace: false })
    cleanups.push(() => none.close())
    none.fake.addMember(dana)
    expect(await none.adapter.lookupByEmail('dana@example.com')).toBeUndefined()
    expect(rosterReads(none)).toHaveLength(0)
    const rig = await teamsRig({ pace: false, logger, channels: ['19:elsewhere@thread.tacv2', CHANNEL] })
    cleanups.push(() => rig.close())
    rig.fake.addMember(dana)
    expect(await rig.adapter.lookupByEmail('dana@example.com')).toBe(dana.aadObjectId)
    expect(rosterReads(rig).map((r) => r.status)).toEqual([404, 200])
    expect(warnings).toContain('askbridge is not in this Teams channel: its members cannot be looked up')
  })
})

describe('Teams on call from PagerDuty', () => {
  async function start() {
    const rig = await teamsRig({ pace: false, channels: [CHANNEL] })
    cleanups.push(() => rig.close())
    rig.fake.addMember(dana)
    rig.fake.addMember(lead)
    const pd = await FakePagerDuty.start()
    cleanups.push(() => pd.close())
    pd.users.set('PDANA', { id: 'PDANA', name: 'Dana Scully', email: 'dana@example.com' })
    pd.users.set('PZED', { id: 'PZED', name: 'Zed Unknown', email: 'zed@example.com' })
    pd.schedules.set('PSCHED1', 'Primary')
    const routes = validateRoutes(
      {
        routes: [
          {
            name: 'primary',
            destinations: [{ platform: 'teams', channel: rig.fake.channelId }],
            responders: { teams: { users: [lead.aadObjectId] } },
            oncall: { pagerduty: { schedule: 'PSCHED1' } },
          },
        ],
      },
      PLATFORMS,
    )
    const store = openStore('memory')
    const service = new UserQuestionService({ store })
    const chat = new ChatAnswerer({
      service,
      adapters: [rig.adapter],
      router: routesRouter(routes, [], PLATFORMS),
      people: new People(routes.people),
      oncall: new OnCallLookup({ source: new PagerDutyClient({ token: pd.token, apiUrl: pd.url }) }),
      escalationIntervalMs: 0,
    })
    service.use(chat.answerer)
    await chat.start()
    cleanups.push(async () => {
      await service.close({ keepCalls: true })
      await chat.stop()
      await store.close()
    })
    const ask = (callId: string) =>
      service.ask({ questions: [deployApproval], agent: service.agents.ensure('deploy'), wait: { callId } })
    return { rig, pd, ask }
  }

  const entities = (rig: Awaited<ReturnType<typeof teamsRig>>, callId: string) =>
    (rig.elements(callId).find((e) => e.type === 'AdaptiveCard') as { msteams?: { entities?: unknown[] } })
      .msteams?.entities

  it('mentions the person on call, known only by e-mail, and lets them answer', async () => {
    const { rig, pd, ask } = await start()
    pd.shifts = [{ user: 'PDANA', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1' }]
    const asking = ask('oc1')
    await until(() => rig.activity('oc1'), 'posted')
    expect(entities(rig, 'oc1')).toEqual([
      { type: 'mention', text: '<at>Dana</at>', mentioned: { id: dana.aadObjectId, name: 'Dana' } },
    ])
    expect(rig.text('oc1')).toContain('<at>Dana</at>')
    // The roster gave her name too: no member look-up for the mention.
    expect(rig.fake.requests.filter((r) => r.path.includes('/members/'))).toHaveLength(0)
    await rig.execute('oc1', (verb, q) => verb === 'approve' && q === undefined, eve)
    expect(rig.fake.notices.get(eve.aadObjectId)).toEqual([NOT_ALLOWED])
    await rig.execute('oc1', (verb, q) => verb === 'approve' && q === undefined, dana)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })

  it('an address Teams does not know mentions nobody; the route’s own responders still answer', async () => {
    const { rig, pd, ask } = await start()
    pd.shifts = [{ user: 'PZED', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1' }]
    const asking = ask('oc2')
    await until(() => rig.activity('oc2'), 'posted')
    expect(rosterReads(rig).length).toBeGreaterThan(0)
    expect(entities(rig, 'oc2')).toBeUndefined()
    expect(rig.text('oc2')).not.toContain('<at>')
    expect(rig.text('oc2')).toContain('Zed Unknown')
    await rig.execute('oc2', (verb, q) => verb === 'approve' && q === undefined, dana)
    expect(rig.fake.notices.get(dana.aadObjectId)).toEqual([NOT_ALLOWED])
    await rig.execute('oc2', (verb, q) => verb === 'approve' && q === undefined, lead)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })
})
