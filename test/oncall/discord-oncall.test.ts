/**
 * On call in Discord, which has no e-mail look-up: the routes file's `people` map ties the
 * PagerDuty user's address to a Discord user id. Real discord.js Client, the fake Discord, the
 * fake PagerDuty.
 */
import { afterEach, expect, it } from 'vitest'
import { DiscordAdapter } from '../../adapters/discord/index.js'
import { PLATFORMS } from '../../adapters/platforms.js'
import { decodeComponentId } from '../../src/card/codec.js'
import { OnCallLookup } from '../../src/oncall/lookup.js'
import { PagerDutyClient } from '../../src/oncall/pagerduty.js'
import { People } from '../../src/routing/people.js'
import { routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { waitResponded } from '../discord/rig.js'
import { FakeDiscord, type FakeUser, type StoredMessage } from '../fakes/discord/server.js'
import { FakePagerDuty } from '../fakes/pagerduty/server.js'
import { startAnswerer } from '../helpers/answerer.js'
import { deployApproval } from '../helpers/routing.js'
import { until } from '../helpers/service.js'

const CHANNEL = '110000000000000003'
const dana: FakeUser = { id: '210000000000000007', username: 'dana', global_name: 'Dana' }
const eve: FakeUser = { id: '210000000000000008', username: 'eve', global_name: 'Eve' }
const NOT_ALLOWED = 'You are not one of the people who may answer this question.'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

it('mentions the on-call person through the people map, pings only them, and only they may answer', async () => {
  const pd = await FakePagerDuty.start()
  cleanups.push(() => pd.close())
  pd.users.set('PDANA', { id: 'PDANA', name: 'Dana Ross', email: 'dana@example.com' })
  pd.schedules.set('PSCHED1', 'Primary')
  pd.shifts = [{ user: 'PDANA', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1' }]
  const routes = validateRoutes(
    {
      people: { 'dana@example.com': { discord: dana.id } },
      routes: [
        {
          name: 'oncall',
          destinations: [{ platform: 'discord', channel: CHANNEL }],
          oncall: { pagerduty: { schedule: 'PSCHED1' } },
        },
      ],
    },
    PLATFORMS,
  )
  const fake = await new FakeDiscord({ channelId: CHANNEL }).start()
  cleanups.push(() => fake.close())
  const { service, close } = await startAnswerer({
    adapters: [new DiscordAdapter({ token: fake.token, apiUrl: fake.apiUrl })],
    router: routesRouter(routes, [], PLATFORMS),
    people: new People(routes.people),
    oncall: new OnCallLookup({ source: new PagerDutyClient({ token: pd.token, apiUrl: pd.url }) }),
  })
  cleanups.push(close)
  const asking = service.ask({ questions: [deployApproval], wait: { callId: 'dc' } })
  asking.catch(() => {})
  const card = await until(
    () => [...fake.messages.values()].find((m) => JSON.stringify(m.components ?? []).includes('dc')),
    'card posted',
  )
  expect(card.content).toContain(`<@${dana.id}>`)
  // Escaped as Markdown: a name from PagerDuty cannot format or ping.
  expect(card.content).toContain('On call \\(PagerDuty\\): Dana Ross')
  expect(card.allowed_mentions).toEqual({ parse: [], users: [dana.id] })

  const press = async (message: StoredMessage, user: FakeUser) => {
    const rows = (message.components as { components?: Record<string, unknown>[] }[] | undefined) ?? []
    const id = rows
      .flatMap((r) => r.components ?? [])
      .map((c) => String(c.custom_id))
      .find((c) => decodeComponentId(c)?.verb === 'approve')
    if (!id) throw new Error('no approve button')
    const record = await fake.click(message.id, id, user)
    await waitResponded(record)
    return record
  }
  const refused = await press(card, eve)
  expect(refused.response).toMatchObject({ type: 4, data: { flags: 64, content: NOT_ALLOWED } })
  await press(card, dana)
  expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
})
