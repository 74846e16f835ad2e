/**
 * CardState -> Discord messages (legacy action rows + embeds). Pure: no I/O, no clock.
 *
 * A card becomes one message, or several when it does not fit one: question text is split across
 * embeds (never cut), and a message holds at most 5 action rows, so further rows continue in the
 * next message. Embeds render above components, so a message never holds a later question's
 * embed under an earlier question's rows.
 */
import {
  type APIActionRowComponent,
  type APIAllowedMentions,
  type APIButtonComponentWithCustomId,
  type APIComponentInMessageActionRow,
  type APIEmbed,
  type APISelectMenuOption,
  type APIStringSelectComponent,
  ButtonStyle,
  ComponentType,
} from 'discord.js'
import { cardRef, encodeComponentId } from '../../src/card/codec.js'
import { oncallText, pickLocale } from '../../src/card/text.js'
import type { CardState, Person } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { DISCORD_LIMITS as L } from './limits.js'
import { clamp, escapeInline, escapeMentions, splitMarkdown } from './text.js'

export type DiscordRow = APIActionRowComponent<APIComponentInMessageActionRow>

/** One message as sent to `POST /channels/{id}/messages` or `PATCH .../messages/{id}`. */
export interface DiscordMessage {
  content: string
  embeds: APIEmbed[]
  components: DiscordRow[]
  allowed_mentions: APIAllowedMentions
}

export interface RenderOptions {
  /** Destination.mention entries (`role:ID`, `user:ID`); the only mentions that may ping. */
  mention?: readonly string[]
  /** The guild's (or DM person's) locale, for approval wording from `display`. */
  locale?: string
}

/** Embed description chunk size: two chunks and a title still fit the 6000-character message total. */
const CHUNK = 2900
const COLORS = {
  open: 0x5865f2,
  continued: 0xfee75c,
  answered: 0x57f287,
  cancelled: 0x99aab5,
  elsewhere: 0x99aab5,
}

type Item = { kind: 'embed'; embed: APIEmbed } | { kind: 'row'; row: DiscordRow }

/** Whether a card in this state shows components someone can use. */
export function isLive(card: CardState): boolean {
  return card.status === 'open' || card.status === 'continued'
}

/** Whether the card needs a Submit button (batches, and multi-select which never completes on its own). */
export function needsSubmit(card: CardState): boolean {
  if (card.kind === 'approval') return false
  return (
    card.questions.length > 1 || card.questions.some((q) => q.multiSelect && (q.options?.length ?? 0) > 0)
  )
}

export function cardToDiscordMessages(card: CardState, options: RenderOptions = {}): DiscordMessage[] {
  const live = isLive(card)
  const items: Item[] = []
  card.questions.forEach((question, qi) => {
    for (const embed of questionEmbeds(card, question, qi, options.locale))
      items.push({ kind: 'embed', embed })
    if (live)
      for (const row of questionRows(card, question, qi, options.locale)) items.push({ kind: 'row', row })
  })
  if (live) {
    const row = cardRow(card)
    if (row) items.push({ kind: 'row', row })
  }
  const mentions = parseMentions(options.mention ?? [])
  return pack(headline(card, mentions.text), mentions.allowed, items)
}

/** Room for mentions in the 2000-character content, leaving the rest for the status lines. */
const MENTION_BUDGET = 1500

/**
 * `role:ID` / `user:ID` -> `<@&ID>` / `<@ID>`, and allowed_mentions listing exactly those.
 * Malformed entries are dropped; mentions beyond the content budget are neither shown nor allowed.
 */
export function parseMentions(entries: readonly string[]): { text: string; allowed: APIAllowedMentions } {
  const roles: string[] = []
  const users: string[] = []
  const parts: string[] = []
  let length = 0
  for (const entry of entries) {
    const match = /^(role|user):(\d{1,25})$/.exec(entry)
    const id = match?.[2]
    if (!id) continue
    const list = match[1] === 'role' ? roles : users
    const text = match[1] === 'role' ? `<@&${id}>` : `<@${id}>`
    if (list.includes(id) || list.length >= 100 || length + text.length + 1 > MENTION_BUDGET) continue
    list.push(id)
    parts.push(text)
    length += text.length + 1
  }
  const allowed: APIAllowedMentions = { parse: [] }
  if (roles.length) allowed.roles = roles
  if (users.length) allowed.users = users
  return { text: parts.join(' '), allowed }
}

