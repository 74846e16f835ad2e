/**
 * Teams expects an invoke answered within five seconds. When the work is slower (here: Teams'
 * own member look-up is slow), the person is told it was received, the work goes on, the card is
 * updated, and a late refusal reaches them in their chat with the bot.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import type { Router } from '../../src/routing/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import type { FakeTeamsUser } from '../fakes/teams/server.js'
import { until } from '../helpers/service.js'
import { type TeamsRig, teamsRig } from './rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}
const ann: FakeTeamsUser = { aadObjectId: '11111111-1111-4111-8111-111111111111', name: 'Ann' }
const eve: FakeTeamsUser = { aadObjectId: '55555555-5555-4555-8555-555555555555', name: 'Eve' }
const RECEIVED = 'Received; the card updates in a moment.'

let rig: TeamsRig
let service: UserQuestionService
let chat: ChatAnswerer

beforeEach(async () => {
  rig = await teamsRig({ invokeAnswerMs: 100 })
  service = new UserQuestionService({ store: openStore('memory') })
  const router: Router = {
    resolve: () => ({
      name: 'teams',
      destinations: [{ platform: 'teams', channel: rig.fake.channelId }],
      quorum: 1,
      excludeRequester: false,
      escalation: [],
      responders: { teams: { users: [ann.aadObjectId] } },
    }),
  }
  chat = new ChatAnswerer({ service, adapters: [rig.adapter], router, escalationIntervalMs: 0 })
  service.use(chat.answerer)
  await chat.start()
})

afterEach(async () => {
  await service.close()
  await chat.stop()
  await rig.close()
  await service.store.close()
})

it('a slow click is acknowledged at once, then applied; a late refusal goes to the person’s chat', async () => {
  const asking = service.ask({
    questions: [colour],
    agent: service.agents.ensure('a'),
    wait: { callId: 'slow' },
  })
  await until(() => rig.activity('slow'), 'posted')
  rig.fake.delay('/members/', 600)
  const eveSaw = await rig.execute('slow', (verb, q, o) => verb === 'choose' && q === 0 && o === 0, eve)
  expect(eveSaw).toEqual({
    statusCode: 200,
    type: 'application/vnd.microsoft.activity.message',
    value: RECEIVED,
  })
  await until(
    () =>
      rig.fake.notices
        .get(eve.aadObjectId)
        ?.includes('You are not one of the people who may answer this question.'),
    'the refusal in Eve’s chat with the bot',
  )
  const annSaw = await rig.execute('slow', (verb, q, o) => verb === 'choose' && q === 0 && o === 1, ann)
  expect(annSaw?.value).toBe(RECEIVED)
  expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
  await until(() => /Answered by Ann/.test(rig.text('slow')), 'card updated')
})
