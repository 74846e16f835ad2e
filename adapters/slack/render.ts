/**
 * Card view -> Slack messages (Block Kit), as a pure function. The card view (src/card/view.ts)
 * decides what the card offers and says; this file only lays it out within Slack's limits.
 *
 * A card usually fits one message. When it does not (a long plan, a batch of many questions),
 * it continues in further messages: nothing is cut silently, and the controls that finish the card
 * (Submit, Take my time) sit in the last message, after everything they refer to.
 */

import type { CardState, Mention, Person } from '../../src/adapter-kit.js'
import {
  cardRef,
  cardView,
  type QuestionView,
  respondersOn,
  type StatusLine,
  statusText,
} from '../../src/adapter-kit.js'
import {
  blockTextLength,
  type ContextBlock,
  type MessageBlock,
  type Mrkdwn,
  type SectionBlock,
  SLACK_LIMITS,
  type SlackMessage,
} from './blocks.js'
import { markdownToMrkdwn } from './markdown.js'
import { escapeMrkdwn, splitMrkdwn, truncateMrkdwn, truncatePlain } from './text.js'
import { type CallRef, componentId, controlElements, needsListing, plain } from './widgets.js'

export interface RenderOptions {
  /**
   * Mentions from the destination's config: `subteam:ID` renders `<!subteam^ID>`, `user:ID`
   * renders `<@ID>`. Config, not agent text, so these may notify.
   */
  mentions?: readonly Mention[]
  /**
   * Locale for approval `display` texts on a shared message (a channel has no single reader).
   * @default 'en'
   */
  locale?: string
}

/** Draft previews (shared selections in a batch) stay short; the final answer is shown in full. */
const DRAFT_PREVIEW = 300
/** Full option labels listed under a question are capped per question (labels may be 10k each). */
const LABEL_LISTING_CAP = 30_000
/** Section text leaves room for a prefix like `*12.* `. */
const SECTION = SLACK_LIMITS.sectionText - 100

const mrkdwn = (text: string): Mrkdwn => ({ type: 'mrkdwn', text: text === '' ? ' ' : text })
const section = (text: string): SectionBlock => ({ type: 'section', text: mrkdwn(text) })
const context = (...texts: string[]): ContextBlock => ({ type: 'context', elements: texts.map(mrkdwn) })

/** Slack date formatting: every reader sees their own time zone; the fallback is UTC. */
export function slackDate(epochMs: number, format = '{date_short_pretty} at {time}'): string {
  const fallback = `${new Date(epochMs).toISOString().slice(0, 16).replace('T', ' ')} UTC`
  return `<!date^${Math.floor(epochMs / 1000)}^${format}|${fallback}>`
}

/** Someone who answered: a Slack mention for Slack users, the escaped name otherwise. */
export function personText(person: Person | undefined): string {
  if (!person) return 'someone'
  if (person.platform === 'slack' && /^[UW][A-Z0-9]{2,}$/.test(person.userId)) return `<@${person.userId}>`
  const name = escapeMrkdwn(person.name?.trim() || person.userId)
  return person.platform === 'slack' ? name : `${name} (${escapeMrkdwn(person.platform)})`
}

/**
 * Destination mentions (user groups, users) in Slack mention syntax; mentions of another
 * platform or kind, and malformed ids, are dropped.
 */
export function mentionText(mentions: readonly Mention[] | undefined): string {
  const out: string[] = []
  for (const { platform, kind, id } of mentions ?? []) {
    if (platform !== 'slack' || !/^[A-Z0-9]+$/i.test(id)) continue
    if (kind === 'group') out.push(`<!subteam^${id}>`)
    else if (kind === 'user') out.push(`<@${id}>`)
  }
  return out.join(' ')
}

type Unit = MessageBlock[]

/** Render a card as one or more Slack messages (see the module comment). */
export function cardToMessages(card: CardState, options: RenderOptions = {}): SlackMessage[] {
  const view = cardView(card, options.locale)
  const units: Unit[] = [headUnit(card, view.title, view.oncall, options)]
  for (const q of view.questions) units.push(questionUnit(cardRef(card), q))
  // Status lines, then the card-wide controls, kept together after every question.
  const foot = statusUnit(view.statusLines)
  if (view.footer.length > 0)
    foot.push({ type: 'actions', elements: controlElements(cardRef(card), view.footer, false) })
  units.push(foot)
  const packed = pack(units)
  const summary = notificationText(card, options)
  return packed.map((blocks, i) => {
    // The first block names the call and the part, so every message of a card can be found again.
    const [first, ...rest] = blocks
    const tagged = first
      ? [{ ...first, block_id: componentId(cardRef(card), { verb: 'page', o: i }) }, ...rest]
      : blocks
    return {
      text: packed.length === 1 ? summary : `${summary} (part ${i + 1} of ${packed.length})`,
      blocks: tagged,
    }
  })
}

