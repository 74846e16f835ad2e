import { describe, expect, it } from 'vitest'
import type { ActionElement, MessageBlock, SlackMessage } from '../../adapters/slack/blocks.js'
import { cardToMessages, type RenderOptions } from '../../adapters/slack/render.js'
import { cardRef, decodeComponentId } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { checkMessage, mentionsIn } from '../fakes/slack/validate.js'
import { mentions } from '../helpers/mentions.js'
import { blocksText } from './rig.js'

const NOW = Date.UTC(2030, 0, 2, 3, 4, 5)

function card(questions: AskUserQuestionItem[], patch: Partial<CardState> = {}): CardState {
  return { ...newCard({ callId: 'call-1', agentId: 'agent-1', questions, now: NOW }), ...patch }
}

/** Render and insist that the fake Slack (its own copy of the limits) accepts every message. */
function render(c: CardState, options: RenderOptions = {}): SlackMessage[] {
  const messages = cardToMessages(c, options)
  for (const m of messages) {
    const args = { channel: 'C1', text: m.text, blocks: m.blocks } as unknown as Record<string, unknown>
    expect(checkMessage(args), JSON.stringify(checkMessage(args))).toBeUndefined()
  }
  return messages
}

const elements = (messages: SlackMessage[]): ActionElement[] =>
  messages.flatMap((m) => m.blocks.flatMap((b: MessageBlock) => (b.type === 'actions' ? b.elements : [])))
const verbs = (messages: SlackMessage[]) =>
  elements(messages).map((e) => decodeComponentId(e.action_id)?.verb)
const text = (messages: SlackMessage[]) => messages.map((m) => blocksText(m.blocks as never)).join('\n')
const options = (n: number, label = (i: number) => `Option ${i}`) =>
  Array.from({ length: n }, (_, i) => ({ label: label(i) }))

describe('options: buttons, menus, checkboxes', () => {
  it('renders up to 5 options as buttons plus Other…', () => {
    const m = render(card([{ id: 'q', question: 'Pick', options: options(5) }]))
    const els = elements(m)
    expect(els.map((e) => e.type)).toEqual(['button', 'button', 'button', 'button', 'button', 'button'])
    expect(verbs(m)).toEqual(['choose', 'choose', 'choose', 'choose', 'choose', 'other'])
  })

  it('6 options become a static select (values are option indexes)', () => {
    const m = render(card([{ id: 'q', question: 'Pick', options: options(6) }]))
    const select = elements(m).find((e) => e.type === 'static_select')
    expect(select?.type === 'static_select' && select.options?.map((o) => o.value)).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
    ])
  })

  it.each([
    [100, 0],
    [101, 2],
    [500, 5],
  ])('%i options: %i option groups', (n, groups) => {
    const m = render(card([{ id: 'q', question: 'Pick', options: options(n) }]))
    const select = elements(m).find((e) => e.type === 'static_select')
    if (select?.type !== 'static_select') throw new Error('no select')
    if (groups === 0) expect(select.options).toHaveLength(n)
    else {
      expect(select.option_groups).toHaveLength(groups)
      expect(select.option_groups?.flatMap((g) => g.options)).toHaveLength(n)
      expect(select.option_groups?.at(-1)?.options.at(-1)?.value).toBe(String(n - 1))
    }
  })

  it('multi-select: 10 options as checkboxes with descriptions, 11 as a multi-select menu', () => {
    const ten = render(
      card([
        {
          id: 'q',
          question: 'Which?',
          multiSelect: true,
          options: options(10).map((o, i) => ({ ...o, description: 'd'.repeat(i === 0 ? 75 : 5) })),
        },
      ]),
    )
    const boxes = elements(ten).find((e) => e.type === 'checkboxes')
    expect(boxes?.type === 'checkboxes' && boxes.options[0]?.description?.text).toBe('d'.repeat(75))
    expect(verbs(ten)).toEqual(['set', 'other', 'submit'])

    const eleven = render(card([{ id: 'q', question: 'Which?', multiSelect: true, options: options(11) }]))
    expect(elements(eleven).map((e) => e.type)).toEqual(['multi_static_select', 'button', 'button'])
  })

  it('a description past 75 characters is shown in full above the controls', () => {
    const long = `${'x'.repeat(75)}END`
    const m = render(
      card([
        {
          id: 'q',
          question: 'Which?',
          multiSelect: true,
          options: [{ label: 'a', description: long }, { label: 'b' }],
        },
      ]),
    )
    const boxes = elements(m).find((e) => e.type === 'checkboxes')
    expect(boxes?.type === 'checkboxes' && boxes.options[0]?.description).toBeUndefined()
    expect(text(m)).toContain(long)
  })

  it.each([75, 76, 10_000])('a %i-character label fits its button and is never lost', (n) => {
    const label = `${'L'.repeat(n - 3)}END`
    const m = render(card([{ id: 'q', question: 'Pick', options: [{ label }, { label: 'short' }] }]))
    const button = elements(m)[0]
    expect(button?.type === 'button' && button.text.text.length).toBeLessThanOrEqual(75)
    expect(text(m).replace(/\s+/g, '')).toContain(label)
  })

  it.each([75, 76])('a %i-character label in a menu is cut to 75 and listed in full', (n) => {
    const label = `${'L'.repeat(n - 3)}END`
    const m = render(card([{ id: 'q', question: 'Pick', options: [{ label }, ...options(6)] }]))
    const select = elements(m).find((e) => e.type === 'static_select')
    if (select?.type !== 'static_select') throw new Error('no select')
    expect(select.options?.[0]?.text.text.length).toBeLessThanOrEqual(75)
    expect(text(m)).toContain(label)
  })

  it('a free-text question gets an Answer… button', () => {
    expect(verbs(render(card([{ id: 'q', question: 'Anything else?' }])))).toEqual(['other'])
  })
})