function personName(person: Person | undefined): string {
  if (!person) return 'someone'
  return escapeInline(clamp(person.name ?? person.userId, 80))
}

function names(people: readonly Person[]): string {
  return people.map((p) => personName(p)).join(', ')
}

function headline(card: CardState, mentions: string): string {
  const lines: string[] = []
  if (mentions) lines.push(mentions)
  const question = card.questions[0]
  const intent = question?.intent
  switch (card.status) {
    case 'open':
      if (card.deadline !== undefined)
        lines.push(`⏳ Answer <t:${Math.floor(card.deadline / 1000)}:R>, or press **Take my time**.`)
      break
    case 'continued':
      lines.push('⌛ Continued: the agent has moved on, but an answer here still reaches it.')
      break
    case 'answered': {
      const chosen = card.result?.answers[0]
      let verb = 'Answered'
      if (intent?.kind === 'approval' && chosen) {
        if (chosen.selected.includes(intent.reject)) verb = '⛔ Rejected'
        else if (intent.always && chosen.selected.includes(intent.always)) verb = '✅ Always allowed'
        else verb = '✅ Approved'
      } else if (intent?.kind === 'plan-review' && chosen) {
        verb = chosen.selected.includes(intent.approve) ? '✅ Plan approved' : '↩️ Plan declined'
      } else verb = '✅ Answered'
      lines.push(`${verb} by ${personName(card.answeredBy)}.`)
      break
    }
    case 'cancelled':
      lines.push(`✖️ Cancelled${card.closedReason ? `: ${escapeInline(clamp(card.closedReason, 300))}` : '.'}`)
      break
    case 'elsewhere':
      lines.push('↪️ Answered elsewhere.')
      break
  }
  if (card.quorum > 1 && isLive(card)) {
    const who = card.approvals.length ? ` (${names(card.approvals)})` : ''
    lines.push(`👍 ${card.approvals.length} of ${card.quorum} approvals${who}`)
  }
  if (card.status === 'open' && card.deadline !== undefined && card.holders.length) {
    const verb = card.holders.length === 1 ? 'is' : 'are'
    lines.push(`🕒 ${names(card.holders.slice(0, 10))} ${verb} taking their time.`)
  }
  const oncall = oncallText(card)
  if (oncall && isLive(card)) lines.push(`📟 ${escapeInline(clamp(oncall, 500))}`)
  // Over 2000 characters only with absurd names; the card's own text is in the embeds.
  const text = lines.join('\n')
  return text.length <= L.content ? text : `${text.slice(0, L.content - 1)}…`
}

function questionEmbeds(
  card: CardState,
  question: AskUserQuestionItem,
  qi: number,
  locale: string | undefined,
): APIEmbed[] {
  const intent = question.intent
  const color = COLORS[card.status]
  let title = question.question
  let detail = question.detail
  let author: APIEmbed['author']
  const body: string[] = []
  if (intent?.kind === 'approval') {
    if (intent.display) {
      title = pickLocale(intent.display.question, locale)
      if (intent.display.detail) detail = pickLocale(intent.display.detail, locale)
    }
    if (intent.subject) {
      // Lengths are checked after escaping: the escape adds characters.
      const name = escapeMentions(intent.subject.name)
      author = { name: clamp(name, L.embedAuthor) }
      const icon = intent.subject.icon
      if (icon && /^https?:\/\/\S+$/.test(icon) && icon.length <= 2048) author.icon_url = icon
      if (name.length > L.embedAuthor) body.push(`**${escapeInline(intent.subject.name)}**`)
    }
  }
  if (question.header) {
    const header = escapeMentions(question.header)
    if (!author && header.length <= L.embedAuthor && !header.includes('\n')) author = { name: header }
    else body.push(`**${escapeInline(question.header)}**`)
  }
  const multi = card.questions.length > 1
  const numbered = escapeMentions(multi ? `${qi + 1}. ${title}` : title)
  let embedTitle: string | undefined
  if (numbered.length <= L.embedTitle && !numbered.includes('\n')) embedTitle = numbered
  else body.push(`**${numbered}**`)
  if (detail) body.push(escapeMentions(detail))
  const list = optionList(question)
  if (list) body.push(list)
  const state = questionState(card, question)
  if (state) body.push(state)

  const chunks = body.length ? splitMarkdown(body.join('\n\n'), CHUNK) : []
  const first: APIEmbed = { color }
  if (author) first.author = author
  if (embedTitle) first.title = embedTitle
  if (chunks[0]) first.description = chunks[0]
  if (multi) first.footer = { text: `Question ${qi + 1} of ${card.questions.length}` }
  return [first, ...chunks.slice(1).map((description) => ({ color, description }))]
}

