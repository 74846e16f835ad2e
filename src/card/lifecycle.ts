/** A card's life outside interactions: a new card, its status, who is who, and its answer. */
import type { FormSpec } from '../protocol/form.js'
import type { AskUserQuestionAnswer, AskUserQuestionItem } from '../protocol/types.js'
import { shownDigest } from './digest.js'
import type { CardKind, CardState, CardStatus, Person, QuestionDraft, Refusal, Responders } from './types.js'
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
  /** A hook's whole tool input, which the reviewer is shown beside the questions (see `shown`). */
  toolInput?: unknown
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
    shown: shownDigest(options, options.toolInput),
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
export function isAnswered(draft: QuestionDraft | undefined): boolean {
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
/** Mark a live card with a lifecycle status (continued, cancelled, elsewhere). */
export function withStatus(card: CardState, status: CardState['status'], reason?: string): CardState {
  return {
    ...card,
    status,
    holders: status === 'continued' ? card.holders : [],
    ...(reason ? { closedReason: reason } : {}),
  }
}
