import { describe, expect, it } from 'vitest'
import {
  declineModal,
  decodeModalMetadata,
  encodeModalMetadata,
  noticeModal,
  otherModal,
} from '../../adapters/slack/modal.js'
import { cardRef, decodeComponentId, encodeComponentId } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { checkView, mentionsIn } from '../fakes/slack/validate.js'

const card = (questions: AskUserQuestionItem[], patch: Partial<CardState> = {}): CardState => ({
  ...newCard({ callId: 'call-1', agentId: 'a', questions, now: 0 }),
  ...patch,
})

describe('modals', () => {
  it('Other…: valid for Slack, names its call and question, remembers the channel', () => {
    const view = otherModal(
      card([
        { id: 'a', question: 'A?' },
        { id: 'b', question: 'B?', options: [{ label: 'x' }] },
      ]),
      1,
      'C1',
    )
    expect(checkView(view)).toBeUndefined()
    expect(decodeComponentId(view.callback_id)).toEqual({
      ...cardRef({ agentId: 'a', callId: 'call-1' }),
      verb: 'other',
      q: 1,
    })
    expect(decodeModalMetadata(view.private_metadata)).toEqual({ id: view.callback_id, channel: 'C1' })
    expect(view.title.text).toBe('Other answer')
    expect(view.notify_on_close).toBe(true)
  })

  it('a free-text question: "Your answer"', () => {
    expect(otherModal(card([{ id: 'a', question: 'A?' }]), 0).title.text).toBe('Your answer')
  })

  it.each([3000, 10_000])(
    'a %i-character question is cut visibly to fit the modal; agent text pings nobody',
    (n) => {
      const question = `<!channel> ${'q'.repeat(n - 11)}`
      const view = otherModal(card([{ id: 'a', header: 'h'.repeat(1000), question }]), 0)
      expect(checkView(view)).toBeUndefined()
      expect(mentionsIn(view)).toEqual([])
      expect(JSON.stringify(view)).toContain(' …')
    },
  )

  it('the shared draft pre-fills the input, cut to the input limit', () => {
    const view = otherModal(
      card([{ id: 'a', question: 'A?' }], { drafts: { a: { selected: [], custom: 'c'.repeat(10_000) } } }),
      0,
    )
    expect(checkView(view)).toBeUndefined()
    const input = view.blocks.find((b) => b.type === 'input')
    expect(input?.type === 'input' && input.element.initial_value?.length).toBe(3000)
  })

  it('decline with feedback and the notice view are valid', () => {
    const plan = card([
      {
        id: 'p',
        question: 'Plan?'.repeat(1000),
        detail: 'plan',
        options: [{ label: 'ok' }, { label: 'no' }],
        intent: { kind: 'plan-review', approve: 'ok' },
      },
    ])
    const decline = declineModal(plan, 'C1')
    expect(checkView(decline)).toBeUndefined()
    expect(decodeComponentId(decline.callback_id)).toEqual({
      ...cardRef({ agentId: 'a', callId: 'call-1' }),
      verb: 'decline',
      q: 0,
    })
    expect(checkView(noticeModal({ agentId: 'a', callId: 'call-1' }, 'x'.repeat(5000)))).toBeUndefined()
  })

  it('metadata round-trips and rejects anything else', () => {
    const id = encodeComponentId({ ...cardRef({ agentId: 'a', callId: 'call-1' }), verb: 'other', q: 0 })
    expect(decodeModalMetadata(encodeModalMetadata({ id }))).toEqual({ id })
    // An id without the agent's tag (the ab1 form, never released) names no card.
    for (const raw of [undefined, '', 'not json', '{"id":"nope"}', '{"id":"ab1|call-1|o|0"}', '[]', 'null']) {
      expect(decodeModalMetadata(raw)).toBeUndefined()
    }
    expect(() => encodeModalMetadata({ id, channel: 'C'.repeat(3000) })).toThrow(RangeError)
  })
})
