/**
 * 50 people click at once, on different options of one card: exactly one answer wins, every
 * click is acknowledged, the losers are told privately, and the card shows the winner.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { decodeComponentId } from '../../src/card/codec.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { until } from '../helpers/service.js'
import { type Bridge, startBridge, startSlackRig } from '../slack/rig.js'

const pick: AskUserQuestionItem = {
  id: 'pick',
  question: 'Which release train?',
  options: [{ label: 'Alpha' }, { label: 'Beta' }, { label: 'Gamma' }],
}

let bridge: Bridge
let rig: Awaited<ReturnType<typeof startSlackRig>>
beforeAll(async () => {
  rig = await startSlackRig('http')
  bridge = await startBridge(rig)
})
afterAll(async () => {
  await bridge.close()
})

it('50 racing clicks from different people: one winner', async () => {
  const asking = bridge.service.ask({ questions: [pick], agent: bridge.agent(), wait: { callId: 'race' } })
  await until(() => rig.fake.liveActionIds('race').length > 0, 'card posted')
  const message = rig.fake.messagesOf('race')[0]
  if (!message) throw new Error('no card')
  const buttons = rig.fake.liveActionIds('race').filter((id) => decodeComponentId(id)?.verb === 'choose')
  const people = Array.from({ length: 50 }, (_, i) => ({ id: `U0RACE${String(i).padStart(2, '0')}` }))
  // Every payload is built before any is sent: all 50 see the same live card.
  const payloads = people.map((p, i) =>
    rig.fake.actionPayload(p, message, buttons[i % buttons.length] as string),
  )
  const deliveries = await Promise.all(payloads.map((p) => rig.fake.deliver(p)))
  expect(deliveries.filter((d) => d.timedOut)).toEqual([])

  const answer = await asking
  const race = { agentId: 'agent-1', callId: 'race' }
  expect(answer.answers).toHaveLength(1)
  const winnerLabel = answer.answers[0]?.selected[0]
  const card = await bridge.service.store.getCard<{ answeredBy?: { userId: string }; status: string }>(race)
  expect(card?.state.status).toBe('answered')
  const winner = card?.state.answeredBy?.userId
  expect(people.map((p) => p.id)).toContain(winner)
  // One applied click; the other 49 were refused as already answered (and audited).
  const audit = await bridge.service.store.listAudit({ callId: 'race' })
  const clicks = audit.filter((a) => a.kind === 'interaction')
  expect(clicks.filter((a) => !a.refused)).toHaveLength(1)
  expect(clicks.filter((a) => a.refused)).toHaveLength(49)
  expect(audit.filter((a) => a.kind === 'completed')).toHaveLength(1)
  await until(() => rig.fake.liveActionIds('race').length === 0, 'card shows the answer')
  expect(rig.text('race')).toContain(String(winnerLabel))
})
