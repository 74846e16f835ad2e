import type { CardState, Control, Person } from '../../src/adapter-kit.js'
import { cardView, cleanDeep, displayName, statusText } from '../../src/adapter-kit.js'
import type { WebCardView, WebControl, WebQuestionView } from './client/types.js'
import { markdownToHtml } from './markdown.js'

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
