/** Reasons on approvals: askbridge's own note beside the answer, which stays the option label. */
import { describe, expect, it } from 'vitest'
import { applyInteraction } from '../../src/card/apply.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardAction, CardState } from '../../src/card/types.js'
import { LIMITS } from '../../src/protocol/schemas.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'

const approval: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy?',
  detail: 'prod',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
  intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
}
let n = 0
const act = (card: CardState, action: CardAction, userId = 'ann') =>
  applyInteraction(card, { id: `i${n++}`, actor: { platform: 'web', userId }, action, at: 1 })

describe('reasons', () => {
  it('Reject with a reason completes with the label as the answer and keeps the trimmed reason', () => {
    const r = act(newCard({ callId: 'c', agentId: 'a', questions: [approval], now: 0 }), {
      type: 'reject',
      reason: ' tests are red ',
    })
    if (!r.ok) throw new Error(r.refusal.message)
    expect(r.state.result).toEqual({ answers: [{ id: 'deploy', selected: ['Reject'] }] })
    expect(r.state.reason).toBe('tests are red')
  })

  it('an empty reason is no reason; one past the limit is refused, one at it is kept', () => {
    const card = newCard({ callId: 'c', agentId: 'a', questions: [approval], now: 0 })
    const blank = act(card, { type: 'approve', reason: '   ' })
    if (!blank.ok) throw new Error('refused')
    expect(blank.state.reason).toBeUndefined()
    expect(act(card, { type: 'reject', reason: 'x'.repeat(LIMITS.customLength + 1) })).toMatchObject({
      ok: false,
      refusal: { code: 'too-long' },
    })
    const at = act(card, { type: 'reject', reason: 'x'.repeat(LIMITS.customLength) })
    expect(at.ok && at.state.reason?.length).toBe(LIMITS.customLength)
  })

  it('with a quorum, the reason of the approver who completes it is kept', () => {
    let card = newCard({ callId: 'c', agentId: 'a', questions: [approval], now: 0, quorum: 2 })
    const first = act(card, { type: 'approve', reason: 'looks fine' }, 'ann')
    if (!first.ok) throw new Error('refused')
    card = first.state
    expect(card.reason).toBeUndefined()
    const second = act(card, { type: 'approve', reason: 'checked the diff' }, 'bob')
    expect(second.ok && second.completed && second.state.reason).toBe('checked the diff')
  })
})
