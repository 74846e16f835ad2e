/**
 * Inbound verification through the Agents SDK's JWT middleware, against the fake's key set:
 * a forged, expired or wrong-audience token (or none) gets 401, is logged, and applies nothing.
 * And the connector side: a 429 with Retry-After is waited out, the card still posted once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import type { Logger } from '../../src/log.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import type { Router } from '../../src/routing/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import { FakeTeams, type FakeTeamsUser } from '../fakes/teams/server.js'
import { refFor, until } from '../helpers/service.js'
import { type TeamsRig, teamsRig } from './rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}
const ann: FakeTeamsUser = { aadObjectId: '11111111-1111-4111-8111-111111111111', name: 'Ann' }

describe('Teams inbound verification', () => {
  let rig: TeamsRig
  let service: UserQuestionService
  let chat: ChatAnswerer
  const logged: Array<{ message: string; fields?: Record<string, unknown> }> = []
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (message, fields) => logged.push({ message, ...(fields ? { fields } : {}) }),
    error: (message, fields) => logged.push({ message, ...(fields ? { fields } : {}) }),
  }

  beforeEach(async () => {
    logged.length = 0
    rig = await teamsRig({ logger })
    service = new UserQuestionService({ store: openStore('memory') })
    const router: Router = {
      resolve: () => ({
        name: 'teams',
        destinations: [{ platform: 'teams', channel: rig.fake.channelId }],
        quorum: 1,
        excludeRequester: false,
        escalation: [],
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

  /** A click on Red, as Teams would send it, with the given bearer token. */
  async function clickWith(token: string | undefined) {
    await until(async () => rig.activity('v') !== undefined, 'card posted')
    const stored = rig.activity('v')
    const red = rig.elements('v').find((e) => e.type === 'Action.Execute' && e.title === 'Red')
    if (!stored || !red) throw new Error('no Red button')
    const activity = rig.fake.invokeActivity(stored.id, red.data as Record<string, unknown>, ann)
    if (token === undefined) {
      const res = await fetch(rig.botUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(activity),
      })
      return res.status
    }
    return (await rig.fake.deliver(activity, token)).status
  }

  it.each([
    ['forged (signed with another key)', () => rig.fake.signToken({}, FakeTeams.otherKey())],
    ['expired an hour ago', () => rig.fake.signToken({ exp: Math.floor(Date.now() / 1000) - 3600 })],
    [
      'for another bot (wrong audience)',
      () => rig.fake.signToken({ aud: '99999999-9999-4999-8999-999999999999' }),
    ],
    ['from another issuer', () => rig.fake.signToken({ iss: 'https://evil.example/tenant/v2.0' })],
    ['missing', () => undefined],
  ])('a token %s: 401, logged, nothing applied', async (_, token) => {
    const asking = service.askTimed({ questions: [colour], agent: service.agents.ensure('a') }, 'v', 60_000)
    expect(await clickWith(token())).toBe(401)
    expect(logged.some((l) => /Refused a Teams request/.test(l.message))).toBe(true)
    const card = await chat.host.getCard(refFor('v', 'a'))
    expect(card?.status).toBe('open')
    expect(card?.drafts).toEqual({})
    expect(await service.store.listAudit({ callId: 'v' })).not.toContainEqual(
      expect.objectContaining({ kind: 'interaction' }),
    )
    // The same click with a good token is applied.
    expect(await clickWith(rig.fake.signToken())).toBe(200)
    await until(async () => (await chat.host.getCard(refFor('v', 'a')))?.status === 'answered', 'answered')
    await asking
  })

  it('a 429 with Retry-After is waited out; the card is posted once', async () => {
    rig.fake.rateLimitNext(1, 1)
    const asking = service.ask({
      questions: [colour],
      agent: service.agents.ensure('a'),
      wait: { callId: 'v' },
    })
    await until(async () => rig.activity('v') !== undefined, 'card posted')
    expect(rig.fake.requests.filter((r) => r.status === 429)).toHaveLength(1)
    expect(rig.fake.conversation()).toHaveLength(1)
    await rig.execute('v', (verb, q, o) => verb === 'choose' && q === 0 && o === 1, ann)
    expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
    // No token ever reaches a log line.
    expect(JSON.stringify(logged)).not.toContain(rig.fake.appPassword)
  })
})