/** Options listed in the text when a component cannot show them whole (descriptions, long labels). */
function optionList(question: AskUserQuestionItem): string | undefined {
  const options = question.options ?? []
  if (!options.length || question.intent?.kind === 'approval') return undefined
  const widgetMax = usesButtons(question) ? L.buttonLabel : L.selectOptionText
  const needed = options.some((o) => o.description || widgetText(o.label).length > widgetMax)
  if (!needed) return undefined
  return options
    .map((o, i) => {
      const description = o.description ? ` — ${escapeMentions(o.description)}` : ''
      return `**${i + 1}.** ${escapeInline(o.label)}${description}`
    })
    .join('\n')
}

/** The shared draft (batches) or the final answer, as text. */
function questionState(card: CardState, question: AskUserQuestionItem): string | undefined {
  if (card.status === 'answered' && card.result) {
    const item = card.result.answers.find((a) => a.id === question.id)
    if (!item) return undefined
    return answerText(item.selected, item.custom, '**Answer:**')
  }
  if (!isLive(card) || (card.questions.length < 2 && !question.multiSelect)) return undefined
  const draft = card.drafts[question.id]
  if (!draft) return undefined
  if (draft.skipped) return `*Skipped${draft.by ? ` by ${personName(draft.by)}` : ''}*`
  const text = answerText(draft.selected, draft.custom, '**Selected:**')
  if (!text) return undefined
  return draft.by ? `${text}\n*by ${personName(draft.by)}*` : text
}

function answerText(
  selected: readonly string[],
  custom: string | undefined,
  lead: string,
): string | undefined {
  const parts: string[] = []
  if (selected.length) parts.push(selected.map((label) => escapeInline(label)).join(', '))
  if (custom !== undefined) parts.push(`“${escapeMentions(custom)}”`)
  if (!parts.length) return lead === '**Answer:**' ? `${lead} *skipped*` : undefined
  return `${lead} ${parts.join(' + ')}`
}

/**
 * Agent text as shown in a component (button label, select option): plain text where Discord
 * renders no mentions, escaped all the same so nothing even looks like a ping.
 */
function widgetText(text: string): string {
  return escapeMentions(text)
}

function usesButtons(question: AskUserQuestionItem): boolean {
  const count = question.options?.length ?? 0
  return !question.multiSelect && count > 0 && count <= L.buttonsPerRow
}

function button(
  card: CardState,
  verb: Parameters<typeof encodeComponentId>[0]['verb'],
  label: string,
  style: APIButtonComponentWithCustomId['style'],
  q?: number,
  o?: number,
): APIButtonComponentWithCustomId {
  const ref: Parameters<typeof encodeComponentId>[0] = { ...cardRef(card), verb }
  if (q !== undefined) ref.q = q
  if (o !== undefined) ref.o = o
  return {
    type: ComponentType.Button,
    custom_id: encodeComponentId(ref, L.customId),
    label: clamp(widgetText(label), L.buttonLabel) || '…',
    style,
  }
}

function rowOf(components: APIComponentInMessageActionRow[]): DiscordRow {
  return { type: ComponentType.ActionRow, components }
}

