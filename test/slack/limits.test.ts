/**
 * Every Block Kit and view limit of docs/platform-limits.md#block-kit-and-views, at the limit and one past it: first
 * that the fake Slack (which every renderer and end-to-end test relies on) accepts the one and
 * refuses the other, then that the renderers stay within it where the card model can reach it.
 */
import { describe, expect, it } from 'vitest'
import type { SlackMessage } from '../../adapters/slack/blocks.js'
import { decodeModalMetadata, encodeModalMetadata, otherModal } from '../../adapters/slack/modal.js'
import { cardToMessages } from '../../adapters/slack/render.js'
import { cardRef, encodeComponentId } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { checkMessage, checkView } from '../fakes/slack/validate.js'
import { blocksText } from './rig.js'

type Json = Record<string, unknown>

const plain = (text: string) => ({ type: 'plain_text', text })
const mrkdwn = (text: string) => ({ type: 'mrkdwn', text })
const option = (text: string, value = '0', description?: string) => ({
  text: plain(text),
  value,
  ...(description === undefined ? {} : { description: plain(description) }),
})
const button = (actionId: string, text = 'ok') => ({ type: 'button', action_id: actionId, text: plain(text) })
const actions = (...elements: Json[]) => ({ type: 'actions', elements })
const message = (...blocks: Json[]): Json => ({ channel: 'C1', text: 'fallback', blocks })
const modal = (patch: Json = {}): Json => ({
  type: 'modal',
  callback_id: 'cb',
  title: plain('Title'),
  close: plain('Close'),
  submit: plain('Send'),
  blocks: [
    {
      type: 'input',
      block_id: 'answer',
      label: plain('Answer'),
      element: { type: 'plain_text_input', action_id: 'text', max_length: 3000 },
    },
  ],
  ...patch,
})
const options = (n: number, make = (i: number) => option(`o${i}`, String(i))) =>
  Array.from({ length: n }, (_, i) => make(i))

/** [limit, a message or view builder given the size]: accepted at `limit`, refused at `limit + 1`. */
const messageLimits: [string, number, (n: number) => Json][] = [
  ['blocks per message', 50, (n) => message(...Array.from({ length: n }, () => ({ type: 'divider' })))],
  ['section text', 3000, (n) => message({ type: 'section', text: mrkdwn('s'.repeat(n)) })],
  ['header text', 150, (n) => message({ type: 'header', text: plain('h'.repeat(n)) })],
  ['action_id', 255, (n) => message(actions(button('a'.repeat(n))))],
  ['block_id', 255, (n) => message({ type: 'divider', block_id: 'b'.repeat(n) })],
  [
    'elements per actions block',
    25,
    (n) => message(actions(...Array.from({ length: n }, (_, i) => button(`a${i}`)))),
  ],
  ['button text', 75, (n) => message(actions(button('a', 'b'.repeat(n))))],
  [
    'option text',
    75,
    (n) => message(actions({ type: 'checkboxes', action_id: 'a', options: [option('o'.repeat(n))] })),
  ],
  [
    'option description',
    75,
    (n) =>
      message(actions({ type: 'checkboxes', action_id: 'a', options: [option('o', '0', 'd'.repeat(n))] })),
  ],
  [
    'option value',
    150,
    (n) => message(actions({ type: 'checkboxes', action_id: 'a', options: [option('o', 'v'.repeat(n))] })),
  ],
  [
    'options per select',
    100,
    (n) =>
      message(
        actions({ type: 'static_select', action_id: 'a', placeholder: plain('p'), options: options(n) }),
      ),
  ],
  [
    'options per multi-select',
    100,
    (n) =>
      message(
        actions({
          type: 'multi_static_select',
          action_id: 'a',
          placeholder: plain('p'),
          options: options(n),
        }),
      ),
  ],
  [
    'option groups per select',
    100,
    (n) =>
      message(
        actions({
          type: 'static_select',
          action_id: 'a',
          placeholder: plain('p'),
          option_groups: Array.from({ length: n }, (_, g) => ({
            label: plain(`g${g}`),
            options: [option(`o${g}`, String(g))],
          })),
        }),
      ),
  ],
  [
    'checkbox options',
    10,
    (n) => message(actions({ type: 'checkboxes', action_id: 'a', options: options(n) })),
  ],
  [
    'radio options',
    10,
    (n) => message(actions({ type: 'radio_buttons', action_id: 'a', options: options(n) })),
  ],
  [
    'text across blocks (msg_blocks_too_long)',
    13_000,
    (n) =>
      message(
        ...Array.from({ length: Math.ceil(n / 2600) }, (_, i) => ({
          type: 'section',
          text: mrkdwn('t'.repeat(Math.min(2600, n - i * 2600))),
        })),
      ),
  ],
]

const viewLimits: [string, number, (n: number) => Json][] = [
  ['modal title', 24, (n) => modal({ title: plain('t'.repeat(n)) })],
  ['modal submit', 24, (n) => modal({ submit: plain('s'.repeat(n)) })],
  ['modal close', 24, (n) => modal({ close: plain('c'.repeat(n)) })],
  ['private_metadata', 3000, (n) => modal({ private_metadata: 'm'.repeat(n) })],
  ['callback_id', 255, (n) => modal({ callback_id: 'c'.repeat(n) })],
  [
    'blocks per modal',
    100,
    (n) => modal({ blocks: Array.from({ length: n }, () => ({ type: 'section', text: mrkdwn('x') })) }),
  ],
  [
    'plain_text_input max_length',
    3000,
    (n) =>
      modal({
        blocks: [
          {
            type: 'input',
            block_id: 'answer',
            label: plain('Answer'),
            element: { type: 'plain_text_input', action_id: 'text', max_length: n },
          },
        ],
      }),
  ],
  [
    'plain_text_input initial_value',
    3000,
    (n) =>
      modal({
        blocks: [
          {
            type: 'input',
            block_id: 'answer',
            label: plain('Answer'),
            element: { type: 'plain_text_input', action_id: 'text', initial_value: 'v'.repeat(n) },
          },
        ],
      }),
  ],
]

