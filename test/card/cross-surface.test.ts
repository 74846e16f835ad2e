/**
 * One card state, every surface, the same actions. Each surface renders the card with its real
 * renderer; every widget it shows (each button, each option of each menu or checkbox group) is
 * then used through that surface's real decoder, and what the card makes of it is collected. The
 * sets must be identical across Slack, Discord, Teams, the web inbox and the in-memory fake, and equal
 * to what the platform-neutral card view offers.
 */
import { describe, expect, it } from 'vitest'
import { onCard, type ParsedInteraction } from '../../adapters/discord/decode.js'
import { cardToDiscordMessages } from '../../adapters/discord/render.js'
import type { ActionElement, SlackOption } from '../../adapters/slack/blocks.js'
import { type DecodeResult, decodedOnCard } from '../../adapters/slack/decode.js'
import { cardToMessages } from '../../adapters/slack/render.js'
import { ACTION_KEY } from '../../adapters/teams/card-schema.js'
import { onCard as onTeamsCard } from '../../adapters/teams/decode.js'
import { cardToTeamsMessage } from '../../adapters/teams/render.js'
import { cardToWebView } from '../../adapters/web/view.js'
import { type ComponentRef, cardRef, decodeComponentId } from '../../src/card/codec.js'
import type { Control } from '../../src/card/controls.js'
import { newCard } from '../../src/card/lifecycle.js'
import { resolveComponent } from '../../src/card/resolve.js'
import type { CardAction, CardState, Person } from '../../src/card/types.js'
import { allControls, cardView, openControls } from '../../src/card/view.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { cardToMemoryMessage } from '../fakes/memory-adapter.js'

const NOW = 1_700_000_000_000
const ann: Person = { platform: 'slack', userId: 'U0ANN', name: 'Ann' }
const opts = (n: number, prefix = 'Option') =>
  Array.from({ length: n }, (_, i) => ({ label: `${prefix} ${i + 1}` }))

function card(questions: AskUserQuestionItem[], patch: Partial<CardState> = {}, quorum = 1): CardState {
  return { ...newCard({ callId: 'c1', agentId: 'agent', questions, now: NOW, quorum }), ...patch }
}

const approval = (always = false): AskUserQuestionItem => ({
  id: 'deploy',
  question: 'Deploy 4f2c1?',
  options: [{ label: 'Approve' }, { label: 'Reject' }, ...(always ? [{ label: 'Always' }] : [])],
  intent: { kind: 'approval', approve: 'Approve', reject: 'Reject', ...(always ? { always: 'Always' } : {}) },
})
const plan = (n: number, id = 'plan'): AskUserQuestionItem => ({
  id,
  question: 'Review the plan',
  detail: '1. a\n2. b',
  options: [{ label: 'Approve' }, ...opts(n - 1, 'Change')],
  intent: { kind: 'plan-review', approve: 'Approve' },
})
const single = (n: number, id = 'pick'): AskUserQuestionItem => ({
  id,
  question: 'Pick one',
  options: opts(n),
})
const multi = (n: number, id = 'many'): AskUserQuestionItem => ({
  id,
  question: 'Pick any',
  multiSelect: true,
  options: opts(n),
})
const free: AskUserQuestionItem = { id: 'why', question: 'Why?' }
const drafted = (label: string) => ({ selected: [label], by: ann, at: NOW })

