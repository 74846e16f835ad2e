/**
 * The schema table: each JSON-schema construct of an MCP elicitation -> the question it becomes
 * -> the `content` it yields, including refusals of invalid free text and schemas askbridge
 * cannot render.
 */
import { describe, expect, it } from 'vitest'
import { applyInteraction } from '../../src/card/apply.js'
import { footer, questionControls } from '../../src/card/controls.js'
import { checkFieldText } from '../../src/card/fields.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardAction, CardState } from '../../src/card/types.js'
import { elicitationContent, elicitationForm, isDeclined, RESPOND_ID } from '../../src/hooks/elicit.js'
import type { AskUserQuestionAnswerItem } from '../../src/protocol/types.js'
import { checkQuestions } from '../../src/protocol/validate.js'

const form = (properties: Record<string, unknown>, required: string[] = []) =>
  elicitationForm({ type: 'object', properties, required }, 'Fill this in')

const respond = { id: RESPOND_ID, selected: ['Send'] }

interface Row {
  name: string
  schema: Record<string, unknown>
  required?: boolean
  /** The question (without the message text askbridge adds to the first one). */
  question: { question: string; options?: string[]; multiSelect?: boolean; detail?: string }
  answer: Omit<AskUserQuestionAnswerItem, 'id'>
  content: unknown
  preset?: { selected: string[]; custom?: string }
}

const table: Row[] = [
  {
    name: 'untitled enum -> single select',
    schema: { type: 'string', title: 'Size', enum: ['s', 'm', 'l'] },
    required: true,
    question: { question: 'Size', options: ['s', 'm', 'l'] },
    answer: { selected: ['m'] },
    content: 'm',
  },
  {
    name: 'legacy enumNames -> titled single select',
    schema: { type: 'string', enum: ['eu-west-1', 'us-east-1'], enumNames: ['Europe', 'US East'] },
    required: true,
    question: { question: 'field', options: ['Europe', 'US East'] },
    answer: { selected: ['US East'] },
    content: 'us-east-1',
  },
  {
    name: 'titled oneOf -> single select, answering the const',
    schema: {
      type: 'string',
      title: 'Environment',
      description: 'Where to deploy',
      oneOf: [
        { const: 'staging', title: 'Staging' },
        { const: 'prod', title: 'Production' },
      ],
      default: 'staging',
    },
    required: true,
    question: { question: 'Environment', options: ['Staging', 'Production'], detail: 'Where to deploy' },
    answer: { selected: ['Production'] },
    content: 'prod',
    preset: { selected: ['Staging'] },
  },
  {
    name: 'array of enum -> multi select',
    schema: {
      type: 'array',
      title: 'Regions',
      items: { type: 'string', enum: ['eu', 'us', 'ap'] },
      default: ['eu'],
    },
    question: { question: 'Regions (optional)', options: ['eu', 'us', 'ap'], multiSelect: true },
    answer: { selected: ['eu', 'ap'] },
    content: ['eu', 'ap'],
    preset: { selected: ['eu'] },
  },
  {
    name: 'array of titled anyOf -> multi select',
    schema: {
      type: 'array',
      title: 'Checks',
      items: {
        anyOf: [
          { const: 'lint', title: 'Lint' },
          { const: 'unit', title: 'Unit tests' },
        ],
      },
      minItems: 1,
    },
    required: true,
    question: { question: 'Checks', options: ['Lint', 'Unit tests'], multiSelect: true },
    answer: { selected: ['Unit tests'] },
    content: ['unit'],
  },
  {
    name: 'boolean -> yes/no',
    schema: { type: 'boolean', title: 'Notify the team', default: true },
    required: true,
    question: { question: 'Notify the team', options: ['Yes', 'No'] },
    answer: { selected: ['No'] },
    content: false,
    preset: { selected: ['Yes'] },
  },
  {
    name: 'string with format -> free text',
    schema: { type: 'string', title: 'Contact', format: 'email' },
    required: true,
    question: { question: 'Contact' },
    answer: { selected: [], custom: 'ada@example.com' },
    content: 'ada@example.com',
  },
  {
    name: 'integer with bounds -> free text, typed as a number',
    schema: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 9, default: 3 },
    required: true,
    question: { question: 'Replicas' },
    answer: { selected: [], custom: ' 4 ' },
    content: 4,
    preset: { selected: [], custom: '3' },
  },
  {
    name: 'number -> free text',
    schema: { type: 'number', title: 'Budget' },
    question: { question: 'Budget (optional)' },
    answer: { selected: [], custom: '12.5' },
    content: 12.5,
  },
]

