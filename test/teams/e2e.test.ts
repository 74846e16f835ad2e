/**
 * Teams end to end: the real TeamsAdapter against the fake Teams, with the real ChatAnswerer,
 * UserQuestionService and store, beside the real Slack adapter against the fake Slack. The
 * contract suite covers ask, click, Other, batch and the late reply; these cover an approval with
 * a reason typed into the card, one person approving in Teams and Slack counting once toward a
 * quorum (the people map), a person known only by the e-mail Teams reports, and mentions.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { SlackAdapter } from '../../adapters/slack/index.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import { decodeComponentId } from '../../src/card/codec.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { People } from '../../src/routing/people.js'
import { routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import { FakeSlack, type FakeUser } from '../fakes/slack/server.js'
import type { FakeTeamsUser } from '../fakes/teams/server.js'
import { refFor, until } from '../helpers/service.js'
import { type TeamsRig, teamsRig } from './rig.js'

const ANN = '11111111-1111-4111-8111-111111111111'
const annTeams: FakeTeamsUser = { aadObjectId: ANN, name: 'Ann', email: 'ann@example.com' }
const annSlack: FakeUser = { id: 'U0ANN', name: 'Ann' }
const bobSlack: FakeUser = { id: 'U0BOB', name: 'Bob' }
const carolTeams: FakeTeamsUser = {
  aadObjectId: '33333333-3333-4333-8333-333333333333',
  name: 'Carol',
  email: 'Carol@Example.com',
}
const eveTeams: FakeTeamsUser = { aadObjectId: '55555555-5555-4555-8555-555555555555', name: 'Eve' }

const deploy: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy 4f2c1 to production?',
  detail: 'Fixes the login bug. <at>Eve</at> @everyone',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
  intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
}

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function start(channelMention = false) {
  const teams: TeamsRig = await teamsRig()
  cleanups.push(() => teams.close())
  teams.fake.addMember(annTeams)
  const slack = await FakeSlack.start({ pingIntervalMs: 1000, rateLimits: false })
  cleanups.push(() => slack.close())
  slack.users.set(annSlack.id, { name: 'Ann', email: 'ann@example.com' })
  slack.users.set(bobSlack.id, { name: 'Bob', email: 'bob@example.com' })
  const routes = validateRoutes(
    {
      people: { 'ann@example.com': { slack: annSlack.id, teams: ANN } },
      routes: [
        {
          name: 'prod',
          destinations: [
            {
              platform: 'teams',
              channel: teams.fake.channelId,
              ...(channelMention ? { mention: [`user:${ANN}`] } : {}),
            },
            { platform: 'slack', channel: 'C0ONCALL' },
          ],
          responders: {
            teams: { users: [ANN] },
            slack: { users: [annSlack.id, bobSlack.id] },
            people: ['email:carol@example.com'],
          },
          quorum: 2,
        },
      ],
    },
    PLATFORMS,
  )
  const store = openStore('memory')
  const service = new UserQuestionService({ store })
  const slackAdapter = new SlackAdapter({
    botToken: slack.options.botToken,
    appToken: slack.options.appToken,
    apiUrl: slack.apiUrl,
    rateLimit: { perChannelIntervalMs: 0, pace: false },
  })
  const chat = new ChatAnswerer({
    service,
    adapters: [teams.adapter, slackAdapter],
    router: routesRouter(routes, [], PLATFORMS),
    people: new People(routes.people),
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
  return { teams, slack, service, chat }
}

async function approveInSlack(slack: FakeSlack, callId: string, person: FakeUser) {
  for (const message of slack.messagesOf(callId))
    for (const block of message.blocks) {
      if (block.type !== 'actions' || !Array.isArray(block.elements)) continue
      for (const el of block.elements as Record<string, unknown>[]) {
        const ref = decodeComponentId(String(el.action_id))
        if (ref?.verb === 'approve' && ref.q === undefined) {
          await slack.deliver(slack.actionPayload(person, message, String(el.action_id)))
          return
        }
      }
    }
  throw new Error('no approve button in Slack')
}

describe('Teams end to end', () => {
  it('one person approving in Teams and in Slack counts once toward a quorum of 2', async () => {
    const { teams, slack, service, chat } = await start()
    const asking = service.ask({
      questions: [deploy],
      agent: service.agents.ensure('deploy'),
      wait: { callId: 'q2' },
    })
    await until(() => teams.activity('q2') && slack.messagesOf('q2').length > 0, 'posted on both')
    await teams.execute('q2', (verb, q) => verb === 'approve' && q === undefined, annTeams)
    await until(
      async () => (await chat.host.getCard(refFor('q2', 'deploy')))?.approvals.length === 1,
      'one approval',
    )
    await approveInSlack(slack, 'q2', annSlack)
    await until(() => slack.noticesFor(annSlack.id).length > 0, 'notice in Slack')
    expect(slack.noticesFor(annSlack.id).join('\n')).toMatch(/already/i)
    expect((await chat.host.getCard(refFor('q2', 'deploy')))?.approvals).toHaveLength(1)
    await approveInSlack(slack, 'q2', bobSlack)
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    await until(() => /Approved by Ann, Bob/.test(teams.text('q2')), 'Teams card says who approved')
    expect(teams.elements('q2').some((e) => e.type === 'Action.Execute')).toBe(false)
  })

  it('an approval with a reason typed into the card; a person known only by the e-mail Teams reports', async () => {
    const { teams, service, chat } = await start()
    teams.fake.addMember(carolTeams)
    const asking = service.ask({
      questions: [deploy],
      agent: service.agents.ensure('deploy'),
      wait: { callId: 'r1' },
    })
    await until(() => teams.activity('r1'), 'posted')
    // Eve is in no list: refused privately, nothing recorded.
    await teams.execute('r1', (verb, q) => verb === 'approve' && q === undefined, eveTeams)
    expect(teams.fake.notices.get(eveTeams.aadObjectId)).toEqual([
      'You are not one of the people who may answer this question.',
    ])
    // Carol is allowed by e-mail only: the channel's roster gives her address, so Teams shows
    // her the card with its controls (refresh.userIds), and her click carries it.
    const input = (await teams.seen('r1', carolTeams)).find(
      (e) => e.type === 'Input.Text' && decodeComponentId(String(e.id))?.verb === 'reject',
    )
    if (!input) throw new Error('no reason input')
    const shown = await teams.execute(
      'r1',
      (verb, q) => verb === 'reject' && q === 0,
      carolTeams,
      () => ({ [String(input.id)]: 'The migration is not reviewed' }),
    )
    expect(shown?.type).toBe('application/vnd.microsoft.card.adaptive')
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Reject'] }] })
    expect((await chat.host.getCard(refFor('r1', 'deploy')))?.reason).toBe('The migration is not reviewed')
    await until(() => /Rejected by Carol/.test(teams.text('r1')), 'card updated for everyone')
  })

  it('a configured mention is an <at> entity with the name Teams knows; agent text mentions nobody', async () => {
    const { teams, service } = await start(true)
    const asking = service.ask({
      questions: [deploy],
      agent: service.agents.ensure('deploy'),
      wait: { callId: 'm1' },
    })
    asking.catch(() => {})
    await until(() => teams.activity('m1'), 'posted')
    const card = teams.elements('m1').find((e) => e.type === 'AdaptiveCard') as {
      msteams?: { entities?: unknown[] }
    }
    expect(card.msteams?.entities).toEqual([
      { type: 'mention', text: '<at>Ann</at>', mentioned: { id: ANN, name: 'Ann' } },
    ])
    const text = teams.text('m1')
    expect(text).toContain('<at>Ann</at>')
    expect(text).not.toContain('<at>Eve</at>')
    expect(text).not.toMatch(/@everyone/)
  })
})
