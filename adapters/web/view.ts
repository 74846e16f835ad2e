import { displayName } from '../../src/card/apply.js'
import { oncallText } from '../../src/card/text.js'
import type { CardState, Person } from '../../src/card/types.js'
import type { AskUserQuestionAnswerItem } from '../../src/protocol/types.js'
import { markdownToHtml } from './markdown.js'

/** One question as the inbox page shows it. Text fields are plain text (the page sets textContent); `*Html` fields are safe HTML. */
export interface WebQuestionView {
  id: string
  question: string
  header?: string
  detailHtml?: string
  options: Array<{ label: string; description?: string }>
  multiSelect: boolean
  draft?: { selected: string[]; custom?: string; skipped?: boolean; by?: string }
}

/** A card as the inbox page shows it: plain data, no functions. */
export interface WebCardView {
  callId: string
  agentId: string
  kind: CardState['kind']
  status: CardState['status']
  createdAt: number
  deadline?: number
  questions: WebQuestionView[]
  /** Approval and plan-review labels, when the card has that intent. */
  intent?: { approve: string; reject?: string; always?: string; decline?: string; subject?: string }
  approvals: string[]
  quorum: number
  holders: Array<{ userId: string; name: string }>
  result?: AskUserQuestionAnswerItem[]
  answeredBy?: string
  answeredAt?: number
  closedReason?: string
  /** Who is on call and where that came from (PagerDuty, last known, fallback). */
  oncall?: string
  version?: number
}

const nameOf = (p: Person | undefined) => displayName(p)

/** Card state -> what the page renders. Pure; agent markdown becomes escaped, safe HTML here. */
export function cardToWebView(card: CardState, version?: number): WebCardView {
  const questions = card.questions.map((q): WebQuestionView => {
    const draft = card.drafts[q.id]
    const intent = q.intent
    // Approvals may carry localized wording; the web inbox shows English.
    const question = intent?.kind === 'approval' && intent.display ? intent.display.question.en : q.question
    const detail = intent?.kind === 'approval' && intent.display?.detail ? intent.display.detail.en : q.detail
    return {
      id: q.id,
      question,
      ...(q.header ? { header: q.header } : {}),
      ...(detail ? { detailHtml: markdownToHtml(detail) } : {}),
      options: (q.options ?? []).map((o) => ({
        label: o.label,
        ...(o.description ? { description: o.description } : {}),
      })),
      multiSelect: q.multiSelect === true,
      ...(draft
        ? {
            draft: {
              selected: draft.selected,
              ...(draft.custom === undefined ? {} : { custom: draft.custom }),
              ...(draft.skipped ? { skipped: true } : {}),
              ...(draft.by ? { by: nameOf(draft.by) } : {}),
            },
          }
        : {}),
    }
  })
  const first = card.questions.length === 1 ? card.questions[0] : undefined
  const intent = first?.intent
  let intentView: WebCardView['intent']
  if (card.kind === 'approval' && intent?.kind === 'approval') {
    intentView = {
      approve: intent.approve,
      reject: intent.reject,
      ...(intent.always === undefined ? {} : { always: intent.always }),
      ...(intent.subject ? { subject: intent.subject.name } : {}),
    }
  } else if (card.kind === 'plan-review' && intent?.kind === 'plan-review') {
    const decline = (first?.options ?? []).map((o) => o.label).find((l) => l !== intent.approve)
    intentView = { approve: intent.approve, ...(decline === undefined ? {} : { decline }) }
  }
  return {
    callId: card.callId,
    agentId: card.agentId,
    kind: card.kind,
    status: card.status,
    createdAt: card.createdAt,
    ...(card.deadline === undefined ? {} : { deadline: card.deadline }),
    questions,
    ...(intentView ? { intent: intentView } : {}),
    approvals: card.approvals.map(nameOf),
    quorum: card.quorum,
    holders: card.holders.map((p) => ({ userId: p.userId, name: nameOf(p) })),
    ...(card.result ? { result: card.result.answers } : {}),
    ...(card.answeredBy ? { answeredBy: nameOf(card.answeredBy) } : {}),
    ...(card.answeredAt === undefined ? {} : { answeredAt: card.answeredAt }),
    ...(card.closedReason ? { closedReason: card.closedReason } : {}),
    ...oncallField(card),
    ...(version === undefined ? {} : { version }),
  }
}

function oncallField(card: CardState): { oncall?: string } {
  const text = oncallText(card)
  return text ? { oncall: text } : {}
}