describe('text at the limits', () => {
  it.each([150, 151, 1000])('a %i-character header fits the header block, in full below when cut', (n) => {
    const header = `${'H'.repeat(n - 3)}END`
    const m = render(card([{ id: 'q', header, question: 'Q?', options: options(2) }]))
    const block = m[0]?.blocks.find((b) => b.type === 'header')
    expect(block?.type === 'header' && block.text.text.length).toBeLessThanOrEqual(150)
    expect(text(m)).toContain(header)
  })

  it.each([2900, 3000, 3001, 10_000])(
    'a %i-character question is split across sections, nothing lost',
    (n) => {
      const question = Array.from({ length: n }, (_, i) => (i % 10 === 9 ? ' ' : 'q')).join('')
      const m = render(card([{ id: 'q', question, options: options(2) }]))
      expect(text(m).replace(/\s+/g, '')).toContain(question.replace(/\s+/g, ''))
    },
  )

  it.each([2800, 2900, 2901, 10_000])(
    'in a batch, a %i-character question under a long escaped header stays within 3000 per section',
    (n) => {
      // The numbered header prefix (up to 1000 characters of `<`, escaped 4x) goes before the text.
      const question = Array.from({ length: n }, (_, i) => (i % 10 === 9 ? ' ' : 'q')).join('')
      const m = render(
        card([
          { id: 'a', header: '<'.repeat(1000), question, options: options(2) },
          { id: 'b', header: '&'.repeat(150), question, options: options(2) },
        ]),
      )
      const shown = text(m).replace(/\s+/g, '')
      expect(shown).toContain(question.replace(/\s+/g, ''))
      expect(shown).toContain(`1.${'<'.repeat(299)}…`)
    },
  )

  it('a 200,000-character plan spans several messages, readable, with its buttons after it', () => {
    const paragraph = (i: number) =>
      `## Step ${i}\n\nDo thing number ${i} carefully & check <results>. ${'lorem '.repeat(60)}`
    let plan = ''
    for (let i = 0; plan.length < 200_000; i++) plan += `${paragraph(i)}\n\n`
    plan = plan.slice(0, 200_000)
    const m = render(
      card([
        {
          id: 'plan',
          question: 'Approve the plan?',
          detail: plan,
          options: [{ label: 'Approve' }, { label: 'Revise' }],
          intent: { kind: 'plan-review', approve: 'Approve' },
        },
      ]),
    )
    expect(m.length).toBeGreaterThan(10)
    for (const [i, msg] of m.entries()) {
      expect(msg.blocks.length).toBeLessThanOrEqual(50)
      expect(msg.text).toContain(`part ${i + 1} of ${m.length}`)
      // Every message names its call and part, so the adapter and the fake can find it.
      expect(decodeComponentId(msg.blocks[0]?.block_id ?? '')).toEqual({
        ...cardRef({ agentId: 'agent-1', callId: 'call-1' }),
        verb: 'page',
        o: i,
      })
    }
    // Controls only on the last message, after the whole plan.
    expect(verbs(m.slice(0, -1))).toEqual([])
    expect(verbs(m.slice(-1))).toEqual(['approve', 'choose', 'decline'])
    const shown = text(m)
    for (const step of [0, 100, 300]) expect(shown).toContain(`Step ${step}`)
    expect(shown).toContain('check <results>')
  })

  it('a batch of 50 questions (over 50 blocks) spreads across messages; Submit comes last', () => {
    const questions = Array.from({ length: 50 }, (_, i) => ({
      id: `q${i}`,
      header: `H${i}`,
      question: `Question ${i}?`,
      detail: `Some detail for ${i}.`,
      options: options(5),
    }))
    const m = render(card(questions))
    expect(m.length).toBeGreaterThan(1)
    const v = verbs(m)
    expect(v.filter((x) => x === 'skip')).toHaveLength(50)
    expect(v.at(-1)).toBe('submit')
    expect(verbs(m.slice(0, -1))).not.toContain('submit')
    // A question's text and its controls stay in one message.
    for (const msg of m) {
      for (const block of msg.blocks) {
        if (block.type !== 'actions') continue
        const q = decodeComponentId(block.elements[0]?.action_id ?? '')?.q
        if (q !== undefined) expect(blocksText(msg.blocks as never)).toContain(`Question ${q}?`)
      }
    }
  })

  it('a 10,000-character custom answer is shown in full once answered', () => {
    const custom = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ')
    const q = { id: 'q', question: 'Why?' }
    const m = render(
      card([q], {
        status: 'answered',
        result: { answers: [{ id: 'q', selected: [], custom }] },
        answeredBy: { platform: 'slack', userId: 'U0ANN', name: 'Ann' },
        answeredAt: NOW,
      }),
    )
    expect(text(m)).toContain('w0 w1')
    expect(text(m)).toContain('w1999')
  })
})

