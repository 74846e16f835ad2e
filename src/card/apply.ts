/** Applying one person's interaction to a card: the only way a card's drafts and status change. */
import { LIMITS } from '../protocol/schemas.js'
import type { AskUserQuestionItem } from '../protocol/types.js'
import { isForm } from './controls.js'
import { checkFieldArray, checkFieldText } from './fields.js'
import { cardAnswer, finishedRefusal, isAnswered, isLive, samePerson } from './lifecycle.js'
import type {
  ApplyResult,
  CardAction,
  CardState,
  Interaction,
  Person,
  QuestionDraft,
  RefusalCode,
} from './types.js'

/** How many recent interaction ids a card remembers for idempotency. */
const SEEN_LIMIT = 200

const refuse = (code: RefusalCode, message: string): ApplyResult => ({
  ok: false,
  refusal: { code, message },
})

export function applyInteraction(card: CardState, interaction: Interaction): ApplyResult {
  if (card.seen.includes(interaction.id)) return { ok: true, state: card, completed: false, duplicate: true }
  if (!isLive(card)) return { ok: false, refusal: finishedRefusal(card) }
  const state: CardState = structuredClone(card)
  state.seen = [...state.seen, interaction.id].slice(-SEEN_LIMIT)
  const step = stepOf(state, interaction)
  const { action } = interaction
  const single = step.single
  if (state.kind === 'approval' && single?.intent?.kind === 'approval') {
    const decided = applyApproval(step, single, single.intent, action)
    if (decided) return decided
  }
  switch (action.type) {
    case 'hold':
      if (!state.holders.some((p) => samePerson(p, step.actor))) state.holders.push(step.actor)
      return step.done()
    case 'release':
      state.holders = state.holders.filter((p) => !samePerson(p, step.actor))
      return step.done()
    case 'approve':
    case 'decline':
      return applyPlanDecision(step, action)
    case 'reject':
    case 'always':
      return refuse('not-applicable', 'This question is not an approval.')
    case 'submit':
      return applySubmit(step)
    default:
      return applyToQuestion(step, action)
  }
}

/** One interaction being applied: the card's copy it changes, who acts, and how it ends. */
interface Step {
  readonly state: CardState
  readonly actor: Person
  readonly at: number
  /** The card's question when it has only one. */
  readonly single: AskUserQuestionItem | undefined
  /** Set a question's draft, as this person's, now. */
  setDraft(q: AskUserQuestionItem, draft: Omit<QuestionDraft, 'by' | 'at'>): void
  /** The card is answered by this person. */
  complete(notice?: string): ApplyResult
  /** The card changed (or not) and stays open. */
  done(notice?: string): ApplyResult
}

function stepOf(state: CardState, { actor, at }: Interaction): Step {
  return {
    state,
    actor,
    at,
    single: state.questions.length === 1 ? state.questions[0] : undefined,
    setDraft: (q, draft) => {
      state.drafts[q.id] = { ...draft, by: actor, at }
    },
    complete: (notice) => {
      state.status = 'answered'
      state.result = cardAnswer(state)
      state.answeredBy = actor
      state.answeredAt = at
      state.holders = []
      return { ok: true, state, completed: true, duplicate: false, ...(notice ? { notice } : {}) }
    },
    done: (notice) => ({
      ok: true,
      state,
      completed: false,
      duplicate: false,
      ...(notice ? { notice } : {}),
    }),
  }
}

const labelsOf = (q: AskUserQuestionItem) => (q.options ?? []).map((o) => o.label)

type ApprovalIntent = Extract<NonNullable<AskUserQuestionItem['intent']>, { kind: 'approval' }>

/**
 * An approval card's actions: approve, reject, always, or one of its options. Undefined for
 * hold and release, which apply as on any card.
 */
function applyApproval(
  step: Step,
  single: AskUserQuestionItem,
  intent: ApprovalIntent,
  action: CardAction,
): ApplyResult | undefined {
  switch (action.type) {
    case 'approve':
      return pickApproval(step, single, intent, intent.approve, action.reason)
    case 'reject':
      return pickApproval(step, single, intent, intent.reject, action.reason)
    case 'always':
      if (intent.always === undefined)
        return refuse('not-applicable', 'This approval offers no "always" option.')
      return pickApproval(step, single, intent, intent.always)
    case 'choose':
      if (action.questionId !== single.id || !labelsOf(single).includes(action.label)) {
        return refuse('unknown-option', 'That is not one of the options.')
      }
      return pickApproval(step, single, intent, action.label)
    case 'hold':
    case 'release':
      return undefined
    default:
      return refuse('not-applicable', 'An approval takes only its approve and reject actions.')
  }
}

