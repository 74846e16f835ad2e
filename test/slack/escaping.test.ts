/**
 * Agent text is escaped everywhere the Slack adapter renders it: on the card in every state, in
 * its notification text, in every modal, in private notices. Slack parses `<…>` in mrkdwn and in
 * a message's top-level `text` (mentions, channel links, links, dates); agent text must never
 * produce one. Our own `<…>` are only dates, links built from safe URLs, and people mentions.
 */
import { describe, expect, it } from 'vitest'
import type { SlackMessage } from '../../adapters/slack/blocks.js'
import { declineModal, noticeModal, otherModal } from '../../adapters/slack/modal.js'
import { cardToMessages } from '../../adapters/slack/render.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState, Person } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { mentionsIn } from '../fakes/slack/validate.js'

const EVIL =
  '<!channel> <!here> <!everyone> <@U0BOSS> <#C0SECRET> <!subteam^S0ALL> <https://evil.example|click> @channel & done'
const ann: Person = { platform: 'slack', userId: 'U0ANN', name: 'Ann' }
const NOW = Date.UTC(2030, 0, 1)

/** Every `<…>` (and bare `@channel`) Slack would parse in the mrkdwn and top-level text of a payload. */
function parsed(value: unknown): string[] {
  const out: string[] = []
  const walk = (v: unknown, key?: string, mrkdwn = true) => {
    if (typeof v === 'string') {
      if (key === 'text' && mrkdwn) {
        for (const m of v.matchAll(/<[^>]*>/g)) out.push(m[0])
        // Bare words notify only with link_names (never set); still, none reach mrkdwn intact.
        for (const m of v.matchAll(/@(channel|here|everyone)\b/g)) out.push(m[0])
      }
      return
    }
    if (Array.isArray(v)) {
      for (const x of v) walk(x, key, mrkdwn)
      return
    }
    if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>
      const isPlain = o.type === 'plain_text'
      for (const [k, x] of Object.entries(o)) walk(x, k, !isPlain)
    }
  }
  walk(value)
  return out
}

/** Ours: dates, and mentions of the people who acted (never from agent text). */
const ours = (tag: string) => /^<!date\^\d+\^[^|>]*\|[^>]*>$/.test(tag) || tag === '<@U0ANN>'

function expectSafe(value: unknown) {
  expect(parsed(value).filter((t) => !ours(t))).toEqual([])
  expect(mentionsIn(value).filter((m) => m !== '@U0ANN')).toEqual([])
}

const approval: AskUserQuestionItem = {
  id: 'ok',
  header: EVIL,
  question: EVIL,
  detail: `# ${EVIL}\n\n- ${EVIL}\n\n> ${EVIL}\n\n| ${EVIL} |\n|---|\n\n\`${EVIL}\``,
  options: [{ label: EVIL }, { label: `${EVIL} no` }, { label: `${EVIL} always` }],
  intent: {
    kind: 'approval',
    approve: EVIL,
    reject: `${EVIL} no`,
    always: `${EVIL} always`,
    subject: { name: EVIL, icon: EVIL },
    display: { question: { en: EVIL }, detail: { en: EVIL }, approve: { en: EVIL } },
  },
}
const batch: AskUserQuestionItem[] = [
  {
    id: 'a',
    header: EVIL,
    question: EVIL,
    detail: EVIL,
    multiSelect: true,
    options: [
      { label: EVIL, description: EVIL },
      { label: `${EVIL} 2`, description: `${EVIL} ${'long '.repeat(20)}` },
    ],
  },
  {
    id: 'b',
    header: EVIL,
    question: EVIL,
    options: Array.from({ length: 7 }, (_, i) => ({ label: `${EVIL} ${i}` })),
  },
  { id: 'c', question: EVIL },
]
const plan: AskUserQuestionItem = {
  id: 'p',
  question: EVIL,
  detail: EVIL,
  options: [{ label: EVIL }, { label: `${EVIL} revise` }],
  intent: { kind: 'plan-review', approve: EVIL },
}

const card = (questions: AskUserQuestionItem[], patch: Partial<CardState> = {}): CardState => ({
  ...newCard({ callId: 'call-1', agentId: EVIL.replace(/\s/g, ''), questions, now: NOW }),
  ...patch,
})
const render = (c: CardState): SlackMessage[] => cardToMessages(c, { locale: 'en' })

describe('agent text cannot ping or link anywhere', () => {
  it.each([
    ['an open approval', card([approval], { deadline: NOW + 1000, holders: [ann] })],
    [
      'an approved approval',
      card([approval], {
        status: 'answered',
        result: { answers: [{ id: 'ok', selected: [EVIL] }] },
        answeredBy: ann,
        answeredAt: NOW,
      }),
    ],
    [
      'an open batch with drafts',
      card(batch, {
        drafts: {
          a: { selected: [EVIL], custom: EVIL, by: ann },
          b: { selected: [`${EVIL} 3`], by: { platform: 'discord', userId: '1', name: EVIL } },
        },
      }),
    ],
    [
      'an answered batch with custom answers',
      card(batch, {
        status: 'answered',
        result: {
          answers: [
            { id: 'a', selected: [EVIL], custom: EVIL },
            { id: 'b', selected: [`${EVIL} 1`] },
            { id: 'c', selected: [], custom: EVIL },
          ],
        },
        answeredBy: { platform: 'discord', userId: '9', name: EVIL },
        answeredAt: NOW,
      }),
    ],
    [
      'a declined plan with feedback',
      card([plan], {
        status: 'answered',
        result: { answers: [{ id: 'p', selected: [], custom: EVIL }] },
        answeredBy: ann,
      }),
    ],
    ['a cancelled card', card([plan], { status: 'cancelled', closedReason: EVIL })],
    ['a continued card', card([approval], { status: 'continued' })],
  ])('%s', (_name, c) => {
    const messages = render(c)
    expectSafe(messages)
    // The notification text is parsed too.
    for (const m of messages) expect(m.text).not.toMatch(/<[!@#]/)
  })

  it('every modal', () => {
    const c = card(batch, { drafts: { c: { selected: [], custom: EVIL } } })
    for (let q = 0; q < batch.length; q++) expectSafe(otherModal(c, q, 'C1'))
    expectSafe(otherModal(card([approval]), 0, 'C1', 'en'))
    expectSafe(declineModal(card([plan]), 'C1'))
    expectSafe(noticeModal({ agentId: 'a', callId: 'call-1' }, EVIL))
  })
})