function questionRows(
  card: CardState,
  question: AskUserQuestionItem,
  qi: number,
  locale: string | undefined,
): DiscordRow[] {
  const intent = question.intent
  if (intent?.kind === 'approval') {
    const approveLabel = intent.display?.approve ? pickLocale(intent.display.approve, locale) : intent.approve
    const buttons = [
      button(card, 'approve', approveLabel, ButtonStyle.Success),
      button(card, 'reject', intent.reject, ButtonStyle.Danger),
    ]
    if (intent.always) buttons.push(button(card, 'always', intent.always, ButtonStyle.Secondary))
    return [rowOf(buttons)]
  }
  const options = question.options ?? []
  const batch = card.questions.length > 1
  const draft = card.drafts[question.id]
  const selected = new Set(draft?.selected ?? [])
  const extras: APIButtonComponentWithCustomId[] = []
  if (intent?.kind === 'plan-review')
    extras.push(button(card, 'decline', 'Decline with feedback…', ButtonStyle.Danger, qi))
  else if (options.length) extras.push(button(card, 'other', 'Other…', ButtonStyle.Secondary, qi))
  else extras.push(button(card, 'other', draft?.custom ? 'Edit answer…' : 'Answer…', ButtonStyle.Primary, qi))
  if (batch) extras.push(button(card, 'skip', 'Skip', ButtonStyle.Secondary, qi))

  if (usesButtons(question)) {
    const buttons = options.map((o, oi) => {
      let style: APIButtonComponentWithCustomId['style'] = ButtonStyle.Primary
      if (intent?.kind === 'plan-review')
        style = o.label === intent.approve ? ButtonStyle.Success : ButtonStyle.Secondary
      if (selected.has(o.label)) style = ButtonStyle.Success
      return button(card, 'choose', o.label, style, qi, oi)
    })
    if (buttons.length + extras.length <= L.buttonsPerRow) return [rowOf([...buttons, ...extras])]
    return [rowOf(buttons), rowOf(extras)]
  }
  const rows: DiscordRow[] = []
  const pages = Math.ceil(options.length / L.selectOptions)
  for (let page = 0; page < pages; page++) {
    const slice = options.slice(page * L.selectOptions, (page + 1) * L.selectOptions)
    const choices: APISelectMenuOption[] = slice.map((o, i) => {
      const choice: APISelectMenuOption = {
        label: clamp(widgetText(o.label), L.selectOptionText) || '…',
        value: String(page * L.selectOptions + i),
      }
      if (o.description) choice.description = clamp(widgetText(o.description), L.selectOptionText)
      if (selected.has(o.label)) choice.default = true
      return choice
    })
    const range =
      pages > 1
        ? ` (${page * L.selectOptions + 1}–${page * L.selectOptions + slice.length} of ${options.length})`
        : ''
    const prefix = batch ? `${qi + 1}. ` : ''
    const select: APIStringSelectComponent = {
      type: ComponentType.StringSelect,
      custom_id: encodeComponentId({ ...cardRef(card), verb: 'set', q: qi, o: page }, L.customId),
      placeholder: clamp(
        `${prefix}${question.multiSelect ? 'Choose any' : 'Choose one'}${range}`,
        L.selectPlaceholder,
      ),
      options: choices,
      min_values: question.multiSelect ? 0 : 1,
      max_values: question.multiSelect ? choices.length : 1,
    }
    rows.push(rowOf([select]))
  }
  rows.push(rowOf(extras))
  return rows
}

function cardRow(card: CardState): DiscordRow | undefined {
  const buttons: APIButtonComponentWithCustomId[] = []
  if (needsSubmit(card)) buttons.push(button(card, 'submit', 'Submit', ButtonStyle.Success))
  if (card.status === 'open' && card.deadline !== undefined && card.kind !== 'approval')
    buttons.push(button(card, 'hold', 'Take my time', ButtonStyle.Secondary))
  return buttons.length ? rowOf(buttons) : undefined
}

export function embedLength(embed: APIEmbed): number {
  let n = (embed.title?.length ?? 0) + (embed.description?.length ?? 0)
  n += (embed.author?.name.length ?? 0) + (embed.footer?.text.length ?? 0)
  for (const field of embed.fields ?? []) n += field.name.length + field.value.length
  return n
}

function pack(content: string, allowed: APIAllowedMentions, items: Item[]): DiscordMessage[] {
  const messages: DiscordMessage[] = []
  let current: DiscordMessage = { content, embeds: [], components: [], allowed_mentions: allowed }
  let chars = 0
  const flush = () => {
    messages.push(current)
    current = { content: '', embeds: [], components: [], allowed_mentions: { parse: [] } }
    chars = 0
  }
  for (const item of items) {
    if (item.kind === 'embed') {
      const size = embedLength(item.embed)
      const full = current.embeds.length >= L.embedsPerMessage || chars + size > L.embedTotal
      if (full || current.components.length > 0) flush()
      current.embeds.push(item.embed)
      chars += size
    } else {
      if (current.components.length >= L.rows) flush()
      current.components.push(item.row)
    }
  }
  if (current.embeds.length || current.components.length || current.content || !messages.length) flush()
  return messages
}
