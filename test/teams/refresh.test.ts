/**
 * Universal Actions `refresh.userIds` end to end: the real TeamsAdapter and ChatAnswerer against
 * the fake Teams. A route naming who may answer posts a card whose controls only those people
 * get, through a refresh invoke the fake sends as Teams does; anyone else sees the question and
 * its status, a refresh they forge gets them that same card, and a click from a stale client is
 * refused. A route anyone may answer keeps its buttons and has no refresh.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import { People } from '../../src/routing/people.js'
import { routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import type { FakeTeamsUser } from '../fakes/teams/server.js'
import { deployApproval } from '../helpers/routing.js'
import { until } from '../helpers/service.js'
import { teamsRig } from './rig.js'

type Json = Record<string, unknown>

const ann: FakeTeamsUser = { aadObjectId: '11111111-1111-4111-8111-111111111111', name: 'Ann' }
const eve: FakeTeamsUser = { aadObjectId: '55555555-5555-4555-8555-555555555555', name: 'Eve' }
const NOT_ALLOWED = 'You are not one of the people who may answer this question.'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function start() {
  const rig = await teamsRig({ pace: false })
  cleanups.push(() => rig.close())
  rig.fake.addMember(ann)
  rig.fake.addMember(eve)
  const channel = rig.fake.channelId
  const routes = validateRoutes(
    {
      routes: [
        {
          name: 'gated',
          match: { route: 'gated' },
          destinations: [{ platform: 'teams', channel }],
          responders: { teams: { users: [ann.aadObjectId] } },
        },
        { name: 'open', match: { route: 'open' }, destinations: [{ platform: 'teams', channel }] },
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
    escalationIntervalMs: 0,
  })
  service.use(chat.answerer)
  await chat.start()
  cleanups.push(async () => {
    await service.close({ keepCalls: true })
    await chat.stop()
    await store.close()
  })
  const ask = (callId: string, route: string) => {
    const asking = service.ask({
      questions: [deployApproval],
      agent: service.agents.ensure('deploy'),
      wait: { callId },
      route,
    })
    asking.catch(() => {})
    return asking
  }
  return { rig, ask }
}

const controls = (card: Json | undefined) =>
  JSON.stringify([card?.body, card?.actions]).includes('"Action.Execute"')

describe('Teams refresh.userIds', () => {
  it('only the people who may answer get the controls; everyone else sees the status', async () => {
    const { rig, ask } = await start()
    const asking = ask('g1', 'gated')
    await until(() => rig.activity('g1'), 'posted')
    const id = rig.activity('g1')?.id ?? ''
    const posted = rig.fake.card(id)
    expect((posted?.refresh as { userIds?: unknown })?.userIds).toEqual([`29:${ann.aadObjectId}`])
    expect(controls(posted)).toBe(false)
    expect(rig.text('g1')).toContain('Deploy 4f2c1 to production?')

    // Ann's Teams refreshes the card for her: the answer has the buttons.
    expect(controls(await rig.fake.view(id, ann))).toBe(true)
    // Eve is not listed: Teams shows her the posted card and asks nothing.
    expect(await rig.fake.view(id, eve)).toEqual(posted)
    expect(rig.fake.refreshes).toEqual([{ aadObjectId: ann.aadObjectId, activityId: id, controls: true }])

    // A refresh Eve forges gets her the card everyone sees.
    const refresh = (posted?.refresh as { action?: Json } | undefined)?.action
    if (!refresh) throw new Error('no refresh on the posted card')
    const forged = await rig.fake.deliver(
      rig.fake.invokeActivity(id, refresh.data as Json, eve, { verb: 'refresh', trigger: 'manual' }),
    )
    expect(forged.status).toBe(200)
    expect(forged.body?.type).toBe('application/vnd.microsoft.card.adaptive')
    expect(controls(forged.body?.value as Json)).toBe(false)

    // A click from a stale client is refused as before; Ann's is applied.
    await rig.execute('g1', (verb, q) => verb === 'approve' && q === undefined, eve)
    expect(rig.fake.notices.get(eve.aadObjectId)).toEqual([NOT_ALLOWED])
    const shown = await rig.execute('g1', (verb, q) => verb === 'approve' && q === undefined, ann)
    expect(shown?.type).toBe('application/vnd.microsoft.card.adaptive')
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    await until(() => /Approved by Ann/.test(rig.text('g1')), 'card finished for everyone')
    expect(rig.fake.card(id)?.refresh).toBeUndefined()
  })

  it('a route anyone may answer keeps its buttons and has no refresh', async () => {
    const { rig, ask } = await start()
    const asking = ask('o1', 'open')
    await until(() => rig.activity('o1'), 'posted')
    const posted = rig.fake.card(rig.activity('o1')?.id ?? '')
    expect(posted?.refresh).toBeUndefined()
    expect(controls(posted)).toBe(true)
    await rig.execute('o1', (verb, q) => verb === 'approve' && q === undefined, eve)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    expect(rig.fake.refreshes).toEqual([])
  })
})