/** One approver's pick: a rejection decides at once; an approval counts toward the quorum. */
function pickApproval(
  step: Step,
  single: AskUserQuestionItem,
  intent: ApprovalIntent,
  label: string,
  typed?: string,
): ApplyResult {
  const { state, actor } = step
  const reason = typed?.trim() ?? ''
  if (reason.length > LIMITS.customLength) {
    return refuse('too-long', `A reason is limited to ${LIMITS.customLength} characters.`)
  }
  // askbridge's own note beside the answer; the answer itself stays the option label.
  const decide = () => {
    step.setDraft(single, { selected: [label] })
    if (reason) state.reason = reason
    return step.complete()
  }
  if (label === intent.reject) return decide()
  if (state.approvals.some((p) => samePerson(p, actor))) {
    return refuse('already-approved', 'You have already approved this; it needs another approver.')
  }
  state.approvals.push(actor)
  if (state.approvals.length < state.quorum) {
    return step.done(`Approval recorded: ${state.approvals.length} of ${state.quorum}.`)
  }
  return decide()
}

/** Approve or decline a plan review (with optional feedback), or decline a whole form. */
function applyPlanDecision(
  step: Step,
  action: Extract<CardAction, { type: 'approve' | 'decline' }>,
): ApplyResult {
  const { state, actor, at } = step
  const q = step.single
  if (action.type === 'decline' && isForm(state)) {
    // Declining a whole form: every field is left unanswered, and nothing is sent.
    for (const each of state.questions) state.drafts[each.id] = { selected: [], skipped: true, by: actor, at }
    return step.complete()
  }
  if (state.kind !== 'plan-review' || q?.intent?.kind !== 'plan-review') {
    return refuse('not-applicable', 'This question is not a plan review.')
  }
  if (action.type === 'approve') {
    step.setDraft(q, { selected: [q.intent.approve] })
    return step.complete()
  }
  const feedback = action.feedback?.trim() ?? ''
  if (feedback.length > LIMITS.customLength) {
    return refuse('too-long', `Feedback is limited to ${LIMITS.customLength} characters.`)
  }
  if (feedback) {
    step.setDraft(q, { selected: [], custom: feedback })
    return step.complete()
  }
  const declineLabel = labelsOf(q).find((l) => l !== (q.intent as { approve: string }).approve)
  if (declineLabel === undefined) return refuse('incomplete', 'Please say what should change.')
  step.setDraft(q, { selected: [declineLabel] })
  return step.complete()
}

/** Submit a batch: every question answered or skipped, at least one answered, fields valid. */
function applySubmit(step: Step): ApplyResult {
  const { state, actor, at } = step
  const decision = Object.entries(state.fields ?? {}).find(([, f]) => f.kind === 'decision')
  if (decision && state.drafts[decision[0]]?.selected.includes(decision[1].decline ?? '')) {
    // Declining the whole form: nothing else is sent, so nothing else needs an answer.
    for (const q of state.questions) {
      if (q.id !== decision[0]) state.drafts[q.id] = { selected: [], skipped: true, by: actor, at }
    }
    return step.complete()
  }
  for (const q of state.questions) {
    const field = state.fields?.[q.id]
    const draft = state.drafts[q.id]
    if (field?.kind === 'multi' && isAnswered(draft) && draft) {
      const checked = checkFieldArray(field, draft.selected)
      if (!checked.ok) return refuse('invalid', `${field.title ?? truncateName(q)}: ${checked.message}.`)
    }
  }
  const missing = state.questions.filter(
    (q) => !isAnswered(state.drafts[q.id]) && !state.drafts[q.id]?.skipped,
  )
  if (missing.length > 0) {
    return refuse('incomplete', `Please answer or skip: ${missing.map((q) => truncateName(q)).join(', ')}.`)
  }
  if (!state.questions.some((q) => isAnswered(state.drafts[q.id]))) {
    return refuse('incomplete', 'Please answer at least one question before submitting.')
  }
  return step.complete()
}

