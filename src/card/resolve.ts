/**
 * A used component -> what it means on this card: the inverse of {@link cardView}. Every surface
 * decodes its payload to a component reference (src/card/codec.ts) plus what the person entered,
 * and calls this; no surface maps ids to actions itself.
 */

import { type ComponentRef, refMatches } from './codec.js'
import type { Control, FormKind } from './controls.js'
import { finishedRefusal, isLive } from './lifecycle.js'
import type { CardAction, CardState, Refusal } from './types.js'
import { openControls } from './view.js'

/** What came with the component. */
export interface ComponentInput {
  /** Values chosen in a menu or checkbox group: option indexes as strings. */
  values?: readonly string[]
  /** Text typed into a form; present only for a form's submission. */
  text?: string
  /**
   * The options a paged menu showed (`from` inclusive, `to` exclusive). A multi-select keeps
   * what was chosen outside that range; a value outside it is refused.
   */
  window?: { from: number; to: number }
}

export type Resolution =
  | { kind: 'action'; action: CardAction }
  /** A form should open (the surface shows it, and claims the timed wait with `hold` meanwhile). */
  | { kind: 'form'; form: FormKind; q: number }
  | { kind: 'refusal'; refusal: Refusal }

const refuse = (code: Refusal['code'], message: string): Resolution => ({
  kind: 'refusal',
  refusal: { code, message },
})
const act = (action: CardAction): Resolution => ({ kind: 'action', action })

const NOT_OFFERED = 'That control is not offered on this card.'
const unknownOption = () => refuse('unknown-option', 'That option is not on this card.')

/**
 * Resolve a component against the card. What it may mean is what {@link cardView} offers on the
 * card while open, so a click on a message rendered a moment ago still resolves; whether the card
 * still takes it (finished, duplicate, incomplete) is {@link applyInteraction}'s decision.
 */
export function resolveComponent(ref: ComponentRef, input: ComponentInput, card: CardState): Resolution {
  if (!refMatches(ref, card)) return refuse('unknown-question', 'That control belongs to another card.')
  const offered = offeredOn(card)
  // An approval's "… with reason" form: its id names the question; the plain buttons name none.
  if ((ref.verb === 'approve' || ref.verb === 'reject') && ref.q !== undefined && card.kind === 'approval') {
    return resolveReason(ref.verb, ref.q, input, card, offered)
  }
  switch (ref.verb) {
    case 'approve':
    case 'reject':
    case 'always':
    case 'submit':
    case 'hold':
      return offered.button(ref.verb) ? act({ type: ref.verb }) : refuse('not-applicable', NOT_OFFERED)
    case 'page':
      return refuse('not-applicable', 'That control is no longer used.')
    default:
      break
  }
  // A form's Decline (one click, in the footer) names no question.
  if (ref.verb === 'decline' && ref.q === undefined && offered.button('decline'))
    return act({ type: 'decline' })
  const q = ref.q
  const question = q === undefined ? undefined : card.questions[q]
  if (!question || q === undefined) return refuse('unknown-question', 'That question is not on this card.')
  switch (ref.verb) {
    case 'skip':
      return offered.button('skip', ref.q)
        ? act({ type: 'skip', questionId: question.id })
        : refuse('not-applicable', NOT_OFFERED)
    case 'other':
    case 'form':
    case 'decline':
      return resolveForm(ref.verb, { q, question }, input, card, offered)
    default:
      return resolveOptions(ref, { q, question }, input, offered)
  }
}

/** The controls open on a card, looked up the ways a component names them. */
interface Offered {
  button(verb: ComponentRef['verb'], index?: number): Control | undefined
  form(verb: FormKind, index: number): Extract<Control, { kind: 'form' }> | undefined
  picker(q: number): Extract<Control, { kind: 'options' }> | undefined
}

function offeredOn(card: CardState): Offered {
  const offered = openControls(card)
  return {
    button: (verb, index) =>
      offered.find((c) => c.kind === 'button' && c.ref.verb === verb && c.ref.q === index),
    form: (verb, index) =>
      offered.find(
        (c): c is Extract<Control, { kind: 'form' }> =>
          c.kind === 'form' && c.ref.verb === verb && c.ref.q === index,
      ),
    picker: (q) =>
      offered.find((c): c is Extract<Control, { kind: 'options' }> => c.kind === 'options' && c.q === q),
  }
}