/** The notification and accessibility text (shown where blocks are not). */
export function notificationText(card: CardState, options: RenderOptions = {}): string {
  const view = cardView(card, options.locale)
  const first = view.questions[0]
  const status: Record<CardState['status'], string> = {
    open: '',
    continued: ' (still answerable)',
    answered: ' (answered)',
    cancelled: ' (cancelled)',
    elsewhere: ' (answered elsewhere)',
  }
  const what =
    card.kind === 'approval'
      ? `Approval needed: ${first?.text ?? ''}`
      : card.kind === 'plan-review'
        ? `Plan review: ${first?.text ?? ''}`
        : view.questions.length > 1
          ? `${view.questions.length} questions: ${first?.header || first?.text || ''}`
          : (first?.text ?? 'Question')
  return escapeMrkdwn(truncatePlain(what, 200)) + status[card.status]
}

function headUnit(card: CardState, title: string, oncall: string | undefined, options: RenderOptions): Unit {
  const blocks: Unit = []
  const mentions = mentionText(options.mentions)
  // Every configured mention must notify, so a long list continues in further sections.
  if (mentions) for (const chunk of splitMrkdwn(mentions, SECTION)) blocks.push(section(chunk))
  const header = truncatePlain(title, SLACK_LIMITS.headerText)
  blocks.push({ type: 'header', text: plain(header) })
  // A cut header is repeated in full below it: nothing the agent wrote is silently dropped.
  if (header !== title.replace(/\s+/g, ' ').trim()) {
    for (const chunk of splitMrkdwn(`*${escapeMrkdwn(title)}*`, SECTION)) blocks.push(section(chunk))
  }
  const about = [`From agent \`${escapeMrkdwn(truncatePlain(card.agentId, 200))}\``]
  const listed = respondersOn(card.responders, 'slack')
  const slackResponders: Mention[] = [
    ...(listed?.users ?? []).map((id) => ({ platform: 'slack', kind: 'user' as const, id })),
    ...(listed?.groups ?? []).map((id) => ({ platform: 'slack', kind: 'group' as const, id })),
  ]
  if (slackResponders.length > 0) about.push(`Answerable by ${mentionText(slackResponders)}`)
  if (oncall) about.push(escapeMrkdwn(truncatePlain(oncall, 1000)))
  blocks.push(context(truncateMrkdwn(about.join(' · '), SECTION)))
  return blocks
}

/** Blocks for one question: text, detail, option listing, controls, and its draft or answer. */
function questionUnit(call: CallRef, q: QuestionView): Unit {
  const head: Unit = []
  if (q.subject) {
    const { name, icon } = q.subject
    const elements: ContextBlock['elements'] = []
    // The icon is for recognition only; only a web URL is loaded as an image.
    if (icon && /^https:\/\/[^\s<>|]+$/i.test(icon) && icon.length <= 3000) {
      elements.push({ type: 'image', image_url: icon, alt_text: truncatePlain(name, 100) || 'icon' })
    }
    const emoji = icon && /^:[a-z0-9_+-]{1,60}:$/i.test(icon) ? `${icon} ` : ''
    elements.push(mrkdwn(`${emoji}*${escapeMrkdwn(truncatePlain(name, 500))}*`))
    head.push({ type: 'context', elements })
  }
  // Question text, numbered (and headed) in a batch.
  const prefix =
    q.number !== undefined
      ? `*${q.number}.${q.header ? ` ${escapeMrkdwn(truncatePlain(q.header, 300))}` : ''}*\n`
      : ''
  // Split with the prefix in place: an escaped header can be 1,500 characters on its own.
  for (const chunk of splitMrkdwn(`${prefix}${markdownToMrkdwn(q.text)}`, SECTION)) head.push(section(chunk))
  if (q.detail)
    for (const chunk of splitMrkdwn(markdownToMrkdwn(q.detail), SECTION)) head.push(section(chunk))
  if (q.controls.length > 0) {
    const picker = q.controls.find((c) => c.kind === 'options')
    const listing = picker && needsListing(picker) ? optionListing(picker.options) : []
    for (const chunk of listing) head.push(section(chunk))
    head.push({ type: 'actions', elements: controlElements(call, q.controls, listing.length > 0) })
  }
  head.push(...statusBlocks(q))
  // One unit per question: kept in one message when it fits, else split block by block (a long
  // plan), which still leaves the controls after the text they refer to.
  return head
}

