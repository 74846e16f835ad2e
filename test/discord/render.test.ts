import type { APIButtonComponentWithCustomId, APIStringSelectComponent } from 'discord.js'
import { describe, expect, it } from 'vitest'
import { cardToDiscordMessages, type DiscordMessage, embedLength } from '../../adapters/discord/render.js'
import { cardRef, decodeComponentId } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem, AskUserQuestionOption } from '../../src/protocol/types.js'
import { validateMessage } from '../fakes/discord/validate.js'
import { mentions } from '../helpers/mentions.js'

function card(questions: AskUserQuestionItem[], extra: Partial<CardState> = {}): CardState {
  return { ...newCard({ callId: 'call-1', agentId: 'a', questions, now: 1_700_000_000_000 }), ...extra }
}

const opts = (
  n: number,
  f: (i: number) => Partial<AskUserQuestionOption> = () => ({}),
): AskUserQuestionOption[] => Array.from({ length: n }, (_, i) => ({ label: `Option ${i + 1}`, ...f(i) }))

/** Every message passes the fake's independent limit checks. */
function render(c: CardState, options: Parameters<typeof cardToDiscordMessages>[1] = {}): DiscordMessage[] {
  const messages = cardToDiscordMessages(c, options)
  for (const message of messages) expect(validateMessage(message, { strictMentions: true })).toEqual([])
  return messages
}

function components(messages: DiscordMessage[]) {
  return messages.flatMap((m) => m.components.flatMap((row) => row.components))
}
const buttons = (messages: DiscordMessage[]) =>
  components(messages).filter((c): c is APIButtonComponentWithCustomId => c.type === 2)
const selects = (messages: DiscordMessage[]) =>
  components(messages).filter((c): c is APIStringSelectComponent => c.type === 3)
const allText = (messages: DiscordMessage[]) =>
  messages
    .map((m) => [m.content, ...m.embeds.map((e) => `${e.title ?? ''} ${e.description ?? ''}`)].join(' '))
    .join(' ')
const verbs = (messages: DiscordMessage[]) =>
  components(messages).map((c) => ('custom_id' in c ? decodeComponentId(c.custom_id)?.verb : undefined))