/** A question of the card, with its index. */
interface Asked {
  q: number
  question: CardState['questions'][number]
}

/** The form opens while the card is live; a finished card refuses as it would refuse a click. */
function openForm(form: FormKind, q: number, card: CardState): Resolution {
  if (!isLive(card)) return { kind: 'refusal', refusal: finishedRefusal(card) }
  return { kind: 'form', form, q }
}

/** An approval's "approve/reject with reason": open its form, or act on the reason typed. */
function resolveReason(
  verb: 'approve' | 'reject',
  q: number,
  input: ComponentInput,
  card: CardState,
  offered: Offered,
): Resolution {
  if (!offered.form(verb, q)) return refuse('not-applicable', NOT_OFFERED)
  if (input.text === undefined) return openForm(verb, q, card)
  const reason = input.text.trim()
  return act(reason ? { type: verb, reason } : { type: verb })
}

/** "Other…" or a plan review's decline: open the form, or act on what was typed in it. */
function resolveForm(
  verb: 'other' | 'form' | 'decline',
  { q, question }: Asked,
  input: ComponentInput,
  card: CardState,
  offered: Offered,
): Resolution {
  const kind = verb === 'decline' ? 'decline' : 'other'
  if (!offered.form(kind, q)) return refuse('not-applicable', NOT_OFFERED)
  if (input.text === undefined) {
    if (verb === 'form') return refuse('not-applicable', 'That is not a button.')
    return openForm(kind, q, card)
  }
  const text = input.text.trim()
  if (kind === 'decline') return act(text ? { type: 'decline', feedback: text } : { type: 'decline' })
  return act({ type: 'other', questionId: question.id, text })
}

/** Options: choose/toggle name one option; choose/set without one carry menu values. */
function resolveOptions(
  ref: ComponentRef,
  asked: Asked,
  input: ComponentInput,
  offered: Offered,
): Resolution {
  const picker = offered.picker(asked.q)
  if (!picker) return refuse('not-applicable', NOT_OFFERED)
  const { question } = asked
  // Real labels from the card (the view's are cleaned for display), for the options offered.
  const allowed = new Map(picker.options.map((o) => [o.index, question.options?.[o.index]?.label ?? '']))
  if ((ref.verb === 'choose' || ref.verb === 'toggle') && ref.o !== undefined) {
    const label = allowed.get(ref.o)
    if (label === undefined) return unknownOption()
    if (ref.verb === 'toggle' && picker.mode !== 'any') return refuse('not-applicable', NOT_OFFERED)
    return act({ type: ref.verb, questionId: question.id, label })
  }
  if (ref.verb !== 'choose' && ref.verb !== 'set') return refuse('not-applicable', NOT_OFFERED)
  return resolveMenu(picker, allowed, question.id, input)
}

/** A menu's or checkbox group's values: option indexes, within the window the menu showed. */
function resolveMenu(
  picker: Extract<Control, { kind: 'options' }>,
  allowed: ReadonlyMap<number, string>,
  questionId: string,
  input: ComponentInput,
): Resolution {
  const from = input.window?.from ?? 0
  const to = input.window?.to ?? Number.POSITIVE_INFINITY
  const chosen: number[] = []
  for (const value of input.values ?? []) {
    const index = /^\d{1,4}$/.test(value) ? Number(value) : -1
    if (!allowed.has(index) || index < from || index >= to) return unknownOption()
    if (!chosen.includes(index)) chosen.push(index)
  }
  if (picker.mode === 'one') {
    const [first, ...more] = chosen
    if (first === undefined) return refuse('incomplete', 'Nothing was chosen.')
    if (more.length > 0) return refuse('not-applicable', 'Choose only one option.')
    return act({ type: 'choose', questionId, label: allowed.get(first) as string })
  }
  // A menu showing part of the options keeps what was chosen outside it.
  const kept = picker.options.filter((o) => o.chosen && (o.index < from || o.index >= to)).map((o) => o.index)
  const indexes = [...kept, ...chosen]
  const labels = picker.options
    .filter((o) => indexes.includes(o.index))
    .map((o) => allowed.get(o.index) as string)
  return act({ type: 'set', questionId, labels })
}