describe('lists of people stay within a text object', () => {
  const people = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      platform: 'slack',
      userId: `U${String(i).padStart(9, '0')}`,
    }))
  const ids = (n: number) => people(n).map((p) => p.userId)

  it.each([1, 400])('%i people holding, approving, answerable and mentioned', (n) => {
    const q: AskUserQuestionItem = {
      id: 'q',
      question: 'Deploy?',
      options: [{ label: 'yes' }, { label: 'no' }],
      intent: { kind: 'approval', approve: 'yes', reject: 'no' },
    }
    const m = render(
      card([q], {
        deadline: NOW + 60_000,
        holders: people(n),
        quorum: n + 1,
        approvals: people(n),
        responders: { slack: { users: ids(n), groups: ids(n).map((u) => u.replace('U', 'S')) } },
      }),
      { mentions: ids(n).map((id) => ({ platform: 'slack', kind: 'user' as const, id })) },
    )
    expect(text(m)).toContain('Deploy?')
    expect(text(m)).toContain(`${n} of ${n + 1} approvals`)
  })
})

describe('safety', () => {
  it('agent text never produces a mention; configured mentions do', () => {
    const evil = '<!channel> <!here> <!everyone> <@U0BOSS> <!subteam^S0ALL> @here'
    const c = card([
      {
        id: 'q',
        header: evil,
        question: evil,
        detail: `# ${evil}\n\n- ${evil}\n\n[${evil}](https://x.dev)`,
        options: [{ label: evil, description: evil }, { label: 'ok' }],
      },
    ])
    const m = render(c, {
      mentions: [
        ...mentions('slack', 'subteam:S0ONCALL', 'user:U0LEAD'),
        // A malformed id, another platform's mention, a kind Slack has not: none is printed.
        { platform: 'slack', kind: 'user', id: '<!channel>' },
        { platform: 'discord', kind: 'role', id: '110000000000000010' },
        { platform: 'slack', kind: 'role', id: 'R1' },
      ],
    })
    const found = m.flatMap((msg) => mentionsIn(msg))
    expect(found.sort()).toEqual(['!subteam^S0ONCALL', '@U0LEAD'])
    expect(text(m)).toContain('<!channel>') // shown as text, not parsed
  })
})

