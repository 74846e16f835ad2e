import type { FormSpec } from '../protocol/form.js'
import { LIMITS } from '../protocol/schemas.js'
import type { AskUserQuestionAnswer, AskUserQuestionItem } from '../protocol/types.js'
import { isForm } from './controls.js'
import { checkFieldArray, checkFieldText } from './fields.js'
import type {
  ApplyResult,
  CardKind,
  CardState,
  CardStatus,
  Interaction,
  Person,
  QuestionDraft,
  Refusal,
  RefusalCode,
  Responders,
} from './types.js'

/** How many recent interaction ids a card remembers for idempotency. */
const SEEN_LIMIT = 200

export interface NewCardOptions {
  callId: string
  agentId: string
  questions: AskUserQuestionItem[]
  now: number
  deadline?: number
  quorum?: number
  responders?: Responders
  excluded?: Pick<Person, 'platform' | 'userId' | 'identity'>
  route?: string
  /** Typed form fields and their pre-selected answers. */
  form?: FormSpec
}

export function cardKindOf(questions: AskUserQuestionItem[]): CardKind {
  const intent = questions.length === 1 ? questions[0]?.intent : undefined
  if (intent?.kind === 'approval') return 'approval'
  if (intent?.kind === 'plan-review') return 'plan-review'
  return 'questions'
}

export function newCard(options: NewCardOptions): CardState {
  return {
    callId: options.callId,
    agentId: options.agentId,
    questions: options.questions,
    kind: cardKindOf(options.questions),
    status: 'open',
    createdAt: options.now,
    ...(options.deadline === undefined ? {} : { deadline: options.deadline }),
    drafts: {},
    approvals: [],
    quorum: Math.max(1, options.quorum ?? 1),
    ...(options.excluded ? { excluded: options.excluded } : {}),
    ...(options.responders ? { responders: options.responders } : {}),
    holders: [],
    seen: [],
    ...(options.route === undefined ? {} : { route: options.route }),
    escalated: 0,
    ...(options.form ? { fields: options.form.fields, drafts: presetDrafts(options.form) } : {}),
  }
}

/** Schema defaults, pre-selected as drafts nobody has touched yet. */
function presetDrafts(form: FormSpec): Record<string, QuestionDraft> {
  const drafts: Record<string, QuestionDraft> = {}
  for (const [id, preset] of Object.entries(form.defaults ?? {})) {
    drafts[id] = {
      selected: [...preset.selected],
      ...(preset.custom === undefined ? {} : { custom: preset.custom }),
    }
  }
  return drafts
}

/** The statuses of a card that still takes answers, and of a finished one. */
export const LIVE_STATUSES: readonly CardStatus[] = ['open', 'continued']
export const FINISHED_STATUSES: readonly CardStatus[] = ['answered', 'cancelled', 'elsewhere']

/** A card that still takes answers. */
export function isLive(card: CardState): boolean {
  return LIVE_STATUSES.includes(card.status)
}

type Who = Pick<Person, 'platform' | 'userId' | 'identity'>

/** The same person: one identity (the `people` map, a sign-in), else the same platform account. */
export function samePerson(a: Who, b: Who) {
  if (a.identity !== undefined && a.identity === b.identity) return true
  return a.platform === b.platform && a.userId === b.userId
}

export function displayName(person: Person | undefined): string {
  if (!person) return 'someone'
  return person.name?.trim() || person.userId
}

const refuse = (code: RefusalCode, message: string): ApplyResult => ({
  ok: false,
  refusal: { code, message },
})

/** Why a finished card refuses further clicks, in words for the person. */
export function finishedRefusal(card: CardState): Refusal {
  switch (card.status) {
    case 'answered':
      return {
        code: 'finished',
        message: `This question was already answered by ${displayName(card.answeredBy)}.`,
      }
    case 'cancelled':
      return { code: 'finished', message: 'This question was cancelled.' }
    case 'elsewhere':
      return { code: 'finished', message: 'This question was already answered elsewhere.' }
    default:
      return { code: 'finished', message: 'This question is closed.' }
  }
}

/** Whether a question has an answer in the draft (skipped counts as handled, not answered). */
function isAnswered(draft: QuestionDraft | undefined): boolean {
  return !!draft && !draft.skipped && (draft.selected.length > 0 || (draft.custom ?? '') !== '')
}

