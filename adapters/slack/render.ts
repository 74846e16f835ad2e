/**
 * CardState -> Slack messages (Block Kit), as a pure function.
 *
 * A card usually fits one message. When it does not (a long plan, a batch of many questions),
 * it continues in further messages: nothing is cut silently, and the controls that finish the card
 * (Submit, Take my time) sit in the last message, after everything they refer to.
 */

import { cardRef, encodeComponentId } from '../../src/card/codec.js'
import { oncallText, pickLocale } from '../../src/card/text.js'
import type { CardState, Person, QuestionDraft } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import {
  type ActionElement,
  type ActionsBlock,
  type ButtonElement,
  blockTextLength,
  type ContextBlock,
  type MessageBlock,
  type Mrkdwn,
  type PlainText,
  type SectionBlock,
  SLACK_LIMITS,
  type SlackMessage,
  type SlackOption,
  type SlackOptionGroup,
} from './blocks.js'
import { escapeMrkdwn, markdownToMrkdwn, splitMrkdwn, truncateMrkdwn, truncatePlain } from './mrkdwn.js'

export interface RenderOptions {
  /**
   * Mentions from the destination's config: `subteam:ID` renders `<!subteam^ID>`, `user:ID`
   * renders `<@ID>`. Config, not agent text, so these may notify.
   */
  mentions?: readonly string[]
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

const plain = (text: string): PlainText => ({
  type: 'plain_text',
  text: text === '' ? ' ' : text,
  emoji: true,
})
const mrkdwn = (text: string): Mrkdwn => ({ type: 'mrkdwn', text: text === '' ? ' ' : text })
const section = (text: string): SectionBlock => ({ type: 'section', text: mrkdwn(text) })
const context = (...texts: string[]): ContextBlock => ({ type: 'context', elements: texts.map(mrkdwn) })
const id = (
  card: Pick<CardState, 'agentId' | 'callId'>,
  verb: Parameters<typeof encodeComponentId>[0]['verb'],
  q?: number,
  o?: number,
) =>
  encodeComponentId(
    { ...cardRef(card), verb, ...(q === undefined ? {} : { q }), ...(o === undefined ? {} : { o }) },
    SLACK_LIMITS.actionId,
  )

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

/** Destination mentions (`subteam:ID`, `user:ID`) as Slack mention syntax; malformed ids are dropped. */
export function mentionText(mentions: readonly string[] | undefined): string {
  const out: string[] = []
  for (const m of mentions ?? []) {
    const [kind, ref] = m.split(':')
    if (!ref || !/^[A-Z0-9]+$/i.test(ref)) continue
    if (kind === 'subteam') out.push(`<!subteam^${ref}>`)
    else if (kind === 'user') out.push(`<@${ref}>`)
  }
  return out.join(' ')
}

type Unit = MessageBlock[]

/** Render a card as one or more Slack messages (see the module comment). */
export function cardToMessages(card: CardState, options: RenderOptions = {}): SlackMessage[] {
  const live = card.status === 'open' || card.status === 'continued'
  const units: Unit[] = [headUnit(card, options)]
  card.questions.forEach((q, index) => {
    units.push(questionUnit(card, q, index, live, options))
  })
  units.push(footUnit(card, live))
  const packed = pack(units)
  const summary = notificationText(card, options)
  return packed.map((blocks, i) => {
    // The first block names the call and the part, so every message of a card can be found again.
    const [first, ...rest] = blocks
    const tagged = first ? [{ ...first, block_id: id(card, 'page', undefined, i) }, ...rest] : blocks
    return {
      text: packed.length === 1 ? summary : `${summary} (part ${i + 1} of ${packed.length})`,
      blocks: tagged,
    }
  })
}

/** The notification and accessibility text (shown where blocks are not). */
export function notificationText(card: CardState, options: RenderOptions = {}): string {
  const first = card.questions[0]
  const status: Record<CardState['status'], string> = {
    open: '',
    continued: ' (still answerable)',
    answered: ' (answered)',
    cancelled: ' (cancelled)',
    elsewhere: ' (answered elsewhere)',
  }
  const what =
    card.kind === 'approval'
      ? `Approval needed: ${questionText(first, options.locale)}`
      : card.kind === 'plan-review'
        ? `Plan review: ${first?.question ?? ''}`
        : card.questions.length > 1
          ? `${card.questions.length} questions: ${first?.header || first?.question || ''}`
          : (first?.question ?? 'Question')
  return escapeMrkdwn(truncatePlain(what, 200)) + status[card.status]
}

function questionText(q: AskUserQuestionItem | undefined, locale?: string): string {
  if (!q) return ''
  if (q.intent?.kind === 'approval') return pickLocale(q.intent.display?.question, locale) ?? q.question
  return q.question
}

function cardTitle(card: CardState): string {
  const first = card.questions[0]
  if (card.questions.length === 1 && first?.header) return first.header
  if (card.kind === 'approval') return 'Approval needed'
  if (card.kind === 'plan-review') return 'Plan review'
  return card.questions.length > 1 ? `${card.questions.length} questions` : 'Question'
}

function headUnit(card: CardState, options: RenderOptions): Unit {
  const blocks: Unit = []
  const mentions = mentionText(options.mentions)
  // Every configured mention must notify, so a long list continues in further sections.
  if (mentions) for (const chunk of splitMrkdwn(mentions, SECTION)) blocks.push(section(chunk))
  const title = cardTitle(card)
  const header = truncatePlain(title, SLACK_LIMITS.headerText)
  blocks.push({ type: 'header', text: plain(header) })
  // A cut header is repeated in full below it: nothing the agent wrote is silently dropped.
  if (header !== title.replace(/\s+/g, ' ').trim()) {
    for (const chunk of splitMrkdwn(`*${escapeMrkdwn(title)}*`, SECTION)) blocks.push(section(chunk))
  }
  const about = [`From agent \`${escapeMrkdwn(truncatePlain(card.agentId, 200))}\``]
  const slackResponders = [
    ...(card.responders?.slack?.users ?? []).map((u) => `user:${u}`),
    ...(card.responders?.slack?.groups ?? []).map((g) => `subteam:${g}`),
  ]
  if (slackResponders.length > 0) about.push(`Answerable by ${mentionText(slackResponders)}`)
  const oncall = oncallText(card)
  if (oncall) about.push(escapeMrkdwn(truncatePlain(oncall, 1000)))
  blocks.push(context(truncateMrkdwn(about.join(' · '), SECTION)))
  return blocks
}

/** Blocks for one question: text, detail, option help, controls, and its draft or answer. */
function questionUnit(
  card: CardState,
  q: AskUserQuestionItem,
  index: number,
  live: boolean,
  options: RenderOptions,
): Unit {
  const batch = card.questions.length > 1
  const head: Unit = []
  const intent = q.intent

  if (intent?.kind === 'approval' && intent.subject) {
    const { name, icon } = intent.subject
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
  const prefix = batch
    ? `*${index + 1}.${q.header ? ` ${escapeMrkdwn(truncatePlain(q.header, 300))}` : ''}*\n`
    : ''
  // Split with the prefix in place: an escaped header can be 1,500 characters on its own.
  const text = markdownToMrkdwn(questionText(q, options.locale))
  for (const chunk of splitMrkdwn(`${prefix}${text}`, SECTION)) head.push(section(chunk))

  const detail =
    intent?.kind === 'approval' ? (pickLocale(intent.display?.detail, options.locale) ?? q.detail) : q.detail
  if (detail) {
    for (const chunk of splitMrkdwn(markdownToMrkdwn(detail), SECTION)) head.push(section(chunk))
  }
  if (live) {
    const listing = optionListing(q, card.kind)
    for (const chunk of listing) head.push(section(chunk))
    head.push(...controlBlocks(card, q, index, listing.length > 0, options))
  }
  const draft = card.drafts[q.id]
  if (live && draft && (batch || q.multiSelect)) head.push(draftContext(draft))
  if (!live) head.push(...answerBlocks(card, q))
  // One unit per question: kept in one message when it fits, else split block by block (a long
  // plan), which still leaves the controls after the text they refer to.
  return head
}

/** Whether option buttons/menus number their labels and list them in full above. */
function optionListing(q: AskUserQuestionItem, kind: CardState['kind']): string[] {
  const opts = q.options ?? []
  if (kind === 'approval' || opts.length === 0) return []
  const checkboxes = q.multiSelect && opts.length <= SLACK_LIMITS.checkboxOptions
  const limit = opts.length <= 5 && !q.multiSelect ? SLACK_LIMITS.buttonText - 4 : SLACK_LIMITS.optionText - 5
  const needed = opts.some(
    (o) =>
      o.label.length > limit ||
      /\s{2,}|\n/.test(o.label) ||
      (o.description !== undefined &&
        o.description !== '' &&
        (!checkboxes || o.description.length > SLACK_LIMITS.optionDescription)),
  )
  if (!needed) return []
  const lines: string[] = []
  let used = 0
  for (const [k, o] of opts.entries()) {
    const desc = o.description ? ` — ${escapeMrkdwn(o.description)}` : ''
    const line = `*${k + 1}.* ${escapeMrkdwn(o.label)}${desc}`
    if (used + line.length > LABEL_LISTING_CAP) {
      lines.push(`_…${opts.length - k} more options; their full text is too long to show here._`)
      break
    }
    used += line.length
    lines.push(line)
  }
  return splitMrkdwn(lines.join('\n'), SECTION)
}

function optionText(label: string, k: number, numbered: boolean, max: number): string {
  return truncatePlain(numbered ? `${k + 1}. ${label}` : label, max)
}

function button(actionId: string, text: string, style?: 'primary' | 'danger'): ButtonElement {
  return {
    type: 'button',
    action_id: actionId,
    text: plain(truncatePlain(text, SLACK_LIMITS.buttonText)),
    ...(style ? { style } : {}),
  }
}

/** Options as Slack option objects, grouped in hundreds past 100. */
function selectOptions(
  q: AskUserQuestionItem,
  numbered: boolean,
): { options: SlackOption[]; groups?: SlackOptionGroup[] } {
  const options = (q.options ?? []).map(
    (o, k): SlackOption => ({
      text: plain(optionText(o.label, k, numbered, SLACK_LIMITS.optionText)),
      value: String(k),
    }),
  )
  return grouped(options)
}

/** Up to 100 options as they are; more in groups of 100 (Slack allows 100 groups). */
function grouped(options: SlackOption[]): { options: SlackOption[]; groups?: SlackOptionGroup[] } {
  if (options.length <= SLACK_LIMITS.selectOptions) return { options }
  const groups: SlackOptionGroup[] = []
  for (let start = 0; start < options.length && groups.length < SLACK_LIMITS.optionGroups; start += 100) {
    const slice = options.slice(start, start + 100)
    groups.push({ label: plain(`Options ${start + 1}–${start + slice.length}`), options: slice })
  }
  return { options, groups }
}

function controlBlocks(
  card: CardState,
  q: AskUserQuestionItem,
  index: number,
  numbered: boolean,
  renderOptions: RenderOptions,
): MessageBlock[] {
  const call = card
  const opts = q.options ?? []
  const batch = card.questions.length > 1
  const draft = card.drafts[q.id]
  const intent = q.intent
  const elements: ActionElement[] = []

  if (card.kind === 'approval' && intent?.kind === 'approval') {
    const approveText = pickLocale(intent.display?.approve, renderOptions.locale) ?? intent.approve
    elements.push(button(id(call, 'approve'), approveText, 'primary'))
    elements.push(button(id(call, 'reject'), intent.reject, 'danger'))
    if (intent.always !== undefined) elements.push(button(id(call, 'always'), intent.always))
    return [{ type: 'actions', elements }]
  }

  if (card.kind === 'plan-review' && intent?.kind === 'plan-review') {
    elements.push(button(id(call, 'approve'), intent.approve, 'primary'))
    const others = opts.map((o, k) => ({ o, k })).filter(({ o }) => o.label !== intent.approve)
    if (opts.length <= 5) {
      for (const { o, k } of others)
        elements.push(button(id(call, 'choose', index, k), optionText(o.label, k, numbered, 75)))
    } else {
      const { options } = selectOptions(q, numbered)
      const rest = grouped(options.filter((_, k) => opts[k]?.label !== intent.approve))
      elements.push({
        type: 'static_select',
        action_id: id(call, 'choose', index),
        placeholder: plain('Other responses…'),
        ...(rest.groups ? { option_groups: rest.groups } : { options: rest.options }),
      })
    }
    elements.push(button(id(call, 'decline'), 'Decline with feedback…', 'danger'))
    return [{ type: 'actions', elements }]
  }

  const chosen = new Set(draft && !draft.skipped ? draft.selected : [])
  if (opts.length === 0) {
    elements.push(button(id(call, 'other', index), draft?.custom ? 'Change answer…' : 'Answer…', 'primary'))
  } else if (q.multiSelect) {
    const { options, groups } = selectOptions(q, numbered)
    const initial = options.filter((_, k) => chosen.has(opts[k]?.label ?? ''))
    if (opts.length <= SLACK_LIMITS.checkboxOptions) {
      const withDesc = options.map((o, k): SlackOption => {
        const d = opts[k]?.description
        return d && d.length <= SLACK_LIMITS.optionDescription ? { ...o, description: plain(d) } : o
      })
      const initialWithDesc = withDesc.filter((_, k) => chosen.has(opts[k]?.label ?? ''))
      elements.push({
        type: 'checkboxes',
        action_id: id(call, 'set', index),
        options: withDesc,
        ...(initialWithDesc.length > 0 ? { initial_options: initialWithDesc } : {}),
      })
    } else {
      elements.push({
        type: 'multi_static_select',
        action_id: id(call, 'set', index),
        placeholder: plain('Choose one or more…'),
        ...(groups ? { option_groups: groups } : { options }),
        ...(initial.length > 0 ? { initial_options: initial } : {}),
      })
    }
    elements.push(button(id(call, 'other', index), 'Other…'))
  } else if (opts.length <= 5) {
    opts.forEach((o, k) => {
      elements.push(
        button(
          id(call, 'choose', index, k),
          optionText(o.label, k, numbered, 75),
          chosen.has(o.label) ? 'primary' : undefined,
        ),
      )
    })
    elements.push(button(id(call, 'other', index), 'Other…'))
  } else {
    const { options, groups } = selectOptions(q, numbered)
    const initial = options.find((_, k) => chosen.has(opts[k]?.label ?? ''))
    elements.push({
      type: 'static_select',
      action_id: id(call, 'choose', index),
      placeholder: plain('Choose…'),
      ...(groups ? { option_groups: groups } : { options }),
      ...(initial ? { initial_option: initial } : {}),
    })
    elements.push(button(id(call, 'other', index), 'Other…'))
  }
  if (batch) elements.push(button(id(call, 'skip', index), draft?.skipped ? 'Skipped' : 'Skip'))
  return [{ type: 'actions', elements }]
}

function draftContext(draft: QuestionDraft): ContextBlock {
  if (draft.skipped) return context(`_Skipped_ by ${personText(draft.by)}`)
  const parts: string[] = []
  if (draft.selected.length > 0) {
    parts.push(
      `Selected: ${draft.selected.map((l) => `*${escapeMrkdwn(truncatePlain(l, 100))}*`).join(', ')}`,
    )
  }
  if (draft.custom) parts.push(`Other: “${escapeMrkdwn(truncatePlain(draft.custom, DRAFT_PREVIEW))}”`)
  if (parts.length === 0) parts.push('_Nothing selected yet_')
  return context(truncateMrkdwn(`${parts.join(' · ')} — ${personText(draft.by)}`, SECTION))
}

/** What was chosen for one question of a finished card, in full. */
function answerBlocks(card: CardState, q: AskUserQuestionItem): MessageBlock[] {
  const item = card.result?.answers.find((a) => a.id === q.id)
  if (!item) return card.status === 'answered' ? [context('_No answer_')] : []
  if (item.selected.length === 0 && item.custom === undefined) return [context('_Skipped_')]
  const lines: string[] = []
  if (item.selected.length > 0)
    lines.push(`*Answer:* ${item.selected.map((l) => escapeMrkdwn(l)).join(', ')}`)
  if (item.custom !== undefined) {
    const label = q.intent?.kind === 'plan-review' ? 'Feedback' : item.selected.length > 0 ? 'Also' : 'Answer'
    lines.push(`*${label}:* ${escapeMrkdwn(item.custom)}`)
  }
  return splitMrkdwn(lines.join('\n'), SECTION).map(section)
}

/** Status, deadline and progress lines, then the card-wide controls. */
function footUnit(card: CardState, live: boolean): Unit {
  const blocks: Unit = []
  const lines: string[] = []
  const single = card.questions.length === 1 ? card.questions[0] : undefined
  const intent = single?.intent

  if (card.kind === 'approval' && card.quorum > 1 && live) {
    const who = card.approvals.map(personText).join(', ')
    lines.push(`${card.approvals.length} of ${card.quorum} approvals${who ? `: ${who}` : ''}`)
  }
  switch (card.status) {
    case 'open':
      if (card.deadline !== undefined) {
        lines.push(
          `:hourglass_flowing_sand: Answer by ${slackDate(card.deadline, '{date_short_pretty} at {time}')}`,
        )
      }
      if (card.holders.length > 0) {
        lines.push(
          `${card.holders.map(personText).join(', ')} ${card.holders.length === 1 ? 'is' : 'are'} taking their time`,
        )
      }
      break
    case 'continued':
      lines.push('The agent has continued; your answer will still reach it.')
      break
    case 'answered': {
      const by = personText(card.answeredBy)
      const when = card.answeredAt !== undefined ? ` · ${slackDate(card.answeredAt)}` : ''
      let verb = 'Answered'
      const picked = card.result?.answers[0]
      if (intent?.kind === 'approval') {
        const label = picked?.selected[0]
        verb =
          label === intent.reject
            ? ':x: Rejected'
            : label === intent.always
              ? ':white_check_mark: Always allowed'
              : ':white_check_mark: Approved'
        const approvers =
          card.approvals.length > 1 && label !== intent.reject
            ? card.approvals.map(personText).join(', ')
            : by
        lines.push(`${verb} by ${approvers}${when}`)
        break
      }
      if (intent?.kind === 'plan-review') {
        verb =
          picked?.selected[0] === intent.approve ? ':white_check_mark: Plan approved' : ':x: Plan declined'
      } else {
        verb = ':white_check_mark: Answered'
      }
      lines.push(`${verb} by ${by}${when}`)
      break
    }
    case 'cancelled':
      lines.push(
        `:no_entry_sign: Cancelled${card.closedReason ? `: ${escapeMrkdwn(truncatePlain(card.closedReason, 500))}` : ''}`,
      )
      break
    case 'elsewhere':
      lines.push('Answered elsewhere.')
      break
  }
  // Lists of people (holders, approvers) are unbounded; each line is one text object.
  if (lines.length > 0) {
    const shown = lines.slice(0, SLACK_LIMITS.contextElements).map((l) => truncateMrkdwn(l, SECTION))
    blocks.push(context(...shown))
  }

  if (live) {
    const elements: ActionElement[] = []
    const needsSubmit =
      card.questions.length > 1 || (single?.multiSelect === true && card.kind === 'questions')
    if (needsSubmit) elements.push(button(id(card, 'submit'), 'Submit', 'primary'))
    if (card.status === 'open' && card.deadline !== undefined) {
      elements.push(button(id(card, 'hold'), 'Take my time'))
    }
    if (elements.length > 0) blocks.push({ type: 'actions', elements } satisfies ActionsBlock)
  }
  return blocks
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