describe('states', () => {
  const colour: AskUserQuestionItem = {
    id: 'colour',
    question: 'Colour?',
    options: [{ label: 'Red' }, { label: 'Blue' }],
  }

  it('timed: a deadline in Slack date format and Take my time', () => {
    const m = render(card([colour], { deadline: NOW + 90_000 }))
    const all = JSON.stringify(m)
    expect(all).toContain(`<!date^${Math.floor((NOW + 90_000) / 1000)}^`)
    expect(all).toContain('|2030-01-02 03:05 UTC>')
    expect(verbs(m)).toContain('hold')
  })

  it('continued: still answerable, says so, no deadline and no Take my time', () => {
    const m = render(card([colour], { deadline: NOW, status: 'continued' }))
    expect(text(m)).toContain('The agent has continued; your answer will still reach it.')
    expect(verbs(m)).toEqual(['choose', 'choose', 'other'])
  })

  it('answered: what, by whom, when; no live components', () => {
    const m = render(
      card([colour], {
        status: 'answered',
        result: { answers: [{ id: 'colour', selected: ['Blue'] }] },
        answeredBy: { platform: 'slack', userId: 'U0ANN', name: 'Ann' },
        answeredAt: NOW,
      }),
    )
    expect(elements(m)).toEqual([])
    const shown = text(m)
    expect(shown).toContain('Answer: Blue')
    expect(shown).toContain('@Ann')
    expect(shown).toContain('2030-01-02 03:04 UTC')
  })

  it('answered from another platform names the person and the platform, escaped', () => {
    const m = render(
      card([colour], {
        status: 'answered',
        result: { answers: [{ id: 'colour', selected: ['Red'] }] },
        answeredBy: { platform: 'discord', userId: '1', name: '<@U0X> Zed' },
      }),
    )
    expect(text(m)).toContain('<@U0X> Zed (discord)')
    expect(m.flatMap((x) => mentionsIn(x))).toEqual([])
  })

  it.each([
    ['cancelled', 'Cancelled.'],
    ['elsewhere', 'Answered elsewhere.'],
  ] as const)('%s: says so, no live components', (status, words) => {
    const m = render(card([colour], { status, closedReason: 'cancelled' }))
    expect(elements(m)).toEqual([])
    expect(text(m)).toContain(words)
  })

  it('a batch shows shared drafts: chosen button highlighted, ticked boxes, skipped', () => {
    const ann = { platform: 'slack', userId: 'U0ANN', name: 'Ann' }
    const m = render(
      card(
        [
          colour,
          { id: 'r', question: 'Regions?', multiSelect: true, options: options(3) },
          { id: 'w', question: 'Why?' },
        ],
        {
          drafts: {
            colour: { selected: ['Blue'], by: ann },
            r: { selected: ['Option 2'], custom: 'and mars', by: ann },
            w: { selected: [], skipped: true, by: ann },
          },
        },
      ),
    )
    const els = elements(m)
    const blue = els.find((e) => e.type === 'button' && e.text.text === 'Blue')
    expect(blue?.type === 'button' && blue.style).toBe('primary')
    const boxes = els.find((e) => e.type === 'checkboxes')
    expect(boxes?.type === 'checkboxes' && boxes.initial_options?.map((o) => o.value)).toEqual(['2'])
    const shown = text(m)
    expect(shown).toContain('Selected: Blue — @Ann')
    expect(shown).toContain('Other: “and mars”')
    expect(shown).toContain('Skipped by @Ann')
  })
})