const STATES: Array<[string, CardState]> = [
  ['single-select, 3 options', card([single(3)])],
  ['single-select, 7 options (menus)', card([single(7)])],
  ['single-select, 30 options (paged on Discord)', card([single(30)])],
  ['multi-select, 3 options', card([multi(3)])],
  ['multi-select, 12 options', card([multi(12)])],
  [
    'multi-select, 60 options with a draft on a later page',
    card([multi(60)], { drafts: { many: drafted('Option 40') } }),
  ],
  ['free text', card([free])],
  [
    'free text with a draft',
    card([free], { drafts: { why: { selected: [], custom: 'x', by: ann, at: NOW } } }),
  ],
  [
    'batch: single, multi, free with drafts',
    card([single(3), multi(4), free], { drafts: { pick: drafted('Option 2') } }),
  ],
  [
    'batch with a skipped question',
    card([single(3), free], { drafts: { why: { selected: [], skipped: true } } }),
  ],
  ['approval', card([approval()])],
  ['approval with always', card([approval(true)])],
  ['approval, quorum 2, one approval in', card([approval()], { approvals: [ann] }, 2)],
  ['plan review, 2 options', card([plan(2)])],
  ['plan review, 8 options', card([plan(8)])],
  ['plan review inside a batch (no decline there)', card([plan(3), single(2)])],
  ['timed: open with a deadline', card([single(3)], { deadline: NOW + 60_000 })],
  ['timed: someone is taking their time', card([multi(3)], { deadline: NOW + 60_000, holders: [ann] })],
  ['timed: continued', card([single(3)], { deadline: NOW + 60_000, status: 'continued' })],
  [
    'answered',
    card([single(3)], {
      status: 'answered',
      result: { answers: [{ id: 'pick', selected: ['Option 1'] }] },
      answeredBy: ann,
    }),
  ],
  ['cancelled', card([single(3)], { status: 'cancelled', closedReason: 'agent stopped' })],
  ['answered elsewhere', card([plan(2)], { status: 'elsewhere' })],
]

/** A card action as a comparable key; `value` names the option a menu value stood for. */
function key(action: CardAction, card: CardState, value?: string): string {
  const q = (id: string) => card.questions.findIndex((x) => x.id === id)
  switch (action.type) {
    case 'choose':
    case 'toggle':
      return `pick:${q(action.questionId)}:${action.label}`
    case 'set': {
      const index = value === undefined ? -1 : Number(value)
      const label = card.questions[q(action.questionId)]?.options?.[index]?.label
      if (label === undefined || !action.labels.includes(label)) return `bad-set:${action.labels.join('|')}`
      return `pick:${q(action.questionId)}:${label}`
    }
    case 'skip':
      return `skip:${q(action.questionId)}`
    case 'other':
      return `other:${q(action.questionId)}`
    case 'decline':
      return 'decline'
    default:
      return action.type
  }
}

/** A form a control opens, as a key: free text per question, a plan's decline, an approval's reason. */
function formKey(form: string, q: number | undefined): string {
  if (form === 'decline') return 'decline'
  if (form === 'approve' || form === 'reject') return `${form}-reason`
  return `other:${q}`
}

/** The card view's own offer, as keys: the reference every surface must match. */
function expected(c: CardState): string[] {
  return allControls(cardView(c)).flatMap((control) => {
    if (control.kind === 'options') {
      const id = c.questions[control.q]?.id ?? ''
      return control.options.map((o) => key({ type: 'choose', questionId: id, label: o.label }, c))
    }
    if (control.kind === 'form') return [formKey(control.form, control.ref.q)]
    return [control.ref.verb === 'skip' ? `skip:${control.ref.q}` : control.ref.verb]
  })
}

function slackKeys(c: CardState): string[] {
  const elements: ActionElement[] = cardToMessages(c).flatMap((m) =>
    m.blocks.flatMap((b) => (b.type === 'actions' ? b.elements : [])),
  )
  const use = (actionId: string, value?: string): string => {
    const ref = decodeComponentId(actionId) as ComponentRef
    const result: DecodeResult = decodedOnCard(
      { id: 'd', ref, actor: ann, at: NOW, ...(value === undefined ? {} : { values: [value] }) },
      c,
    )
    if (result.kind === 'interaction') return key(result.inbound.interaction.action, c, value)
    if (result.kind === 'modal') return formKey(result.modal, result.q)
    return `refused:${result.message}`
  }
  return elements.flatMap((e) => {
    if (e.type === 'button') return [use(e.action_id)]
    const all: SlackOption[] =
      e.type === 'checkboxes' ? e.options : (e.options ?? e.option_groups?.flatMap((g) => g.options) ?? [])
    return all.map((o) => use(e.action_id, o.value))
  })
}