/** Options listed in full above a widget that cannot show them whole. */
function optionListing(opts: readonly { index: number; label: string; description?: string }[]): string[] {
  const lines: string[] = []
  let used = 0
  for (const [k, o] of opts.entries()) {
    const desc = o.description ? ` — ${escapeMrkdwn(o.description)}` : ''
    const line = `*${o.index + 1}.* ${escapeMrkdwn(o.label)}${desc}`
    if (used + line.length > LABEL_LISTING_CAP) {
      lines.push(`_…${opts.length - k} more options; their full text is too long to show here._`)
      break
    }
    used += line.length
    lines.push(line)
  }
  return splitMrkdwn(lines.join('\n'), SECTION)
}

/** A question's draft (shortened) or final answer (in full). */
function statusBlocks(q: QuestionView): MessageBlock[] {
  const s = q.status
  switch (s.kind) {
    case 'none':
      return []
    case 'unanswered':
      return [context('_No answer_')]
    case 'skipped':
      return [context(`_Skipped_ by ${personText(s.by)}`)]
    case 'draft': {
      const parts: string[] = []
      if (s.selected.length > 0)
        parts.push(
          `Selected: ${s.selected.map((l) => `*${escapeMrkdwn(truncatePlain(l, 100))}*`).join(', ')}`,
        )
      if (s.custom) parts.push(`Other: “${escapeMrkdwn(truncatePlain(s.custom, DRAFT_PREVIEW))}”`)
      return [context(truncateMrkdwn(`${parts.join(' · ')} — ${personText(s.by)}`, SECTION))]
    }
    case 'answer': {
      if (s.selected.length === 0 && s.custom === undefined) return [context('_Skipped_')]
      const lines: string[] = []
      if (s.selected.length > 0) lines.push(`*Answer:* ${s.selected.map((l) => escapeMrkdwn(l)).join(', ')}`)
      if (s.custom !== undefined) lines.push(`*${s.customLabel}:* ${escapeMrkdwn(s.custom)}`)
      return splitMrkdwn(lines.join('\n'), SECTION).map(section)
    }
  }
}

const ICONS: Partial<Record<StatusLine['kind'], string>> = {
  deadline: ':hourglass_flowing_sand: ',
  cancelled: ':no_entry_sign: ',
}

/** The card's status lines (one context block; each line is one text object). */
function statusUnit(lines: readonly StatusLine[]): Unit {
  const format = {
    people: (people: readonly Person[]) => people.map(personText).join(', '),
    time: (ms: number) => slackDate(ms),
    text: (raw: string) => escapeMrkdwn(truncatePlain(raw, 500)),
  }
  const texts = lines.map((line) => {
    const icon =
      line.kind === 'outcome'
        ? line.tone === 'ok'
          ? ':white_check_mark: '
          : ':x: '
        : (ICONS[line.kind] ?? '')
    return truncateMrkdwn(icon + statusText(line, format), SECTION)
  })
  return texts.length > 0 ? [context(...texts.slice(0, SLACK_LIMITS.contextElements))] : []
}

/** Pack units into messages under the block and text limits; a unit stays whole when it can. */
function pack(units: Unit[]): MessageBlock[][] {
  const max = SLACK_LIMITS.blocksPerMessage
  const budget = SLACK_LIMITS.messageTextBudget
  const messages: MessageBlock[][] = []
  let current: MessageBlock[] = []
  let text = 0
  const flush = () => {
    if (current.length > 0) messages.push(current)
    current = []
    text = 0
  }
  const fits = (blocks: Unit) =>
    current.length + blocks.length <= max && text + blockTextLength(blocks) <= budget
  const add = (blocks: Unit) => {
    current.push(...blocks)
    text += blockTextLength(blocks)
  }
  for (const unit of units) {
    if (unit.length === 0) continue
    if (fits(unit)) {
      add(unit)
      continue
    }
    flush()
    if (fits(unit)) {
      add(unit)
      continue
    }
    for (const block of unit) {
      if (!fits([block])) flush()
      add([block])
    }
  }
  flush()
  return messages
}