type QuestionAction = Extract<CardAction, { questionId: string }>

/** An action on one question of the card: pick, toggle, set, type, or skip. */
function applyToQuestion(step: Step, action: QuestionAction): ApplyResult {
  const q = step.state.questions.find((each) => each.id === action.questionId)
  if (!q) return refuse('unknown-question', 'That question is not on this card.')
  switch (action.type) {
    case 'choose':
    case 'toggle':
      return chooseOption(step, q, action.label)
    case 'set':
      return setOptions(step, q, action.labels)
    case 'other':
      return typeAnswer(step, q, action.text)
    case 'skip':
      return skipQuestion(step, q)
  }
}

/** Whether settling this question answers the whole card: its only question, single-select. */
const isOneShot = (step: Step, q: AskUserQuestionItem) => step.single !== undefined && !q.multiSelect

/** The draft's typed answer, kept when a multi-select question's options change. */
const keptCustom = (draft: QuestionDraft | undefined) =>
  draft?.custom !== undefined ? { custom: draft.custom } : {}

function chooseOption(step: Step, q: AskUserQuestionItem, label: string): ApplyResult {
  const labels = labelsOf(q)
  const draft = step.state.drafts[q.id]
  if (!labels.includes(label)) return refuse('unknown-option', 'That is not one of the options.')
  if (q.multiSelect) {
    const current = draft && !draft.skipped ? draft.selected : []
    const selected = current.includes(label)
      ? current.filter((l) => l !== label)
      : labels.filter((l) => l === label || current.includes(l))
    step.setDraft(q, { selected, ...keptCustom(draft) })
    return step.done()
  }
  step.setDraft(q, { selected: [label] })
  return isOneShot(step, q) ? step.complete() : step.done()
}

function setOptions(step: Step, q: AskUserQuestionItem, values: string[]): ApplyResult {
  const labels = labelsOf(q)
  const unknown = values.find((l) => !labels.includes(l))
  if (unknown !== undefined) return refuse('unknown-option', 'That is not one of the options.')
  const chosen = labels.filter((l) => values.includes(l))
  if (!q.multiSelect && chosen.length > 1) return refuse('not-applicable', 'Choose only one option.')
  if (q.multiSelect) {
    step.setDraft(q, { selected: chosen, ...keptCustom(step.state.drafts[q.id]) })
    return step.done()
  }
  step.setDraft(q, { selected: chosen })
  return isOneShot(step, q) && chosen.length === 1 ? step.complete() : step.done()
}

function typeAnswer(step: Step, q: AskUserQuestionItem, typed: string): ApplyResult {
  const text = typed.trim()
  if (text === '') return refuse('incomplete', 'Please type an answer.')
  if (text.length > LIMITS.customLength) {
    return refuse('too-long', `Answers are limited to ${LIMITS.customLength} characters.`)
  }
  const field = step.state.fields?.[q.id]
  if (field) {
    const checked = checkFieldText(field, text)
    if (!checked.ok)
      return refuse('invalid', `${field.title ?? truncateName(q)} ${checked.message}; please try again.`)
  }
  if (q.multiSelect) {
    const draft = step.state.drafts[q.id]
    step.setDraft(q, { selected: draft && !draft.skipped ? draft.selected : [], custom: text })
    return step.done()
  }
  step.setDraft(q, { selected: [], custom: text })
  return isOneShot(step, q) ? step.complete() : step.done()
}

function skipQuestion(step: Step, q: AskUserQuestionItem): ApplyResult {
  if (step.state.questions.length === 1)
    return refuse('not-applicable', 'A single question cannot be skipped.')
  const field = step.state.fields?.[q.id]
  if (field?.required) {
    return refuse('not-applicable', `${field.title ?? truncateName(q)} is required; it cannot be skipped.`)
  }
  step.setDraft(q, { selected: [], skipped: true })
  return step.done()
}

function truncateName(q: AskUserQuestionItem): string {
  const name = q.header || q.question
  return name.length > 60 ? `${name.slice(0, 59)}…` : name
}
