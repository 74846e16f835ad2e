/**
 * The platform-neutral view of a card: the one place that decides which controls a card offers,
 * what each question shows as its state, and what the card's status lines say. Every surface
 * (Slack, Discord, the web inbox, test fakes) translates this into its own widgets and limits and
 * decides no card rule itself. {@link resolveComponent} (resolve.ts) is its inverse.
 *
 * Every string in the view has been through {@link cleanText}: labels are for display; actions
 * name options by their real labels, which resolve.ts takes from the card, never from the view.
 */
import { isLive } from './apply.js'
import type { ComponentRef } from './codec.js'
import { cleanDeep, oncallText, pickLocale } from './text.js'
import type { CardKind, CardState, CardStatus, Person } from './types.js'

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

/** A component reference without the call id (the renderer adds it). */
export type ControlRef = Omit<ComponentRef, 'callId'>

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

/** What a question shows besides its text. */
export type QuestionStatus =
  | { kind: 'none' }
  /** Live, in a batch or multi-select: the shared draft. */
  | { kind: 'draft'; selected: string[]; custom?: string; by?: Person }
  | { kind: 'skipped'; by?: Person }
  /** Finished: the answer (`selected` empty and no custom: skipped). */
  | { kind: 'answer'; selected: string[]; custom?: string; customLabel: 'Answer' | 'Also' | 'Feedback' }
  /** Finished with no answer item for this question. */
  | { kind: 'unanswered' }

export interface QuestionView {
  index: number
  id: string
  /** The question in the reader's locale (approval `display` wording when given). */
  text: string
  header?: string
  /** Markdown. */
  detail?: string
  /** Approval subject, for recognition only. */
  subject?: { name: string; icon?: string }
  /** In a batch: its 1-based number. */
  number?: number
  controls: Control[]
  status: QuestionStatus
}

export type Outcome = 'answered' | 'approved' | 'rejected' | 'always' | 'plan-approved' | 'plan-declined'

/** One line of the card's status, structured so each surface formats people and times its own way. */
export type StatusLine =
  | { kind: 'quorum'; have: number; need: number; approvers: Person[] }
  | { kind: 'deadline'; at: number }
  | { kind: 'holding'; holders: Person[] }
  | { kind: 'continued' }
  | { kind: 'outcome'; outcome: Outcome; tone: 'ok' | 'bad'; by: Person[]; at?: number }
  | { kind: 'cancelled'; reason?: string }
  | { kind: 'elsewhere' }

export interface CardView {
  callId: string
  agentId: string
  kind: CardKind
  status: CardStatus
  /** Takes answers (open or continued). */
  live: boolean
  /** A short title for the card (a header line). */
  title: string
  questions: QuestionView[]
  /** Status lines, in order. */
  statusLines: StatusLine[]
  /** Card-wide controls after all questions: Submit, Take my time. */
  footer: Control[]
  /** Who is on call for this card and where that came from (PagerDuty, last known, fallback). */
  oncall?: string
  /** Finished: whether it ended well (answered/approved) or not (rejected, declined); absent while live. */
  tone?: 'ok' | 'bad' | 'neutral'
}

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
  approveWithReason: 'Approve with reason…',
  rejectWithReason: 'Reject with reason…',
  chooseOne: 'Choose…',
  chooseAny: 'Choose one or more…',
  otherResponses: 'Other responses…',
} as const

const OUTCOME_WORDS: Record<Outcome, string> = {
  ...{ answered: 'Answered', approved: 'Approved', rejected: 'Rejected', always: 'Always allowed' },
  ...{ 'plan-approved': 'Plan approved', 'plan-declined': 'Plan declined' },
}

/** Whether the card needs a Submit (batches, and a multi-select question, which never completes alone). */
function wantsSubmit(card: CardState): boolean {
  if (card.kind !== 'questions') return false
  return (
    card.questions.length > 1 || card.questions.some((q) => q.multiSelect && (q.options?.length ?? 0) > 0)
  )
}