describe('the fake Slack enforces §1a (what the renderer tests rely on)', () => {
  it.each(messageLimits)('%s: %i accepted, one more refused', (_name, limit, build) => {
    expect(checkMessage(build(limit))).toBeUndefined()
    expect(checkMessage(build(limit + 1))?.error).toMatch(/^(invalid_blocks|msg_blocks_too_long)$/)
  })

  it.each(viewLimits)('%s: %i accepted, one more refused', (_name, limit, build) => {
    expect(checkView(build(limit))).toBeUndefined()
    expect(checkView(build(limit + 1))?.error).toBe('invalid_arguments')
  })
})

const NOW = Date.UTC(2030, 0, 1)
const card = (questions: AskUserQuestionItem[], patch: Partial<CardState> = {}, callId = 'call-1') => ({
  ...newCard({ callId, agentId: 'agent-1', questions, now: NOW }),
  ...patch,
})
function render(c: CardState): SlackMessage[] {
  const messages = cardToMessages(c)
  for (const m of messages) {
    const problem = checkMessage({ channel: 'C1', ...m } as unknown as Json)
    expect(problem, JSON.stringify(problem)).toBeUndefined()
  }
  return messages
}
const shown = (messages: SlackMessage[]) =>
  messages
    .map((m) => blocksText(m.blocks as never))
    .join('\n')
    .replace(/\s+/g, '')

describe('the renderer at the limits the card model can reach', () => {
  // A batch of free-text questions: header + context, then a section and an actions block per
  // question, then Submit. A draft adds a context block.
  const freeText = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `q${i}`, question: `Q${i}?` }))

  it('a card of exactly 50 blocks is one message; 51 blocks continue in a second', () => {
    const fifty = render(
      card(freeText(23), { drafts: { q0: { selected: [], custom: 'draft' } } }), // 2 + 46 + 1 + 1
    )
    expect(fifty.map((m) => m.blocks.length)).toEqual([50])
    const fiftyOne = render(card(freeText(24))) // 2 + 48 + 1
    expect(fiftyOne).toHaveLength(2)
    expect(fiftyOne.reduce((n, m) => n + m.blocks.length, 0)).toBe(51)
  })

  it('the longest callId with the highest indexes fits action_id and block_id (255)', () => {
    const callId = 'x'.repeat(64)
    const questions = Array.from({ length: 50 }, (_, i) => ({
      id: `q${i}`,
      question: `Q${i}?`,
      options: Array.from({ length: i === 49 ? 5 : 2 }, (_, k) => ({ label: `o${k}` })),
    }))
    const messages = render(card(questions, {}, callId))
    const ids = JSON.stringify(messages).match(/"(action_id|block_id)":"[^"]*"/g) ?? []
    expect(ids.some((s) => s.includes('|49|4'))).toBe(true)
    for (const m of messages) expect(m.blocks.length).toBeLessThanOrEqual(50)
  })

  it.each([13_000, 13_001])(
    'a question and detail of %i characters in all are spread so no message passes Slack’s total',
    (n) => {
      const words = (len: number) =>
        Array.from({ length: len }, (_, i) => (i % 10 === 9 ? ' ' : 'w'))
          .join('')
          .trimEnd()
      const question = words(2500)
      const detail = words(n - 2500)
      const messages = render(
        card([{ id: 'q', question, detail, options: [{ label: 'a' }, { label: 'b' }] }]),
      )
      expect(messages.length).toBeGreaterThan(1)
      expect(shown(messages)).toContain(detail.replace(/\s+/g, ''))
    },
  )

  it('the most controls one question gets stay under 25 per actions block', () => {
    const messages = render(
      card([
        { id: 'a', question: 'A?', options: Array.from({ length: 5 }, (_, k) => ({ label: `o${k}` })) },
        { id: 'b', question: 'B?' },
      ]),
    )
    for (const m of messages)
      for (const b of m.blocks) if (b.type === 'actions') expect(b.elements.length).toBeLessThanOrEqual(25)
  })

  it.each([3000, 3001])('a %i-character shared draft pre-fills the form within max_length', (n) => {
    const view = otherModal(
      card([{ id: 'a', question: 'A?' }], { drafts: { a: { selected: [], custom: 'c'.repeat(n) } } }),
      0,
    )
    expect(checkView(view)).toBeUndefined()
  })

  it('private_metadata: exactly 3000 characters is accepted, 3001 refused before Slack sees it', () => {
    const id = encodeComponentId({ ...cardRef({ agentId: 'a', callId: 'call-1' }), verb: 'other', q: 0 })
    const overhead = JSON.stringify({ id, channel: '' }).length
    const at = encodeModalMetadata({ id, channel: 'C'.repeat(3000 - overhead) })
    expect(at).toHaveLength(3000)
    expect(decodeModalMetadata(at)?.id).toBe(id)
    expect(checkView(modal({ private_metadata: at }))).toBeUndefined()
    expect(() => encodeModalMetadata({ id, channel: 'C'.repeat(3001 - overhead) })).toThrow(RangeError)
  })
})