function discordKeys(c: CardState): string[] {
  const components = cardToDiscordMessages(c).flatMap((m) => m.components.flatMap((r) => r.components))
  const use = (customId: string, values: string[] = []): string => {
    const parsed: ParsedInteraction = {
      id: '1',
      applicationId: 'app',
      token: 't',
      source: 'component',
      ref: decodeComponentId(customId) as ComponentRef,
      actor: { platform: 'discord', userId: '42' },
      at: NOW,
      values,
    }
    const decoded = onCard(parsed, c)
    if (decoded.kind === 'apply') return key(decoded.inbound.interaction.action, c, values[0])
    if (decoded.kind === 'modal') return formKey(decoded.modal, decoded.q)
    return `refused:${decoded.message}`
  }
  return components.flatMap((component) => {
    if (component.type === 2 && 'custom_id' in component) return [use(component.custom_id)]
    if (component.type === 3) return component.options.map((o) => use(component.custom_id, [o.value]))
    return ['unknown-component']
  })
}

/**
 * Teams: every Action.Execute, every choice of every choice set (through its Save) and every text
 * input (through its own Send, with something typed), decoded as an invoke would be.
 */
function teamsKeys(c: CardState): string[] {
  type Json = Record<string, unknown>
  const all: Json[] = []
  const visit = (x: unknown) => {
    if (Array.isArray(x)) x.forEach(visit)
    else if (x && typeof x === 'object') {
      all.push(x as Json)
      for (const v of Object.values(x)) visit(v)
    }
  }
  visit(cardToTeamsMessage(c).attachments[0].content)
  const idOf = (action: Json) => String((action.data as Json)[ACTION_KEY])
  const use = (id: string, inputs: Record<string, string> = {}) => {
    const decoded = onTeamsCard(
      {
        id: 'i',
        actor: { platform: 'teams', userId: 'aad' },
        teamsUserId: '29:aad',
        ref: decodeComponentId(id) as ComponentRef,
        inputs: new Map(Object.entries(inputs)),
        conversationId: '19:c@thread.tacv2',
        at: NOW,
      },
      c,
    )
    if (decoded.kind === 'refuse') return [`refused:${decoded.message}`]
    return decoded.steps.map((s) => s.interaction.action)
  }
  const inputIds = new Set(all.filter((e) => String(e.type).startsWith('Input.')).map((e) => String(e.id)))
  return all.flatMap((e) => {
    if (e.type === 'Input.Text') {
      const id = String(e.id)
      return use(id, { [id]: 'typed' }).map((a) =>
        typeof a === 'string'
          ? a
          : (a.type === 'approve' || a.type === 'reject') && a.reason
            ? `${a.type}-reason`
            : key(a, c),
      )
    }
    if (e.type === 'Input.ChoiceSet') {
      const id = String(e.id)
      return (e.choices as Json[]).flatMap((choice) =>
        use(id, { [id]: String(choice.value) }).map((a) =>
          typeof a === 'string' ? a : key(a, c, String(choice.value)),
        ),
      )
    }
    if (e.type === 'Action.Execute' && !inputIds.has(idOf(e)))
      return use(idOf(e)).map((a) => (typeof a === 'string' ? a : key(a, c)))
    return []
  })
}

/** The inbox page turns each control into a widget and each use into the named card action. */
function webKeys(c: CardState): string[] {
  const view = cardToWebView(c)
  const controls = [
    ...view.questions.flatMap((q, qi) => q.controls.map((control) => ({ control, qi }))),
    ...view.footer.map((control) => ({ control, qi: -1 })),
  ]
  return controls.flatMap(({ control, qi }) => {
    const id = c.questions[qi]?.id ?? ''
    if (control.kind === 'options')
      return control.options.map((o) =>
        key({ type: control.mode === 'any' ? 'toggle' : 'choose', questionId: id, label: o.label }, c),
      )
    if (control.kind === 'form') return [formKey(control.form, qi)]
    if (control.verb === 'skip') return [key({ type: 'skip', questionId: id }, c)]
    return [control.verb]
  })
}

