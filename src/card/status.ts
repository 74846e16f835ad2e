/**
 * The status side of the card view (view.ts): what each question shows besides its text, the
 * card's status lines and outcome, and those lines in words for a surface.
 */

import { CARD_WORDS } from './controls.js'
import { isLive } from './lifecycle.js'
import type { CardState, Person } from './types.js'

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

const OUTCOME_WORDS: Record<Outcome, string> = {
  ...{ answered: 'Answered', approved: 'Approved', rejected: 'Rejected', always: 'Always allowed' },
  ...{ 'plan-approved': 'Plan approved', 'plan-declined': 'Plan declined' },
}

export function questionStatus(card: CardState, index: number): QuestionStatus {
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

export function outcomeOf(card: CardState): { outcome: Outcome; tone: 'ok' | 'bad' } {
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

export function statusLines(card: CardState): StatusLine[] {
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