describe('cardToDiscordMessages: options', () => {
  it('renders up to 5 single-select options as buttons (the limit) plus Other…', () => {
    const messages = render(card([{ id: 'q', question: 'Pick', options: opts(5) }]))
    expect(messages).toHaveLength(1)
    expect(buttons(messages).map((b) => b.label)).toEqual([
      'Option 1',
      'Option 2',
      'Option 3',
      'Option 4',
      'Option 5',
      'Other…',
    ])
    expect(messages[0]?.components).toHaveLength(2)
    expect(selects(messages)).toHaveLength(0)
  })

  it('keeps options and Other… in one row when they fit', () => {
    const messages = render(card([{ id: 'q', question: 'Pick', options: opts(3) }]))
    expect(messages[0]?.components).toHaveLength(1)
  })

  it('switches to a string select at 6 options (one past the button limit)', () => {
    const messages = render(card([{ id: 'q', question: 'Pick', options: opts(6) }]))
    const [select] = selects(messages)
    expect(select?.options).toHaveLength(6)
    expect(select?.max_values).toBe(1)
    expect(select?.options.map((o) => o.value)).toEqual(['0', '1', '2', '3', '4', '5'])
  })

  it('fits 25 options in one menu and pages the 26th into a second', () => {
    expect(selects(render(card([{ id: 'q', question: 'Pick', options: opts(25) }])))).toHaveLength(1)
    const paged = selects(render(card([{ id: 'q', question: 'Pick', options: opts(26) }])))
    expect(paged.map((s) => s.options.length)).toEqual([25, 1])
    expect(paged[1]?.options[0]?.value).toBe('25')
    expect(paged[1]?.placeholder).toContain('26–26 of 26')
    expect(paged.map((s) => decodeComponentId(s.custom_id))).toEqual([
      { ...cardRef({ agentId: 'a', callId: 'call-1' }), verb: 'set', q: 0, o: 0 },
      { ...cardRef({ agentId: 'a', callId: 'call-1' }), verb: 'set', q: 0, o: 1 },
    ])
  })

  it('continues in a second message past 5 action rows (125 options + Other)', () => {
    const messages = render(card([{ id: 'q', question: 'Pick', options: opts(125) }]))
    expect(messages).toHaveLength(2)
    expect(messages[0]?.components).toHaveLength(5)
    expect(selects(messages)).toHaveLength(5)
    expect(verbs(messages)).toContain('other')
  })

  it('uses a multi select with max_values for multiSelect, and Submit', () => {
    const messages = render(card([{ id: 'q', question: 'Pick', multiSelect: true, options: opts(3) }]))
    const [select] = selects(messages)
    expect(select).toMatchObject({ min_values: 0, max_values: 3 })
    expect(verbs(messages)).toContain('submit')
    const many = selects(render(card([{ id: 'q', question: 'Pick', multiSelect: true, options: opts(30) }])))
    expect(many.map((s) => s.max_values)).toEqual([25, 5])
  })

  it('shows button labels up to 80 whole, and lists longer ones in the text', () => {
    const at = 'x'.repeat(80)
    const past = `${'y'.repeat(80)}Z`
    const messages = render(card([{ id: 'q', question: 'Pick', options: [{ label: at }, { label: past }] }]))
    const labels = buttons(messages).map((b) => b.label)
    expect(labels[0]).toBe(at)
    expect(labels[1]).toHaveLength(80)
    expect(labels[1]?.endsWith('…')).toBe(true)
    expect(allText(messages)).toContain(`${'y'.repeat(80)}Z`)
  })

  it('shows select labels and descriptions up to 100 and never loses longer ones', () => {
    const options = opts(6, (i) =>
      i === 0
        ? { label: 'a'.repeat(100), description: 'd'.repeat(100) }
        : { label: `L${i}`, description: `${'e'.repeat(100)}!` },
    )
    const messages = render(card([{ id: 'q', question: 'Pick', options }]))
    const [select] = selects(messages)
    expect(select?.options[0]).toMatchObject({ label: 'a'.repeat(100), description: 'd'.repeat(100) })
    expect(select?.options[1]?.description).toHaveLength(100)
    expect(allText(messages)).toContain(`${'e'.repeat(100)}!`)
  })

  it('shows option descriptions with buttons in the text', () => {
    const messages = render(
      card([
        { id: 'q', question: 'Pick', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue' }] },
      ]),
    )
    expect(messages[0]?.embeds[0]?.description).toContain('Red')
    expect(messages[0]?.embeds[0]?.description).toContain('warm')
  })

  it('offers Answer… for a free-text question', () => {
    const messages = render(card([{ id: 'q', question: 'Why?' }]))
    expect(buttons(messages).map((b) => b.label)).toEqual(['Answer…'])
  })
})

describe('cardToDiscordMessages: text', () => {
  it('puts a 256-character question in the title and a 257-character one in the description', () => {
    const q256 = 'q'.repeat(256)
    expect(render(card([{ id: 'q', question: q256, options: opts(2) }]))[0]?.embeds[0]?.title).toBe(q256)
    const q257 = 'r'.repeat(257)
    const embed = render(card([{ id: 'q', question: q257, options: opts(2) }]))[0]?.embeds[0]
    expect(embed?.title).toBeUndefined()
    expect(embed?.description).toContain(q257)
  })

  it('keeps a header up to 256 as the embed author, longer in the text', () => {
    const h = 'h'.repeat(256)
    expect(
      render(card([{ id: 'q', question: 'Q', header: h, options: opts(2) }]))[0]?.embeds[0]?.author?.name,
    ).toBe(h)
    const long = `${'i'.repeat(256)}J`
    const messages = render(card([{ id: 'q', question: 'Q', header: long, options: opts(2) }]))
    expect(messages[0]?.embeds[0]?.author).toBeUndefined()
    expect(allText(messages)).toContain('J')
  })

  it('splits a long detail across embeds and messages without losing a word', () => {
    const words = Array.from({ length: 6000 }, (_, i) => `w${i}`)
    const detail = words.join(' ')
    const messages = render(card([{ id: 'q', question: 'Read this', detail, options: opts(2) }]))
    expect(messages.length).toBeGreaterThan(1)
    const text = messages.flatMap((m) => m.embeds.map((e) => e.description ?? '')).join(' ')
    expect(text.split(/\s+/).filter((w) => /^w\d+$/.test(w))).toEqual(words)
    // The buttons come after all of the text.
    expect(messages.at(-1)?.components.length).toBeGreaterThan(0)
    expect(messages.slice(0, -1).every((m) => m.components.length === 0)).toBe(true)
  })

  it('accepts a detail of exactly 4096 characters and one of 4097', () => {
    for (const n of [4096, 4097]) {
      const messages = render(card([{ id: 'q', question: 'Q', detail: 'z'.repeat(n), options: opts(2) }]))
      const zs = messages
        .flatMap((m) => m.embeds.map((e) => e.description ?? ''))
        .join('')
        .replace(/[^z]/g, '')
      expect(zs).toHaveLength(n)
    }
  })

  it('closes and reopens a code fence cut between embeds', () => {
    const code = Array.from({ length: 400 }, (_, i) => `line ${i} of the plan's code block`).join('\n')
    const plan = `# Plan\n\n\`\`\`ts\n${code}\n\`\`\`\n\nDone.`
    const messages = render(
      card([
        {
          id: 'plan',
          question: 'Approve this plan?',
          detail: plan,
          options: [{ label: 'Approve' }, { label: 'Revise' }],
          intent: { kind: 'plan-review', approve: 'Approve' },
        },
      ]),
    )
    const descriptions = messages.flatMap((m) => m.embeds.map((e) => e.description ?? '')).filter(Boolean)
    expect(descriptions.length).toBeGreaterThan(2)
    for (const d of descriptions) expect((d.match(/^```/gm) ?? []).length % 2).toBe(0)
    expect(descriptions.join('\n')).toContain('line 399 of')
  })

  it('escapes mentions in agent text and pings only configured mentions', () => {
    const messages = render(
      card([
        {
          id: 'q',
          question: 'Hey @everyone and @here',
          detail: 'cc <@123456789> <@&987654321> <@!42>',
          options: opts(2),
        },
      ]),
      {
        mention: [
          ...mentions('discord', 'role:110000000000000010', 'user:110000000000000011'),
          // Another platform's mention and a malformed id: neither is printed or allowed.
          { platform: 'slack', kind: 'group', id: 'S0ONCALL' },
          { platform: 'discord', kind: 'role', id: 'not-a-number' },
        ],
      },
    )
    const agentText = allText(messages).replace('<@&110000000000000010> <@110000000000000011>', '')
    expect(agentText).not.toMatch(/@everyone|@here|<@\d|<@&\d|<@!\d/)
    expect(messages[0]?.content).toContain('<@&110000000000000010>')
    expect(messages[0]?.content).toContain('<@110000000000000011>')
    expect(messages[0]?.allowed_mentions).toEqual({
      parse: [],
      roles: ['110000000000000010'],
      users: ['110000000000000011'],
    })
    for (const m of messages.slice(1)) expect(m.allowed_mentions).toEqual({ parse: [] })
  })
})

describe('cardToDiscordMessages: content limit', () => {
  it('keeps content within 2000 characters with 200 mentions, long names and a long reason', () => {
    const mention = Array.from({ length: 200 }, (_, i) => ({
      platform: 'discord',
      kind: i % 2 ? ('role' as const) : ('user' as const),
      id: `${1100000000000000000n + BigInt(i)}`,
    }))
    const people = Array.from({ length: 20 }, (_, i) => ({
      platform: 'discord',
      userId: String(i),
      name: 'N'.repeat(200),
    }))
    const open = card([{ id: 'q', question: 'Q', options: opts(2) }], {
      deadline: 1_700_000_090_000,
      holders: people,
    })
    const messages = render(open, { mention })
    const content = messages[0]?.content ?? ''
    expect(content.length).toBeLessThanOrEqual(2000)
    const shown = [...content.matchAll(/<@&?(\d+)>/g)].map((m) => m[1])
    const allowed = messages[0]?.allowed_mentions
    expect([...(allowed?.roles ?? []), ...(allowed?.users ?? [])].sort()).toEqual([...shown].sort())
    const cancelled = render({ ...open, status: 'cancelled', closedReason: 'r'.repeat(5000) }, { mention })
    expect(cancelled[0]?.content.length).toBeLessThanOrEqual(2000)
  })
})

describe('cardToDiscordMessages: batches', () => {
  const batch = (n: number) =>
    Array.from(
      { length: n },
      (_, i): AskUserQuestionItem => ({ id: `q${i}`, question: `Question ${i}`, options: opts(2) }),
    )

  it('gives each question its own embed, Skip, and one Submit', () => {
    const messages = render(card(batch(2)))
    expect(verbs(messages).filter((v) => v === 'skip')).toHaveLength(2)
    expect(verbs(messages).filter((v) => v === 'submit')).toHaveLength(1)
    expect(messages.flatMap((m) => m.embeds).map((e) => e.title)).toEqual(['1. Question 0', '2. Question 1'])
  })

  it('still works past 5 action rows (continuation messages, unique ids)', () => {
    const messages = render(card(batch(7)))
    expect(messages.length).toBeGreaterThan(1)
    for (const m of messages) {
      expect(m.components.length).toBeLessThanOrEqual(5)
      const ids = m.components.flatMap((r) => r.components.map((c) => ('custom_id' in c ? c.custom_id : '')))
      expect(new Set(ids).size).toBe(ids.length)
    }
    expect(verbs(messages).filter((v) => v === 'choose')).toHaveLength(14)
  })

  it('shows the shared draft (selected button, select defaults, skipped)', () => {
    const c = card([
      { id: 'a', question: 'A', options: opts(2) },
      { id: 'b', question: 'B', multiSelect: true, options: opts(3) },
      { id: 'c', question: 'C', options: opts(2) },
    ])
    c.drafts = {
      a: { selected: ['Option 2'], by: { platform: 'discord', userId: '1', name: 'Alice' } },
      b: { selected: ['Option 1', 'Option 3'] },
      c: { selected: [], skipped: true },
    }
    const messages = render(c)
    const chosen = buttons(messages).find((b) => b.label === 'Option 2')
    expect(chosen?.style).toBe(3)
    const [select] = selects(messages)
    expect(select?.options.filter((o) => o.default).map((o) => o.label)).toEqual(['Option 1', 'Option 3'])
    const text = allText(messages)
    expect(text).toContain('Selected:** Option 2')
    expect(text).toContain('Skipped')
  })
})

describe('cardToDiscordMessages: timed, approval, plan review, lifecycle', () => {
  it('shows a timed deadline as a Discord timestamp with Take my time', () => {
    const c = card([{ id: 'q', question: 'Q', options: opts(2) }], { deadline: 1_700_000_090_000 })
    const messages = render(c)
    expect(messages[0]?.content).toContain('<t:1700000090:R>')
    expect(verbs(messages)).toContain('hold')
    const continued = render({ ...c, status: 'continued' })
    expect(verbs(continued)).not.toContain('hold')
    expect(continued[0]?.content).not.toContain('<t:')
    expect(continued[0]?.content).toContain('still reach it')
  })

  const approval: AskUserQuestionItem = {
    id: 'deploy',
    question: 'Deploy 4f2c1 to production?',
    detail: 'Changes: …',
    options: [{ label: 'Approve' }, { label: 'Reject' }, { label: 'Always' }],
    intent: {
      kind: 'approval',
      approve: 'Approve',
      reject: 'Reject',
      always: 'Always',
      subject: { name: 'deploy-bot', icon: 'https://example.invalid/icon.png' },
      display: {
        question: { en: 'Deploy 4f2c1 to production?', de: '4f2c1 in Produktion ausrollen?' },
        approve: { en: 'Approve', de: 'Genehmigen' },
      },
    },
  }

  it('renders approval with subject, success/danger buttons, localized wording', () => {
    const messages = render(card([approval]), { locale: 'de' })
    expect(messages[0]?.embeds[0]).toMatchObject({
      title: '4f2c1 in Produktion ausrollen?',
      author: { name: 'deploy-bot', icon_url: 'https://example.invalid/icon.png' },
    })
    expect(buttons(messages).map((b) => [b.label, b.style, decodeComponentId(b.custom_id)?.verb])).toEqual([
      ['Genehmigen', 3, 'approve'],
      ['Reject', 4, 'reject'],
      ['Always', 2, 'always'],
      ['Approve with reason…', 2, 'approve'],
      ['Reject with reason…', 2, 'reject'],
    ])
    expect(render(card([approval]), { locale: 'en-GB' })[0]?.embeds[0]?.title).toBe(
      'Deploy 4f2c1 to production?',
    )
  })

  it('shows approval progress when a quorum is needed', () => {
    const c = card([approval], {
      quorum: 2,
      approvals: [{ platform: 'discord', userId: '1', name: 'Alice' }],
    })
    expect(render(c)[0]?.content).toContain('1 of 2 approvals: Alice')
  })

  it('renders plan review with approve and decline-with-feedback', () => {
    const messages = render(
      card([
        {
          id: 'plan',
          question: 'Approve the plan?',
          detail: '1. do it',
          options: [{ label: 'Approve' }, { label: 'Revise' }],
          intent: { kind: 'plan-review', approve: 'Approve' },
        },
      ]),
    )
    expect(buttons(messages).map((b) => [b.label, b.style])).toEqual([
      ['Approve', 3],
      ['Revise', 1],
      ['Decline with feedback…', 4],
    ])
  })

  it.each(['answered', 'cancelled', 'elsewhere'] as const)('shows no components when %s', (status) => {
    const c = card([{ id: 'q', question: 'Q', options: opts(2) }], {
      status,
      result: { answers: [{ id: 'q', selected: ['Option 1'] }] },
      answeredBy: { platform: 'discord', userId: '1', name: 'Alice' },
    })
    const messages = render(c)
    expect(components(messages)).toEqual([])
    expect(messages[0]?.content.length).toBeGreaterThan(0)
  })

  it('keeps every custom_id within 100 characters for the longest call id', () => {
    const callId = 'c'.repeat(64)
    const c = {
      ...card(Array.from({ length: 3 }, (_, i) => ({ id: `q${i}`, question: 'Q', options: opts(30) }))),
      callId,
    }
    for (const component of components(render({ ...c, deadline: 1 })))
      if ('custom_id' in component) expect(component.custom_id.length).toBeLessThanOrEqual(100)
  })
})

describe('agent text never looks like a ping, anywhere it is rendered', () => {
  const PING = /@everyone|@here|@EVERYONE|<@\d|<@&\d|<@!\d|<#\d/
  const bait = '@everyone @here @EVERYONE <@123456789> <@&987654321> <@!42> <#555>'
  /** Every string in the messages, wherever it sits (content, embeds, components). */
  const strings = (value: unknown): string[] =>
    typeof value === 'string'
      ? [value]
      : Array.isArray(value)
        ? value.flatMap(strings)
        : value && typeof value === 'object'
          ? Object.values(value).flatMap(strings)
          : []

  it('in the question, detail, header, option labels and descriptions (buttons and selects)', () => {
    for (const count of [2, 6]) {
      const messages = render(
        card([
          {
            id: 'q',
            question: `Q ${bait}`,
            header: `H ${bait}`,
            detail: `D ${bait}`,
            options: opts(count, (i) => ({ label: `L${i} ${bait}`, description: `d ${bait}` })),
          },
        ]),
      )
      for (const text of strings(messages)) expect(text).not.toMatch(PING)
      expect(messages[0]?.embeds[0]?.author?.name).toContain('H @')
    }
  })

  it('in approval subjects and localized display texts', () => {
    const messages = render(
      card([
        {
          id: 'deploy',
          question: 'Deploy?',
          options: [{ label: 'Approve' }, { label: 'Reject' }, { label: `Always ${bait}` }],
          intent: {
            kind: 'approval',
            approve: 'Approve',
            reject: 'Reject',
            always: `Always ${bait}`,
            subject: { name: `bot ${bait}` },
            display: {
              question: { en: `Deploy ${bait}` },
              detail: { en: `Detail ${bait}` },
              approve: { en: `OK ${bait}` },
            },
          },
        },
      ]),
    )
    for (const text of strings(messages)) expect(text).not.toMatch(PING)
  })

  it('in custom answers and names on finished cards, and batch drafts', () => {
    const alice = { platform: 'discord', userId: '1', name: `Alice ${bait}` }
    const questions: AskUserQuestionItem[] = [
      { id: 'a', question: 'A', options: opts(2) },
      { id: 'b', question: 'B' },
    ]
    const open = card(questions)
    open.drafts = { b: { selected: [], custom: `draft ${bait}`, by: alice } }
    const answered = card(questions, {
      status: 'answered',
      answeredBy: alice,
      result: {
        answers: [
          { id: 'a', selected: ['Option 1'], custom: `custom ${bait}` },
          { id: 'b', selected: [], custom: `why ${bait}` },
        ],
      },
    })
    for (const c of [open, answered]) for (const text of strings(render(c))) expect(text).not.toMatch(PING)
    const cancelled = card(questions, { status: 'cancelled', closedReason: `stopped ${bait}` })
    for (const text of strings(render(cancelled))) expect(text).not.toMatch(PING)
  })

  it('keeps an escaped title within 256 characters (a 256-character question with @everyone)', () => {
    const question = `${'x'.repeat(247)}@everyone`
    expect(question).toHaveLength(256)
    const messages = render(card([{ id: 'q', question, options: opts(2) }]))
    const embed = messages[0]?.embeds[0]
    expect(embed?.title).toBeUndefined()
    expect(embed?.description).toContain('x'.repeat(247))
    const header = `${'h'.repeat(247)}@everyone`
    const withHeader = render(card([{ id: 'q', question: 'Q', header, options: opts(2) }]))
    expect(withHeader[0]?.embeds[0]?.author).toBeUndefined()
    expect(allText(withHeader)).toContain('h'.repeat(247))
  })

  it('lists an 80-character label in the text when escaping pushes it past the button limit', () => {
    const label = `${'l'.repeat(71)}@everyone`
    expect(label).toHaveLength(80)
    const messages = render(card([{ id: 'q', question: 'Pick', options: [{ label }, { label: 'b' }] }]))
    expect(buttons(messages)[0]?.label).toHaveLength(80)
    expect(allText(messages)).toContain('l'.repeat(71))
  })
})

describe('cardToDiscordMessages: limits exactly and one past', () => {
  it('fills exactly 5 action rows in one message (100 options + Other), and continues at 101', () => {
    const at = render(card([{ id: 'q', question: 'Pick', options: opts(100) }]))
    expect(at).toHaveLength(1)
    expect(at[0]?.components).toHaveLength(5)
    const past = render(card([{ id: 'q', question: 'Pick', options: opts(101) }]))
    expect(past).toHaveLength(2)
    expect(past.map((m) => m.components.length)).toEqual([5, 1])
    expect(selects(past).flatMap((s) => s.options.map((o) => o.value))).toHaveLength(101)
  })

  it('shows a 100-character select label whole and lists a 101-character one in the text', () => {
    const options = opts(6, (i) =>
      i === 0 ? { label: 'a'.repeat(100) } : i === 1 ? { label: `${'b'.repeat(100)}C` } : {},
    )
    const messages = render(card([{ id: 'q', question: 'Pick', options }]))
    const [select] = selects(messages)
    expect(select?.options[0]?.label).toBe('a'.repeat(100))
    expect(select?.options[1]?.label).toHaveLength(100)
    expect(allText(messages)).toContain(`${'b'.repeat(100)}C`)
  })

  it('keeps a long plan within 10 embeds and 6000 characters per message, every step shown', () => {
    const detail = Array.from({ length: 4000 }, (_, i) => `step ${i}`).join('\n')
    const messages = render(
      card([{ id: 'q', question: 'q'.repeat(256), header: 'h'.repeat(256), detail, options: opts(2) }]),
    )
    for (const m of messages) {
      expect(m.embeds.length).toBeLessThanOrEqual(10)
      expect(m.embeds.reduce((n, e) => n + embedLength(e), 0)).toBeLessThanOrEqual(6000)
    }
    const text = messages.flatMap((m) => m.embeds.map((e) => e.description ?? '')).join('\n')
    const steps = text.split('\n').filter((line) => /^step \d+$/.test(line))
    expect(steps).toEqual(detail.split('\n'))
  })
})

describe('cardToDiscordMessages: holders', () => {
  it('shows who is taking their time only on a card with a deadline', () => {
    const holders = [{ platform: 'discord', userId: '1', name: 'Alice' }]
    const timed = render(card([{ id: 'q', question: 'Q', options: opts(2) }], { deadline: 1, holders }))
    expect(timed[0]?.content).toContain('Alice is taking their time')
    const untimed = render(card([{ id: 'q', question: 'Q', options: opts(2) }], { holders }))
    expect(untimed[0]?.content ?? '').not.toContain('taking their time')
  })
})