describe('elicitation schema table', () => {
  for (const row of table) {
    it(row.name, () => {
      const f = form({ field: row.schema }, row.required ? ['field'] : [])
      checkQuestions(f.questions)
      const [q, more] = f.questions
      expect(q?.id).toBe('field')
      expect(q?.question).toBe(row.question.question)
      expect(q?.options?.map((o) => o.label)).toEqual(row.question.options)
      expect(q?.multiSelect).toBe(row.question.multiSelect)
      if (row.question.detail) expect(q?.detail).toContain(row.question.detail)
      expect(q?.detail).toContain('Fill this in')
      // No pseudo-question: the card's own Submit and Decline send or refuse the form.
      expect(more).toBeUndefined()
      expect(f.fields.field?.required).toBe(row.required === true)
      expect(f.defaults.field).toEqual(row.preset)
      expect(elicitationContent(f, [{ id: 'field', ...row.answer }])).toEqual({ field: row.content })
    })
  }

  it('a skipped optional field is left out of the content; a required one cannot be missing', () => {
    const f = form({ a: { type: 'string' }, b: { type: 'string' } }, ['a'])
    expect(
      elicitationContent(f, [
        { id: 'a', selected: [], custom: 'x' },
        { id: 'b', selected: [] },
      ]),
    ).toEqual({ a: 'x' })
    expect(() =>
      elicitationContent(f, [
        { id: 'a', selected: [] },
        { id: 'b', selected: [] },
      ]),
    ).toThrow(/required field "a"/)
  })

  it('an empty form is a plain confirmation: Send or Decline', () => {
    const f = elicitationForm({ type: 'object', properties: {} }, 'Proceed with the migration?', 'db')
    expect(f.questions.map((q) => q.id)).toEqual([RESPOND_ID])
    expect(f.questions[0]?.detail).toContain('**db** asks: Proceed with the migration?')
    expect(elicitationContent(f, [respond])).toEqual({})
    expect(isDeclined([{ id: RESPOND_ID, selected: ['Decline'] }])).toBe(true)
    expect(isDeclined([respond])).toBe(false)
    // Its Decline is its own option: the card-wide decline is not offered, and not taken.
    const card = newCard({
      callId: 'c',
      agentId: 'a',
      questions: f.questions,
      now: 0,
      form: { fields: f.fields, defaults: f.defaults },
    })
    expect(footer(card)).toEqual([])
    const declined = applyInteraction(card, {
      id: 'i',
      actor: { platform: 'web', userId: 'ann' },
      action: { type: 'decline' },
      at: 1,
    })
    expect(declined.ok).toBe(false)
  })
})

describe('free text is refused before the form completes', () => {
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['email', { type: 'string', format: 'email' }, 'not-an-email', 'must be an email address'],
    [
      'uri',
      { type: 'string', format: 'uri' },
      'example dot com',
      'must be a URL (such as https://example.com)',
    ],
    ['date', { type: 'string', format: 'date' }, '31/12/2026', 'must be a date (YYYY-MM-DD)'],
    [
      'date-time',
      { type: 'string', format: 'date-time' },
      'tomorrow',
      'must be a date and time (such as 2026-05-01T09:30:00Z)',
    ],
    ['minLength', { type: 'string', minLength: 3 }, 'ab', 'must be at least 3 characters'],
    ['maxLength', { type: 'string', maxLength: 3 }, 'abcd', 'must be at most 3 characters'],
    [
      'pattern',
      { type: 'string', pattern: '^[A-Z]{3}-\\d+$' },
      'abc-1',
      'must match the pattern ^[A-Z]{3}-\\d+$',
    ],
    ['minimum', { type: 'number', minimum: 1 }, '0', 'must be at least 1'],
    ['maximum', { type: 'integer', maximum: 9 }, '10', 'must be at most 9'],
    ['not a number', { type: 'number' }, 'ten', 'must be a number'],
    ['not whole', { type: 'integer' }, '2.5', 'must be a whole number'],
    ['not an option', { type: 'string', enum: ['a', 'b'] }, 'c', 'must be one of the options (a, b)'],
  ]
  for (const [name, schema, text, message] of cases) {
    it(`${name}: "${text}" -> ${message}`, () => {
      const f = form({ field: schema }, ['field'])
      const rule = f.fields.field
      if (!rule) throw new Error('no rule')
      expect(checkFieldText(rule, text)).toEqual({ ok: false, message })
    })
  }

  it('valid text passes at each limit', () => {
    const f = form({
      s: { type: 'string', minLength: 3, maxLength: 3 },
      n: { type: 'integer', minimum: 1, maximum: 9 },
    })
    expect(checkFieldText(f.fields.s as never, 'abc')).toEqual({ ok: true, value: 'abc' })
    expect(checkFieldText(f.fields.n as never, '9')).toEqual({ ok: true, value: 9 })
    expect(checkFieldText(f.fields.n as never, '1')).toEqual({ ok: true, value: 1 })
  })
})

