import { describe, expect, it } from 'vitest'
import { applyInteraction } from '../../src/card/apply.js'
import { cardAnswer, newCard } from '../../src/card/lifecycle.js'
import type { CardAction, CardState, Interaction, Person } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { colour, regions } from '../helpers/service.js'

const ann: Person = { platform: 'slack', userId: 'U1', name: 'Ann' }
const bob: Person = { platform: 'discord', userId: '22', name: 'Bob' }
const cy: Person = { platform: 'slack', userId: 'U3', name: 'Cy' }
let n = 0
const act = (action: CardAction, actor: Person = ann, id = `i${++n}`): Interaction => ({
  id,
  actor,
  action,
  at: 1000 + n,
})

const freeText: AskUserQuestionItem = { id: 'why', question: 'Why?' }
const approval: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy?',
  detail: 'd',
  options: [{ label: 'Yes' }, { label: 'No' }, { label: 'Always' }],
  intent: { kind: 'approval', approve: 'Yes', reject: 'No', always: 'Always' },
}
const plan: AskUserQuestionItem = {
  id: 'plan',
  question: 'Approve the plan?',
  detail: '# Plan\n1. do it',
  options: [{ label: 'Approve' }, { label: 'Revise' }],
  intent: { kind: 'plan-review', approve: 'Approve' },
}

const card = (questions: AskUserQuestionItem[], extra: Partial<Parameters<typeof newCard>[0]> = {}) =>
  newCard({ callId: 'c', agentId: 'a', questions, now: 0, ...extra })

/** Apply a sequence, expecting every step to be accepted; returns the final state. */
function run(state: CardState, ...steps: Interaction[]): CardState {
  let s = state
  for (const step of steps) {
    const r = applyInteraction(s, step)
    if (!r.ok) throw new Error(`refused: ${r.refusal.message}`)
    s = r.state
  }
  return s
}

function refusal(state: CardState, step: Interaction) {
  const r = applyInteraction(state, step)
  if (r.ok) throw new Error('expected a refusal')
  return r.refusal
}

describe('completion', () => {
  it('a one-question single-select card completes on one click', () => {
    const r = applyInteraction(card([colour]), act({ type: 'choose', questionId: 'colour', label: 'Blue' }))
    expect(r).toMatchObject({ ok: true, completed: true })
    if (!r.ok) return
    expect(r.state.status).toBe('answered')
    expect(r.state.result).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
    expect(r.state.answeredBy).toEqual(ann)
  })

  it('a single-select chosen from a select menu completes too', () => {
    const r = applyInteraction(card([colour]), act({ type: 'set', questionId: 'colour', labels: ['Red'] }))
    expect(r.ok && r.completed && r.state.result).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
  })

  it('a multi-select completes on Submit, with custom beside labels', () => {
    const s = run(
      card([regions]),
      act({ type: 'toggle', questionId: 'regions', label: 'us' }),
      act({ type: 'toggle', questionId: 'regions', label: 'eu' }),
      act({ type: 'toggle', questionId: 'regions', label: 'ap' }),
      act({ type: 'toggle', questionId: 'regions', label: 'ap' }),
      act({ type: 'other', questionId: 'regions', text: 'mars' }),
    )
    expect(s.status).toBe('open')
    const done = run(s, act({ type: 'submit' }))
    // Labels come back in option order, whatever order they were clicked.
    expect(done.result).toEqual({ answers: [{ id: 'regions', selected: ['eu', 'us'], custom: 'mars' }] })
  })

  it('a batch completes on Submit once every question is answered or skipped', () => {
    const s = run(
      card([colour, regions, freeText]),
      act({ type: 'choose', questionId: 'colour', label: 'Red' }),
      act({ type: 'set', questionId: 'regions', labels: ['ap', 'eu'] }),
    )
    expect(refusal(s, act({ type: 'submit' }))).toMatchObject({
      code: 'incomplete',
      message: expect.stringContaining('Why?'),
    })
    const done = run(s, act({ type: 'skip', questionId: 'why' }), act({ type: 'submit' }, bob))
    expect(done.result).toEqual({
      answers: [
        { id: 'colour', selected: ['Red'] },
        { id: 'regions', selected: ['eu', 'ap'] },
        { id: 'why', selected: [] },
      ],
    })
    expect(done.answeredBy).toEqual(bob)
  })

  it('a batch where everything is skipped cannot be submitted', () => {
    const s = run(
      card([colour, regions]),
      act({ type: 'skip', questionId: 'colour' }),
      act({ type: 'skip', questionId: 'regions' }),
    )
    expect(refusal(s, act({ type: 'submit' })).code).toBe('incomplete')
  })

  it('single-select custom clears selected', () => {
    const s = run(
      card([colour, freeText]),
      act({ type: 'choose', questionId: 'colour', label: 'Red' }),
      act({ type: 'other', questionId: 'colour', text: 'Teal' }),
      act({ type: 'other', questionId: 'why', text: 'because' }),
      act({ type: 'submit' }),
    )
    expect(s.result).toEqual({
      answers: [
        { id: 'colour', selected: [], custom: 'Teal' },
        { id: 'why', selected: [], custom: 'because' },
      ],
    })
  })

  it('a free-text question completes when its text is submitted', () => {
    const r = applyInteraction(
      card([freeText]),
      act({ type: 'other', questionId: 'why', text: '  it is faster ' }),
    )
    expect(r.ok && r.completed && r.state.result).toEqual({
      answers: [{ id: 'why', selected: [], custom: 'it is faster' }],
    })
  })

  it('an approval completes on one of its actions', () => {
    for (const [type, label] of [
      ['approve', 'Yes'],
      ['reject', 'No'],
      ['always', 'Always'],
    ] as const) {
      const r = applyInteraction(card([approval]), act({ type }))
      expect(r.ok && r.completed && r.state.result).toEqual({
        answers: [{ id: 'deploy', selected: [label] }],
      })
    }
  })

  it('plan review: approve, decline, and decline with feedback as custom', () => {
    const ok = applyInteraction(card([plan]), act({ type: 'approve' }))
    expect(ok.ok && ok.state.result).toEqual({ answers: [{ id: 'plan', selected: ['Approve'] }] })
    const no = applyInteraction(card([plan]), act({ type: 'decline' }))
    expect(no.ok && no.state.result).toEqual({ answers: [{ id: 'plan', selected: ['Revise'] }] })
    const fb = applyInteraction(card([plan]), act({ type: 'decline', feedback: 'Add a rollback step' }))
    expect(fb.ok && fb.state.result).toEqual({
      answers: [{ id: 'plan', selected: [], custom: 'Add a rollback step' }],
    })
  })
})