/** The protocol answer for a card's drafts: one item per question, in order. */
export function cardAnswer(card: Pick<CardState, 'questions' | 'drafts'>): AskUserQuestionAnswer {
  return {
    answers: card.questions.map((q) => {
      const draft = card.drafts[q.id]
      if (!draft || draft.skipped) return { id: q.id, selected: [] }
      const custom = draft.custom !== undefined && draft.custom !== '' ? draft.custom : undefined
      // Single-select: custom overrides the option, so selected is empty beside it.
      const selected = q.multiSelect ? draft.selected : custom !== undefined ? [] : draft.selected.slice(0, 1)
      return custom === undefined ? { id: q.id, selected } : { id: q.id, selected, custom }
    }),
  }
}

/**
 * Apply one interaction to a card: a pure state transition. Refusals are values with a message
 * for the person and never change the card. Authorization is the caller's job (it needs I/O).
 */
export function applyInteraction(card: CardState, interaction: Interaction): ApplyResult {
  if (card.seen.includes(interaction.id)) return { ok: true, state: card, completed: false, duplicate: true }
  if (!isLive(card)) return { ok: false, refusal: finishedRefusal(card) }
  const state: CardState = structuredClone(card)
  state.seen = [...state.seen, interaction.id].slice(-SEEN_LIMIT)
  const { action, actor, at } = interaction
  const single = state.questions.length === 1 ? state.questions[0] : undefined

  const question = (id: string) => state.questions.find((q) => q.id === id)
  const labelsOf = (q: AskUserQuestionItem) => (q.options ?? []).map((o) => o.label)
  const setDraft = (q: AskUserQuestionItem, draft: Omit<QuestionDraft, 'by' | 'at'>) => {
    state.drafts[q.id] = { ...draft, by: actor, at }
  }
  const complete = (notice?: string): ApplyResult => {
    state.status = 'answered'
    state.result = cardAnswer(state)
    state.answeredBy = actor
    state.answeredAt = at
    state.holders = []
    return { ok: true, state, completed: true, duplicate: false, ...(notice ? { notice } : {}) }
  }
  const done = (notice?: string): ApplyResult => ({
    ok: true,
    state,
    completed: false,
    duplicate: false,
    ...(notice ? { notice } : {}),
  })

  if (state.kind === 'approval' && single?.intent?.kind === 'approval') {
    const intent = single.intent
    const pick = (label: string, typed?: string): ApplyResult => {
      const reason = typed?.trim() ?? ''
      if (reason.length > LIMITS.customLength) {
        return refuse('too-long', `A reason is limited to ${LIMITS.customLength} characters.`)
      }
      // askbridge's own note beside the answer; the answer itself stays the option label.
      const decide = () => {
        setDraft(single, { selected: [label] })
        if (reason) state.reason = reason
        return complete()
      }
      if (label === intent.reject) return decide()
      if (state.approvals.some((p) => samePerson(p, actor))) {
        return refuse('already-approved', 'You have already approved this; it needs another approver.')
      }
      state.approvals.push(actor)
      if (state.approvals.length < state.quorum) {
        return done(`Approval recorded: ${state.approvals.length} of ${state.quorum}.`)
      }
      return decide()
    }
    switch (action.type) {
      case 'approve':
        return pick(intent.approve, action.reason)
      case 'reject':
        return pick(intent.reject, action.reason)
      case 'always':
        if (intent.always === undefined)
          return refuse('not-applicable', 'This approval offers no "always" option.')
        return pick(intent.always)
      case 'choose':
        if (action.questionId !== single.id || !labelsOf(single).includes(action.label)) {
          return refuse('unknown-option', 'That is not one of the options.')
        }
        return pick(action.label)
      case 'hold':
      case 'release':
        break
      default:
        return refuse('not-applicable', 'An approval takes only its approve and reject actions.')
    }
  }

  switch (action.type) {
    case 'hold':
      if (!state.holders.some((p) => samePerson(p, actor))) state.holders.push(actor)
      return done()
    case 'release':
      state.holders = state.holders.filter((p) => !samePerson(p, actor))
      return done()
    case 'approve':
    case 'decline': {
      const q = single
      if (action.type === 'decline' && isForm(state)) {
        // Declining a whole form: every field is left unanswered, and nothing is sent.
        for (const each of state.questions)
          state.drafts[each.id] = { selected: [], skipped: true, by: actor, at }
        return complete()
      }
      if (state.kind !== 'plan-review' || q?.intent?.kind !== 'plan-review') {
        return refuse('not-applicable', 'This question is not a plan review.')
      }
      if (action.type === 'approve') {
        setDraft(q, { selected: [q.intent.approve] })
        return complete()
      }
      const feedback = action.feedback?.trim() ?? ''
      if (feedback.length > LIMITS.customLength) {
        return refuse('too-long', `Feedback is limited to ${LIMITS.customLength} characters.`)
      }
      if (feedback) {
        setDraft(q, { selected: [], custom: feedback })
        return complete()
      }
      const declineLabel = labelsOf(q).find((l) => l !== (q.intent as { approve: string }).approve)
      if (declineLabel === undefined) return refuse('incomplete', 'Please say what should change.')
      setDraft(q, { selected: [declineLabel] })
      return complete()
    }
    case 'reject':
    case 'always':
      return refuse('not-applicable', 'This question is not an approval.')
    case 'submit': {
      const decision = Object.entries(state.fields ?? {}).find(([, f]) => f.kind === 'decision')
      if (decision && state.drafts[decision[0]]?.selected.includes(decision[1].decline ?? '')) {
        // Declining the whole form: nothing else is sent, so nothing else needs an answer.
        for (const q of state.questions) {
          if (q.id !== decision[0]) state.drafts[q.id] = { selected: [], skipped: true, by: actor, at }
        }
        return complete()
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
        return refuse(
          'incomplete',
          `Please answer or skip: ${missing.map((q) => truncateName(q)).join(', ')}.`,
        )
      }
      if (!state.questions.some((q) => isAnswered(state.drafts[q.id]))) {
        return refuse('incomplete', 'Please answer at least one question before submitting.')
      }
      return complete()
    }
    default:
      break
  }

  const q = question(action.questionId)
  if (!q) return refuse('unknown-question', 'That question is not on this card.')
  const labels = labelsOf(q)
  const draft = state.drafts[q.id]
  const oneShot = single !== undefined && !q.multiSelect

  switch (action.type) {
    case 'choose':
    case 'toggle': {
      if (!labels.includes(action.label)) return refuse('unknown-option', 'That is not one of the options.')
      if (q.multiSelect) {
        const current = draft && !draft.skipped ? draft.selected : []
        const selected = current.includes(action.label)
          ? current.filter((l) => l !== action.label)
          : labels.filter((l) => l === action.label || current.includes(l))
        setDraft(q, { selected, ...(draft?.custom !== undefined ? { custom: draft.custom } : {}) })
        return done()
      }
      setDraft(q, { selected: [action.label] })
      return oneShot ? complete() : done()
    }
    case 'set': {
      const unknown = action.labels.find((l) => !labels.includes(l))
      if (unknown !== undefined) return refuse('unknown-option', 'That is not one of the options.')
      const chosen = labels.filter((l) => action.labels.includes(l))
      if (!q.multiSelect && chosen.length > 1) return refuse('not-applicable', 'Choose only one option.')
      if (q.multiSelect) {
        setDraft(q, { selected: chosen, ...(draft?.custom !== undefined ? { custom: draft.custom } : {}) })
        return done()
      }
      setDraft(q, { selected: chosen })
      return oneShot && chosen.length === 1 ? complete() : done()
    }
    case 'other': {
      const text = action.text.trim()
      if (text === '') return refuse('incomplete', 'Please type an answer.')
      if (text.length > LIMITS.customLength) {
        return refuse('too-long', `Answers are limited to ${LIMITS.customLength} characters.`)
      }
      const field = state.fields?.[q.id]
      if (field) {
        const checked = checkFieldText(field, text)
        if (!checked.ok)
          return refuse('invalid', `${field.title ?? truncateName(q)} ${checked.message}; please try again.`)
      }
      if (q.multiSelect) {
        setDraft(q, { selected: draft && !draft.skipped ? draft.selected : [], custom: text })
        return done()
      }
      setDraft(q, { selected: [], custom: text })
      return oneShot ? complete() : done()
    }
    case 'skip': {
      if (state.questions.length === 1)
        return refuse('not-applicable', 'A single question cannot be skipped.')
      const field = state.fields?.[q.id]
      if (field?.required)
        return refuse(
          'not-applicable',
          `${field.title ?? truncateName(q)} is required; it cannot be skipped.`,
        )
      setDraft(q, { selected: [], skipped: true })
      return done()
    }
  }
}

function truncateName(q: AskUserQuestionItem): string {
  const name = q.header || q.question
  return name.length > 60 ? `${name.slice(0, 59)}…` : name
}

/** Mark a live card with a lifecycle status (continued, cancelled, elsewhere). */
export function withStatus(card: CardState, status: CardState['status'], reason?: string): CardState {
  return {
    ...card,
    status,
    holders: status === 'continued' ? card.holders : [],
    ...(reason ? { closedReason: reason } : {}),
  }
}