describe('approval and plan review', () => {
  const approval: AskUserQuestionItem = {
    id: 'deploy',
    question: 'Deploy 4f2c1?',
    detail: 'Fixes the login bug.',
    options: [{ label: 'yes' }, { label: 'no' }, { label: 'always' }],
    intent: {
      kind: 'approval',
      approve: 'yes',
      reject: 'no',
      always: 'always',
      subject: { name: 'deploy-bot', icon: 'https://example.com/icon.png' },
      display: {
        question: { en: 'Deploy 4f2c1 to production?', de: '4f2c1 in Produktion ausrollen?' },
        approve: { en: 'Deploy', de: 'Ausrollen' },
      },
    },
  }

  it('subject with icon, approve (primary), reject (danger), always; worded for the locale', () => {
    const m = render(card([approval]), { locale: 'de-AT' })
    const els = elements(m)
    expect(
      els.map((e) => [decodeComponentId(e.action_id)?.verb, e.type === 'button' ? e.style : undefined]),
    ).toEqual([
      ['approve', 'primary'],
      ['reject', 'danger'],
      ['always', undefined],
      ['approve', undefined],
      ['reject', undefined],
    ])
    expect(els[0]?.type === 'button' && els[0].text.text).toBe('Ausrollen')
    expect(text(m)).toContain('4f2c1 in Produktion ausrollen?')
    expect(JSON.stringify(m)).toContain('"image_url":"https://example.com/icon.png"')
    expect(text(render(card([approval])))).toContain('Deploy 4f2c1 to production?')
  })

  it('a non-URL icon is never loaded as an image', () => {
    const intent = { ...(approval.intent as object), subject: { name: 'bot', icon: 'javascript:alert(1)' } }
    const m = render(card([{ ...approval, intent } as AskUserQuestionItem]))
    expect(JSON.stringify(m)).not.toContain('image_url')
  })

  it('quorum progress', () => {
    const m = render(
      card([approval], { quorum: 2, approvals: [{ platform: 'slack', userId: 'U0ANN', name: 'Ann' }] }),
    )
    expect(text(m)).toContain('1 of 2 approvals: @Ann')
  })

  it.each([
    ['yes', 'Approved by @Ann'],
    ['no', 'Rejected by @Ann'],
    ['always', 'Always allowed by @Ann'],
  ])('finished with %s', (label, words) => {
    const m = render(
      card([approval], {
        status: 'answered',
        result: { answers: [{ id: 'deploy', selected: [label] }] },
        answeredBy: { platform: 'slack', userId: 'U0ANN', name: 'Ann' },
      }),
    )
    expect(text(m)).toContain(words)
    expect(elements(m)).toEqual([])
  })

  it.each([101, 102, 500])('plan review with %i options: every other option is in the menu', (n) => {
    const m = render(
      card([
        {
          id: 'p',
          question: 'Plan?',
          options: options(n, (i) => (i === 0 ? 'Go' : `Alt ${i}`)),
          intent: { kind: 'plan-review', approve: 'Go' },
        },
      ]),
    )
    const select = elements(m).find((e) => e.type === 'static_select')
    if (select?.type !== 'static_select') throw new Error('no select')
    const all = [...(select.options ?? []), ...(select.option_groups ?? []).flatMap((g) => g.options)]
    expect(all.map((o) => o.value)).toEqual(Array.from({ length: n - 1 }, (_, i) => String(i + 1)))
  })

  it('plan review with many options: approve, a menu of the rest, decline with feedback', () => {
    const m = render(
      card([
        {
          id: 'p',
          question: 'Plan?',
          detail: 'plan',
          options: options(7, (i) => (i === 3 ? 'Go' : `Alt ${i}`)),
          intent: { kind: 'plan-review', approve: 'Go' },
        },
      ]),
    )
    const els = elements(m)
    expect(els.map((e) => e.type)).toEqual(['button', 'static_select', 'button'])
    const select = els[1]
    expect(select?.type === 'static_select' && select.options?.map((o) => o.value)).toEqual([
      '0',
      '1',
      '2',
      '4',
      '5',
      '6',
    ])
  })
})
