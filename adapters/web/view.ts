import { displayName } from '../../src/card/apply.js'
import type { Control, FormKind, Tone } from '../../src/card/controls.js'
import { statusText } from '../../src/card/status.js'
import { cleanDeep } from '../../src/card/text.js'
import type { CardState, Person } from '../../src/card/types.js'
import { type CardView, cardView } from '../../src/card/view.js'
import type { AskUserQuestionAnswerItem } from '../../src/protocol/types.js'
import { markdownToHtml } from './markdown.js'

/**
 * One control as the page shows it: the card view's control with its reference spelled out. The
 * page turns each into a widget and each use into the card action named by `verb`; it decides no
 * card rule itself.
 */
export type WebControl =
  | { kind: 'button'; verb: string; q?: number; label: string; tone: Tone }
  | {
      kind: 'form'
      verb: string
      q?: number
      label: string
      tone: Tone
      form: FormKind
    }
  | {
      kind: 'options'
      q: number
      mode: 'one' | 'any'
      options: Array<{ index: number; label: string; description?: string; chosen: boolean }>
    }

/** One question as the inbox page shows it. Text fields are plain text (the page sets textContent); `*Html` fields are safe HTML. */
export interface WebQuestionView {
  id: string
  question: string
  header?: string
  detailHtml?: string
  subject?: string
  /** What a person can use on this question, in order (empty once the card is finished). */
  controls: WebControl[]
  /** Shared draft or final answer, as one line of plain text. */
  note?: string
  /** The final answer's parts (labels, then the quoted free text); empty: skipped. */
  answer?: string[]
}

/** A card as the inbox page shows it: plain data, no functions. */
export interface WebCardView {
  callId: string
  agentId: string
  kind: CardState['kind']
  status: CardState['status']
  live: boolean
  createdAt: number
  deadline?: number
  questions: WebQuestionView[]
  /** Card-wide controls (Submit, Take my time). */
  footer: WebControl[]
  /** Status lines as plain text (times in UTC), with their kind (see StatusLine in src/card/status.ts). */
  statusLines: Array<{ kind: string; text: string }>
  /** Who is on call and where that came from (PagerDuty, last known, fallback). */
  oncall?: string
  /** A finished card: answered/approved (`ok`), rejected or declined (`bad`), or closed (`neutral`). */
  tone?: CardView['tone']
  /** Distinct approvers an approval needs. */
  quorum: number
  holders: Array<{ userId: string; name: string }>
  result?: AskUserQuestionAnswerItem[]
  answeredAt?: number
  version?: number
}

const names = (people: readonly Person[]) => people.map((p) => displayName(p)).join(', ')
const FORMAT = {
  people: names,
  time: (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  text: (raw: string) => raw,
}

function webControl(c: Control): WebControl {
  if (c.kind === 'options')
    return {
      kind: 'options',
      q: c.q,
      mode: c.mode,
      options: c.options.map((o) => ({
        index: o.index,
        label: o.label,
        ...(o.description ? { description: o.description } : {}),
        chosen: o.chosen,
      })),
    }
  const base = {
    verb: c.ref.verb,
    ...(c.ref.q === undefined ? {} : { q: c.ref.q }),
    label: c.label,
    tone: c.tone,
  }
  return c.kind === 'form' ? { kind: 'form', ...base, form: c.form } : { kind: 'button', ...base }
}

/** Card state -> what the page renders. Pure; agent markdown becomes escaped, safe HTML here. */
export function cardToWebView(card: CardState, version?: number, locale?: string): WebCardView {
  // Answers and names below come from the card itself: cleaned like the view's text.
  return cleanDeep(webView(card, version, locale))
}

function webView(card: CardState, version?: number, locale?: string): WebCardView {
  const view = cardView(card, locale)
  const questions = view.questions.map((q): WebQuestionView => {
    const s = q.status
    let note: string | undefined
    let answer: string[] | undefined
    if (s.kind === 'skipped') note = `Skipped${s.by ? ` by ${displayName(s.by)}` : ''}`
    else if (s.kind === 'draft') {
      const parts = [...(s.selected.length ? [`Selected: ${s.selected.join(', ')}`] : [])]
      if (s.custom) parts.push(`Answer: “${s.custom}”`)
      note = `${parts.join(' · ')}${s.by ? ` · by ${displayName(s.by)}` : ''}`
    } else if (s.kind === 'answer')
      answer = [...s.selected, ...(s.custom === undefined ? [] : [`“${s.custom}”`])]
    return {
      id: q.id,
      question: q.text,
      ...(q.header ? { header: q.header } : {}),
      ...(q.detail ? { detailHtml: markdownToHtml(q.detail) } : {}),
      ...(q.subject ? { subject: q.subject.name } : {}),
      controls: q.controls.map(webControl),
      ...(note ? { note } : {}),
      ...(answer ? { answer } : {}),
    }
  })
  return {
    callId: card.callId,
    agentId: card.agentId,
    kind: card.kind,
    status: card.status,
    live: view.live,
    createdAt: card.createdAt,
    ...(card.deadline === undefined ? {} : { deadline: card.deadline }),
    questions,
    footer: view.footer.map(webControl),
    statusLines: view.statusLines.map((l) => ({ kind: l.kind, text: statusText(l, FORMAT) })),
    ...(view.tone ? { tone: view.tone } : {}),
    quorum: card.quorum,
    holders: card.holders.map((p) => ({ userId: p.userId, name: displayName(p) })),
    ...(card.result ? { result: card.result.answers } : {}),
    ...(card.answeredAt === undefined ? {} : { answeredAt: card.answeredAt }),
    ...(view.oncall ? { oncall: view.oncall } : {}),
    ...(version === undefined ? {} : { version }),
  }
}