function memoryKeys(c: CardState): string[] {
  return cardToMemoryMessage(c).components.flatMap((componentId) => {
    const ref = decodeComponentId(componentId) as ComponentRef
    // A menu component: use it once per option it offers (the options of its question).
    const menu = ref.o === undefined && (ref.verb === 'set' || ref.verb === 'choose')
    const values = menu ? (c.questions[ref.q ?? 0]?.options ?? []).map((_, i) => String(i)) : [undefined]
    return values.flatMap((value) => {
      const r = resolveComponent(ref, value === undefined ? {} : { values: [value] }, c)
      if (r.kind === 'action') return [key(r.action, c, value)]
      if (r.kind === 'form') return [formKey(r.form, r.q)]
      return menu ? [] : [`refused:${r.refusal.message}`] // a menu value outside the offer is not shown
    })
  })
}

const sorted = (keys: string[]) => [...new Set(keys)].sort()

describe('cross-surface: the same card state offers the same actions everywhere', () => {
  it('covers 20 or more card states', () => {
    expect(STATES.length).toBeGreaterThanOrEqual(20)
  })

  it.each(STATES)('%s', (_name, c) => {
    const want = sorted(expected(c))
    expect(sorted(slackKeys(c)), 'Slack').toEqual(want)
    expect(sorted(discordKeys(c)), 'Discord').toEqual(want)
    expect(sorted(teamsKeys(c)), 'Teams').toEqual(want)
    expect(sorted(webKeys(c)), 'web inbox').toEqual(want)
    expect(sorted(memoryKeys(c)), 'memory fake').toEqual(want)
    if (c.status === 'open' || c.status === 'continued') expect(want.length).toBeGreaterThan(0)
    else expect(want).toEqual([])
    // What clicks resolve against (openControls) is the open card's view, control for control.
    const refs = (controls: Control[]) =>
      controls.map((x) => JSON.stringify(['ref' in x ? x.ref : [x.q, x.options.length], x.kind]))
    expect(refs(openControls(c))).toEqual(refs(allControls(cardView({ ...c, status: 'open' }))))
  })

  it('what the card offers follows its rules', () => {
    const offer = (name: string) => sorted(expected(STATES.find(([n]) => n === name)?.[1] as CardState))
    expect(offer('approval with always')).toEqual([
      'always',
      'approve',
      'approve-reason',
      'reject',
      'reject-reason',
    ])
    expect(offer('plan review, 2 options')).toEqual(['approve', 'decline', 'pick:0:Change 1'])
    // A plan review inside a batch is an ordinary question: no approve button, no decline.
    const batch = offer('plan review inside a batch (no decline there)')
    expect(batch).not.toContain('decline')
    expect(batch).not.toContain('approve')
    expect(batch).toEqual(expect.arrayContaining(['pick:0:Approve', 'other:0', 'skip:0', 'skip:1', 'submit']))
    expect(offer('timed: open with a deadline')).toContain('hold')
    expect(offer('timed: continued')).not.toContain('hold')
    expect(offer('multi-select, 3 options')).toContain('submit')
    expect(offer('single-select, 3 options')).not.toContain('submit')
  })

  it('a control the card does not offer resolves to a refusal on every path', () => {
    const batch = STATES.find(([n]) => n.startsWith('plan review inside'))?.[1] as CardState
    const decline: ComponentRef = { ...cardRef(batch), verb: 'decline', q: 0 }
    expect(resolveComponent(decline, {}, batch)).toMatchObject({ kind: 'refusal' })
    expect(resolveComponent(decline, { text: 'no' }, batch)).toMatchObject({ kind: 'refusal' })
    const approve: ComponentRef = { ...cardRef(batch), verb: 'approve' }
    expect(resolveComponent(approve, {}, batch)).toMatchObject({ kind: 'refusal' })
  })

  it('a plan review’s decline names its question; one naming none (never rendered) is refused', () => {
    const review = STATES.find(([n]) => n === 'plan review, 2 options')?.[1] as CardState
    expect(resolveComponent({ ...cardRef(review), verb: 'decline', q: 0 }, {}, review)).toEqual({
      kind: 'form',
      form: 'decline',
      q: 0,
    })
    expect(resolveComponent({ ...cardRef(review), verb: 'decline' }, {}, review)).toMatchObject({
      kind: 'refusal',
      refusal: { code: 'unknown-question' },
    })
  })
})