describe('the card enforces the form', () => {
  const f = form(
    {
      contact: { type: 'string', title: 'Contact', format: 'email' },
      replicas: { type: 'integer', title: 'Replicas', minimum: 1, default: 2 },
      tags: { type: 'array', title: 'Tags', items: { type: 'string', enum: ['a', 'b', 'c'] }, maxItems: 1 },
    },
    ['contact'],
  )
  const card = () =>
    newCard({
      callId: 'c1',
      agentId: 'a',
      questions: f.questions,
      now: 0,
      form: { fields: f.fields, defaults: f.defaults },
    })
  let n = 0
  const act = (state: CardState, action: CardAction) =>
    applyInteraction(state, { id: `i${n++}`, actor: { platform: 'web', userId: 'ann' }, action, at: 1 })
  const ok = (r: ReturnType<typeof act>): CardState => {
    if (!r.ok) throw new Error(r.refusal.message)
    return r.state
  }

  it('defaults are pre-selected', () => {
    const c = card()
    expect(c.drafts.replicas).toEqual({ selected: [], custom: '2' })
    expect(c.drafts[RESPOND_ID]).toBeUndefined()
  })

  it('invalid text is refused with a message naming the field; valid text is kept', () => {
    const refused = act(card(), { type: 'other', questionId: 'contact', text: 'nope' })
    expect(refused).toEqual({
      ok: false,
      refusal: { code: 'invalid', message: 'Contact must be an email address; please try again.' },
    })
    const c = ok(act(card(), { type: 'other', questionId: 'contact', text: 'ada@example.com' }))
    expect(c.drafts.contact?.custom).toBe('ada@example.com')
  })

  it('a required field cannot be skipped; an optional one can', () => {
    expect(act(card(), { type: 'skip', questionId: 'contact' })).toMatchObject({
      ok: false,
      refusal: { message: 'Contact is required; it cannot be skipped.' },
    })
    ok(act(card(), { type: 'skip', questionId: 'tags' }))
  })

  it('submit checks maxItems, then completes with the typed answers', () => {
    let c = ok(act(card(), { type: 'other', questionId: 'contact', text: 'ada@example.com' }))
    c = ok(act(c, { type: 'toggle', questionId: 'tags', label: 'a' }))
    c = ok(act(c, { type: 'toggle', questionId: 'tags', label: 'b' }))
    expect(act(c, { type: 'submit' })).toMatchObject({
      ok: false,
      refusal: { message: 'Tags: choose at most 1.' },
    })
    c = ok(act(c, { type: 'toggle', questionId: 'tags', label: 'a' }))
    const done = act(c, { type: 'submit' })
    if (!done.ok || !done.state.result) throw new Error('not completed')
    expect(elicitationContent(f, done.state.result.answers)).toEqual({
      contact: 'ada@example.com',
      replicas: 2,
      tags: ['b'],
    })
  })

  it('Decline completes the form in one action, without the required answers', () => {
    const done = act(card(), { type: 'decline' })
    if (!done.ok || !done.state.result) throw new Error('not completed')
    expect(done.state.result.answers).toEqual([
      { id: 'contact', selected: [] },
      { id: 'replicas', selected: [] },
      { id: 'tags', selected: [] },
    ])
    expect(isDeclined(done.state.result.answers)).toBe(true)
  })

  it('the card offers one Submit and one Decline; closed fields offer no free-text Other', () => {
    const c = card()
    expect(footer(c).map((x) => (x.kind === 'options' ? 'options' : x.label))).toEqual(['Submit', 'Decline'])
    const labels = (id: string) =>
      questionControls(
        c,
        c.questions.findIndex((q) => q.id === id),
      ).map((x) => (x.kind === 'options' ? 'options' : x.label))
    expect(labels('tags')).not.toContain('Other…')
    expect(labels('contact')).toContain('Answer…')
  })
})

describe('schemas askbridge cannot render are refused by name', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    [
      'a nested object',
      { type: 'object', properties: { a: { type: 'object', properties: {} } } },
      /properties\.a: a nested object/,
    ],
    ['$ref', { type: 'object', properties: { a: { $ref: '#/$defs/x' } } }, /properties\.a: "\$ref"/],
    [
      'an array of objects',
      { type: 'object', properties: { a: { type: 'array', items: { type: 'object' } } } },
      /properties\.a\.items/,
    ],
    [
      'an unknown format',
      { type: 'object', properties: { a: { type: 'string', format: 'ipv4' } } },
      /format "ipv4"/,
    ],
    ['a non-object root', { type: 'array' }, /type "array"/],
    [
      'an unknown keyword',
      { type: 'object', properties: { a: { type: 'string', if: {} } } },
      /the keyword "if"/,
    ],
  ]
  for (const [name, schema, message] of cases) {
    it(name, () => {
      expect(() => elicitationForm(schema, 'm')).toThrow(message)
      try {
        elicitationForm(schema, 'm')
      } catch (error) {
        expect((error as { code?: string }).code).toBe('UNSUPPORTED_SCHEMA')
      }
    })
  }
})