function questionControls(card: CardState, index: number): Control[] {
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

function questionStatus(card: CardState, index: number): QuestionStatus {
  const q = card.questions[index]
  if (!q) return { kind: 'none' }
  if (isLive(card)) {
    const draft = card.drafts[q.id]
    if (!draft || (card.questions.length < 2 && !q.multiSelect)) return { kind: 'none' }
    if (draft.skipped) return { kind: 'skipped', ...(draft.by ? { by: draft.by } : {}) }
    if (draft.selected.length === 0 && !draft.custom) return { kind: 'none' }
    return {
      kind: 'draft',
      selected: draft.selected,
      ...(draft.custom ? { custom: draft.custom } : {}),
      ...(draft.by ? { by: draft.by } : {}),
    }
  }
  if (card.status !== 'answered') return { kind: 'none' }
  const item = card.result?.answers.find((a) => a.id === q.id)
  if (!item) return { kind: 'unanswered' }
  const customLabel =
    q.intent?.kind === 'plan-review' ? 'Feedback' : item.selected.length > 0 ? 'Also' : 'Answer'
  return {
    kind: 'answer',
    selected: item.selected,
    ...(item.custom === undefined ? {} : { custom: item.custom }),
    customLabel,
  }
}

function outcomeOf(card: CardState): { outcome: Outcome; tone: 'ok' | 'bad' } {
  const intent = card.questions.length === 1 ? card.questions[0]?.intent : undefined
  const picked = card.result?.answers[0]
  if (card.kind === 'approval' && intent?.kind === 'approval') {
    const label = picked?.selected[0]
    if (label === intent.reject || label === undefined) return { outcome: 'rejected', tone: 'bad' }
    return label === intent.always ? { outcome: 'always', tone: 'ok' } : { outcome: 'approved', tone: 'ok' }
  }
  if (card.kind === 'plan-review' && intent?.kind === 'plan-review') {
    return picked?.selected[0] === intent.approve
      ? { outcome: 'plan-approved', tone: 'ok' }
      : { outcome: 'plan-declined', tone: 'bad' }
  }
  return { outcome: 'answered', tone: 'ok' }
}

function statusLines(card: CardState): StatusLine[] {
  const lines: StatusLine[] = []
  const live = isLive(card)
  if (card.kind === 'approval' && card.quorum > 1 && live)
    lines.push({ kind: 'quorum', have: card.approvals.length, need: card.quorum, approvers: card.approvals })
  switch (card.status) {
    case 'open':
      if (card.deadline !== undefined) {
        lines.push({ kind: 'deadline', at: card.deadline })
        if (card.holders.length > 0) lines.push({ kind: 'holding', holders: card.holders })
      }
      break
    case 'continued':
      lines.push({ kind: 'continued' })
      break
    case 'answered': {
      const { outcome, tone } = outcomeOf(card)
      const by =
        card.kind === 'approval' && outcome !== 'rejected' && card.approvals.length > 1
          ? card.approvals
          : card.answeredBy
            ? [card.answeredBy]
            : []
      lines.push({
        kind: 'outcome',
        outcome,
        tone,
        by,
        ...(card.answeredAt === undefined ? {} : { at: card.answeredAt }),
      })
      break
    }
    case 'cancelled':
      lines.push({ kind: 'cancelled', ...(card.closedReason ? { reason: card.closedReason } : {}) })
      break
    case 'elsewhere':
      lines.push({ kind: 'elsewhere' })
      break
  }
  return lines
}

function footer(card: CardState): Control[] {
  const controls: Control[] = []
  if (wantsSubmit(card))
    controls.push({ kind: 'button', ref: { verb: 'submit' }, label: CARD_WORDS.submit, tone: 'primary' })
  if (card.status === 'open' && card.deadline !== undefined)
    controls.push({ kind: 'button', ref: { verb: 'hold' }, label: CARD_WORDS.hold, tone: 'neutral' })
  return controls
}

function cardTitle(card: CardState): string {
  const first = card.questions[0]
  if (card.questions.length === 1 && first?.header) return first.header
  if (card.kind === 'approval') return 'Approval needed'
  if (card.kind === 'plan-review') return 'Plan review'
  return card.questions.length > 1 ? `${card.questions.length} questions` : 'Question'
}

/**
 * The card as every surface should show it, in `locale` (approval `display` wording). Controls
 * appear only while the card is live.
 */
export function cardView(card: CardState, locale?: string): CardView {
  const live = isLive(card)
  const batch = card.questions.length > 1
  const questions = card.questions.map((q, index): QuestionView => {
    const intent = q.intent
    const approval = intent?.kind === 'approval' ? intent : undefined
    const text = approval?.display ? pickLocale(approval.display.question, locale) : q.question
    const detail = approval?.display?.detail ? pickLocale(approval.display.detail, locale) : q.detail
    const controls = live ? questionControls(card, index) : []
    if (approval?.display?.approve) {
      const approve = controls.find((c) => c.kind === 'button' && c.ref.verb === 'approve')
      if (approve && approve.kind === 'button') approve.label = pickLocale(approval.display.approve, locale)
    }
    return {
      index,
      id: q.id,
      text,
      ...(q.header ? { header: q.header } : {}),
      ...(detail ? { detail } : {}),
      ...(approval?.subject ? { subject: approval.subject } : {}),
      ...(batch ? { number: index + 1 } : {}),
      controls,
      status: questionStatus(card, index),
    }
  })
  const view: CardView = {
    callId: card.callId,
    agentId: card.agentId,
    kind: card.kind,
    status: card.status,
    live,
    title: cardTitle(card),
    questions,
    statusLines: statusLines(card),
    footer: live ? footer(card) : [],
  }
  const oncall = oncallText(card)
  if (oncall) view.oncall = oncall
  if (!live) view.tone = card.status === 'answered' ? outcomeOf(card).tone : 'neutral'
  return cleanDeep(view)
}

/** Every control of a view, questions first, then the footer. */
export function allControls(view: CardView): Control[] {
  return [...view.questions.flatMap((q) => q.controls), ...view.footer]
}

/** How a surface writes people, times and its own escaping, for {@link statusText}. */
export interface StatusFormat {
  people: (people: readonly Person[]) => string
  /** An absolute deadline or answer time. */
  time: (epochMs: number) => string
  /** Escape agent or person text for the surface. */
  text: (raw: string) => string
}

/** One status line in words (English), formatted for a surface. */
export function statusText(line: StatusLine, f: StatusFormat): string {
  switch (line.kind) {
    case 'quorum':
      return `${line.have} of ${line.need} approvals${line.approvers.length ? `: ${f.people(line.approvers)}` : ''}`
    case 'deadline':
      return `Answer by ${f.time(line.at)}, or press ${CARD_WORDS.hold}.`
    case 'holding':
      return `${f.people(line.holders)} ${line.holders.length === 1 ? 'is' : 'are'} taking their time.`
    case 'continued':
      return 'The agent has continued; your answer will still reach it.'
    case 'outcome': {
      const by = line.by.length ? ` by ${f.people(line.by)}` : ''
      return `${OUTCOME_WORDS[line.outcome]}${by}${line.at === undefined ? '' : ` · ${f.time(line.at)}`}`
    }
    case 'cancelled':
      return `Cancelled${line.reason && line.reason !== 'cancelled' ? `: ${f.text(line.reason)}` : '.'}`
    case 'elsewhere':
      return 'Answered elsewhere.'
  }
}
