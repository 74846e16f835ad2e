/**
 * The platform-neutral view of a card: the one place that decides which controls a card offers,
 * what each question shows as its state, and what the card's status lines say. Every surface
 * (Slack, Discord, the web inbox, test fakes) translates this into its own widgets and limits and
 * decides no card rule itself. {@link resolveComponent} (resolve.ts) is its inverse.
 *
 * Every string in the view has been through {@link cleanText}: labels are for display; actions
 * name options by their real labels, which resolve.ts takes from the card, never from the view.
 */

import { type Control, footer, questionControls } from './controls.js'
import { isLive } from './lifecycle.js'
import { outcomeOf, type QuestionStatus, questionStatus, type StatusLine, statusLines } from './status.js'
import { cleanDeep, oncallText, pickLocale } from './text.js'
import type { CardKind, CardState, CardStatus } from './types.js'

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

/**
 * The controls the card offers while open: {@link allControls} of its view, without building
 * (and cleaning) the rest of the view. What resolve.ts resolves a click against; only labels
 * differ (display wording, cleaned text), and resolution never reads a label from the view.
 */
export function openControls(card: CardState): Control[] {
  const open: CardState = { ...card, status: 'open' }
  return [...card.questions.flatMap((_, index) => questionControls(open, index)), ...footer(open)]
}