describe('quorum', () => {
  it('2-of-3: a repeated approver counts once; the second distinct approver completes', () => {
    let s = card([approval], { quorum: 2 })
    const first = applyInteraction(s, act({ type: 'approve' }, ann))
    expect(first).toMatchObject({ ok: true, completed: false, notice: 'Approval recorded: 1 of 2.' })
    if (first.ok) s = first.state
    expect(refusal(s, act({ type: 'approve' }, ann)).code).toBe('already-approved')
    const second = applyInteraction(s, act({ type: 'approve' }, cy))
    expect(second.ok && second.completed && second.state.result).toEqual({
      answers: [{ id: 'deploy', selected: ['Yes'] }],
    })
  })

  it('one reject ends it', () => {
    const s = run(card([approval], { quorum: 3 }), act({ type: 'approve' }, ann))
    const r = applyInteraction(s, act({ type: 'reject' }, bob))
    expect(r.ok && r.completed && r.state.result).toEqual({ answers: [{ id: 'deploy', selected: ['No'] }] })
  })
})

describe('refusals never change state and always carry a message', () => {
  const cases: Array<[string, CardState, CardAction]> = [
    ['unknown label', card([colour]), { type: 'choose', questionId: 'colour', label: 'Green' }],
    ['unknown question', card([colour]), { type: 'choose', questionId: 'nope', label: 'Red' }],
    ['text over the limit', card([freeText]), { type: 'other', questionId: 'why', text: 'x'.repeat(10_001) }],
    ['empty text', card([freeText]), { type: 'other', questionId: 'why', text: '   ' }],
    [
      'two labels on single-select',
      card([colour, regions]),
      { type: 'set', questionId: 'colour', labels: ['Red', 'Blue'] },
    ],
    ['reject on a plain question', card([colour]), { type: 'reject' }],
    ['skip on an approval', card([approval]), { type: 'skip', questionId: 'deploy' }],
    ['skip on a one-question card', card([colour]), { type: 'skip', questionId: 'colour' }],
    [
      'always without an always option',
      card([
        {
          ...approval,
          options: [{ label: 'Yes' }, { label: 'No' }],
          intent: { kind: 'approval', approve: 'Yes', reject: 'No' },
        },
      ]),
      { type: 'always' },
    ],
  ]
  it.each(cases)('%s', (_name, state, action) => {
    const before = structuredClone(state)
    const r = applyInteraction(state, act(action))
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.refusal.message.length).toBeGreaterThan(0)
    expect(state).toEqual(before)
  })

  it('answering a finished card says who answered', () => {
    const done = run(card([colour]), act({ type: 'choose', questionId: 'colour', label: 'Red' }, bob))
    expect(refusal(done, act({ type: 'choose', questionId: 'colour', label: 'Blue' }))).toEqual({
      code: 'finished',
      message: 'This question was already answered by Bob.',
    })
  })
})

describe('idempotency and holds', () => {
  it('the same interaction delivered twice is applied once', () => {
    const click = act({ type: 'toggle', questionId: 'regions', label: 'eu' })
    const once = run(card([regions]), click)
    const twice = applyInteraction(once, click)
    expect(twice).toMatchObject({ ok: true, duplicate: true })
    expect(twice.ok && twice.state.drafts.regions?.selected).toEqual(['eu'])
  })

  it('a retried completing click on a finished card is a duplicate, not a refusal', () => {
    const click = act({ type: 'choose', questionId: 'colour', label: 'Red' })
    const done = run(card([colour]), click)
    expect(applyInteraction(done, click)).toMatchObject({ ok: true, duplicate: true })
  })

  it('hold and release track who is taking their time', () => {
    const held = run(
      card([freeText], { deadline: 5000 }),
      act({ type: 'hold' }, ann),
      act({ type: 'hold' }, bob),
    )
    expect(held.holders.map((p) => p.name)).toEqual(['Ann', 'Bob'])
    expect(run(held, act({ type: 'release' }, ann)).holders.map((p) => p.name)).toEqual(['Bob'])
  })

  it('a 10,000-character label stays the full answer value; emoji and markup pass through untouched', () => {
    const long = 'ü'.repeat(9_998) + '😀' // 10,000 UTF-16 units
    const weird: AskUserQuestionItem = {
      id: 'w',
      question: '<!channel> *bold* @everyone',
      options: [{ label: long }, { label: '<@U123> 🎉' }],
    }
    const s = run(card([weird]), act({ type: 'choose', questionId: 'w', label: long }))
    expect(cardAnswer(s).answers[0]?.selected[0]).toBe(long)
  })
})
