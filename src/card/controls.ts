/**
 * The controls of the card view (view.ts): which buttons, pickers and forms each question and
 * the card's footer offer, and the words every surface uses for them.
 */
import type { ComponentRef } from './codec.js'
import type { CardState } from './types.js'

/** How strongly a surface should present a control (maps to button styles/colours). */
export type Tone = 'primary' | 'danger' | 'neutral'

export interface OptionView {
  /** Index in the question's options (what component ids carry). */
  index: number
  label: string
  description?: string
  /** In the shared draft right now. */
  chosen: boolean
}

/** A component reference without the call's reference (the renderer adds it). */
export type ControlRef = Omit<ComponentRef, 'callId' | 'agent'>

/**
 * The text forms a card opens: `other` (a free-text answer), `decline` (plan review feedback),
 * `approve` / `reject` (an approval with an optional reason, askbridge's own note beside the answer).
 */
export type FormKind = 'other' | 'decline' | 'approve' | 'reject'

/** One thing a person can use on the card. */
export type Control =
  /** A plain action: approve, reject, always, skip, submit, hold. */
  | { kind: 'button'; ref: ControlRef; label: string; tone: Tone }
  /**
   * Opens a text form: "Other…", "Answer…", "Decline with feedback…". The form's submission
   * carries the same ref plus the text.
   */
  | { kind: 'form'; ref: ControlRef; label: string; tone: Tone; form: FormKind }
  /**
   * A pick among options: `one` completes or sets a single choice, `any` toggles a multi-select.
   * The surface chooses the widget (buttons, select menu, checkboxes) within its limits; option
   * refs are `{verb: 'choose'|'toggle', q, o}` per option or `{verb: 'choose'|'set', q}` for a menu.
   */
  | { kind: 'options'; q: number; mode: 'one' | 'any'; options: OptionView[]; prompt: string }

/** The words every surface uses, so no renderer invents its own. */
export const CARD_WORDS = {
  other: 'Other…',
  answer: 'Answer…',
  changeAnswer: 'Change answer…',
  skip: 'Skip',
  skipped: 'Skipped',
  submit: 'Submit',
  hold: 'Take my time',
  decline: 'Decline with feedback…',
  declineForm: 'Decline',
  approveWithReason: 'Approve with reason…',
  rejectWithReason: 'Reject with reason…',
  chooseOne: 'Choose…',
  chooseAny: 'Choose one or more…',
  otherResponses: 'Other responses…',
} as const

/** A form with fields (an MCP elicitation): Submit and Decline, each one click. */
export function isForm(card: CardState): boolean {
  return card.kind === 'questions' && Object.values(card.fields ?? {}).some((f) => f.kind !== 'decision')
}

/** Form fields whose values are their options only (an enum, a boolean): no free-text Other. */
function closedField(card: CardState, id: string): boolean {
  const kind = card.fields?.[id]?.kind
  return kind === 'single' || kind === 'multi' || kind === 'boolean'
}

/** Whether the card needs a Submit (batches, and a multi-select question, which never completes alone). */
function wantsSubmit(card: CardState): boolean {
  if (card.kind !== 'questions') return false
  if (isForm(card)) return true
  return (
    card.questions.length > 1 || card.questions.some((q) => q.multiSelect && (q.options?.length ?? 0) > 0)
  )
}

export function questionControls(card: CardState, index: number): Control[] {
  const q = card.questions[index]
  if (!q) return []
  const intent = q.intent
  const draft = card.drafts[q.id]
  const chosen = new Set(draft && !draft.skipped ? draft.selected : [])
  const options = (q.options ?? []).map(
    (o, k): OptionView => ({
      index: k,
      label: o.label,
      ...(o.description ? { description: o.description } : {}),
      chosen: chosen.has(o.label),
    }),
  )
  if (card.kind === 'approval' && intent?.kind === 'approval') {
    const controls: Control[] = [
      { kind: 'button', ref: { verb: 'approve' }, label: intent.approve, tone: 'primary' },
      { kind: 'button', ref: { verb: 'reject' }, label: intent.reject, tone: 'danger' },
    ]
    if (intent.always !== undefined)
      controls.push({ kind: 'button', ref: { verb: 'always' }, label: intent.always, tone: 'neutral' })
    // The same decisions with a typed reason (the answer stays the option label).
    controls.push(
      {
        kind: 'form',
        ref: { verb: 'approve', q: index },
        label: CARD_WORDS.approveWithReason,
        tone: 'neutral',
        form: 'approve',
      },
      {
        kind: 'form',
        ref: { verb: 'reject', q: index },
        label: CARD_WORDS.rejectWithReason,
        tone: 'neutral',
        form: 'reject',
      },
    )
    return controls
  }
  if (card.kind === 'plan-review' && intent?.kind === 'plan-review') {
    const others = options.filter((o) => o.label !== intent.approve)
    const controls: Control[] = [
      { kind: 'button', ref: { verb: 'approve' }, label: intent.approve, tone: 'primary' },
    ]
    if (others.length > 0)
      controls.push({
        kind: 'options',
        q: index,
        mode: 'one',
        options: others,
        prompt: CARD_WORDS.otherResponses,
      })
    controls.push({
      kind: 'form',
      ref: { verb: 'decline', q: index },
      label: CARD_WORDS.decline,
      tone: 'danger',
      form: 'decline',
    })
    return controls
  }
  const controls: Control[] = []
  if (options.length === 0) {
    controls.push({
      kind: 'form',
      ref: { verb: 'other', q: index },
      label: draft?.custom ? CARD_WORDS.changeAnswer : CARD_WORDS.answer,
      tone: 'primary',
      form: 'other',
    })
  } else {
    const any = q.multiSelect === true
    controls.push({
      kind: 'options',
      q: index,
      mode: any ? 'any' : 'one',
      options,
      prompt: any ? CARD_WORDS.chooseAny : CARD_WORDS.chooseOne,
    })
    if (!closedField(card, q.id))
      controls.push({
        kind: 'form',
        ref: { verb: 'other', q: index },
        label: CARD_WORDS.other,
        tone: 'neutral',
        form: 'other',
      })
  }
  // A required form field cannot be skipped, so it offers no Skip.
  if (card.questions.length > 1 && !card.fields?.[q.id]?.required)
    controls.push({
      kind: 'button',
      ref: { verb: 'skip', q: index },
      label: draft?.skipped ? CARD_WORDS.skipped : CARD_WORDS.skip,
      tone: 'neutral',
    })
  return controls
}

export function footer(card: CardState): Control[] {
  const controls: Control[] = []
  if (wantsSubmit(card))
    controls.push({ kind: 'button', ref: { verb: 'submit' }, label: CARD_WORDS.submit, tone: 'primary' })
  if (isForm(card))
    controls.push({ kind: 'button', ref: { verb: 'decline' }, label: CARD_WORDS.declineForm, tone: 'danger' })
  if (card.status === 'open' && card.deadline !== undefined)
    controls.push({ kind: 'button', ref: { verb: 'hold' }, label: CARD_WORDS.hold, tone: 'neutral' })
  return controls
}
