/**
 * Card view -> Discord messages (legacy action rows + embeds). Pure: no I/O, no clock. The card
 * view (src/card/view.ts) decides what the card offers and says; this file only lays it out.
 *
 * A card becomes one message, or several when it does not fit one: question text is split across
 * embeds (never cut), and a message holds at most 5 action rows, so further rows continue in the
 * next message. Embeds render above components, so a message never holds a later question's
 * embed under an earlier question's rows.
 */

import type { APIAllowedMentions, APIEmbed } from 'discord.js'
import type { CardState, Mention, Person } from '../../src/adapter-kit.js'
import {
  type CardView,
  cardRef,
  cardView,
  type QuestionView,
  type StatusLine,
  statusText,
  wrapMarker,
} from '../../src/adapter-kit.js'
import { DISCORD_LIMITS as L } from './limits.js'
import { markdownToDiscord } from './markdown.js'
import { clamp, escapeInline, escapeMentions, splitMarkdown } from './text.js'
import { type DiscordRow, optionsInText, rowsFor } from './widgets.js'

export type { DiscordRow } from './widgets.js'

/** One message as sent to `POST /channels/{id}/messages` or `PATCH .../messages/{id}`. */
export interface DiscordMessage {
  content: string
  embeds: APIEmbed[]
  components: DiscordRow[]
  allowed_mentions: APIAllowedMentions
}

export interface RenderOptions {
  /** The destination's mentions (Discord roles and users); the only mentions that may ping. */
  mention?: readonly Mention[]
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
const DECLINED = 0xed4245

type Item = { kind: 'embed'; embed: APIEmbed } | { kind: 'row'; row: DiscordRow }

export function cardToDiscordMessages(card: CardState, options: RenderOptions = {}): DiscordMessage[] {
  const view = cardView(card, options.locale)
  const items: Item[] = []
  for (const q of view.questions) {
    for (const embed of questionEmbeds(view, q)) items.push({ kind: 'embed', embed })
    for (const row of rowsFor(cardRef(card), q.controls, q.number)) items.push({ kind: 'row', row })
  }
  for (const row of rowsFor(cardRef(card), view.footer)) items.push({ kind: 'row', row })
  const mentions = mentionContent(options.mention ?? [])
  return pack(statusContent(view, mentions.text), mentions.allowed, items)
}

/** Room for mentions in the 2000-character content, leaving the rest for the status lines. */
const MENTION_BUDGET = 1500

/**
 * Roles and users -> `<@&ID>` / `<@ID>`, and allowed_mentions listing exactly those. Mentions of
 * another platform or kind, and malformed ids, are dropped; mentions beyond the content budget are
 * neither shown nor allowed.
 */
export function mentionContent(entries: readonly Mention[]): { text: string; allowed: APIAllowedMentions } {
  const roles: string[] = []
  const users: string[] = []
  const parts: string[] = []
  let length = 0
  for (const { platform, kind, id } of entries) {
    if (platform !== 'discord' || (kind !== 'role' && kind !== 'user') || !/^\d{1,25}$/.test(id)) continue
    const list = kind === 'role' ? roles : users
    const text = kind === 'role' ? `<@&${id}>` : `<@${id}>`
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

const names = (people: readonly Person[]) =>
  [
    ...people.slice(0, 10).map((p) => personName(p)),
    ...(people.length > 10 ? [`${people.length - 10} more`] : []),
  ].join(', ')

function icon(line: StatusLine): string {
  switch (line.kind) {
    case 'deadline':
      return '⏳ '
    case 'holding':
      return '🕒 '
    case 'quorum':
      return '👍 '
    case 'continued':
      return '⌛ '
    case 'outcome':
      return line.tone === 'ok' ? '✅ ' : '⛔ '
    case 'cancelled':
      return '✖️ '
    case 'elsewhere':
      return '↪️ '
  }
}

/** The message content: configured mentions, then the card's status lines. */
function statusContent(view: CardView, mentions: string): string {
  const format = {
    people: names,
    time: (ms: number) => `<t:${Math.floor(ms / 1000)}:f> (<t:${Math.floor(ms / 1000)}:R>)`,
    text: (raw: string) => escapeInline(clamp(raw, 300)),
  }
  const lines = [
    ...(mentions ? [mentions] : []),
    ...view.statusLines.map((l) => icon(l) + statusText(l, format)),
  ]
  if (view.oncall) lines.push(`📟 ${escapeInline(clamp(view.oncall, 500))}`)
  // Over 2000 characters only with absurd names; the card's own text is in the embeds.
  const text = lines.join('\n')
  return text.length <= L.content ? text : `${text.slice(0, L.content - 1)}…`
}

function questionEmbeds(view: CardView, q: QuestionView): APIEmbed[] {
  const color = view.tone === 'bad' ? DECLINED : COLORS[view.status]
  let author: APIEmbed['author']
  const body: string[] = []
  if (q.subject) {
    // Lengths are checked after escaping: the escape adds characters.
    const name = escapeMentions(q.subject.name)
    author = { name: clamp(name, L.embedAuthor) }
    const url = q.subject.icon
    if (url && /^https?:\/\/\S+$/.test(url) && url.length <= 2048) author.icon_url = url
    if (name.length > L.embedAuthor) body.push(`**${escapeInline(q.subject.name)}**`)
  }
  if (q.header) {
    const header = escapeMentions(q.header)
    if (!author && header.length <= L.embedAuthor && !header.includes('\n')) author = { name: header }
    else body.push(`**${escapeInline(q.header)}**`)
  }
  const numbered = escapeMentions(q.number !== undefined ? `${q.number}. ${q.text}` : q.text)
  let embedTitle: string | undefined
  if (numbered.length <= L.embedTitle && !numbered.includes('\n')) embedTitle = numbered
  else {
    // In the text the question is markdown like the detail, so its links follow the same rules.
    const text = markdownToDiscord(q.text)
    body.push(wrapMarker('**', q.number !== undefined ? `${q.number}\\. ${text}` : text))
  }
  if (q.detail) body.push(markdownToDiscord(q.detail))
  const list = optionsInText(q.controls)
  if (list) body.push(list)
  const state = questionState(q)
  if (state) body.push(state)

  const chunks = body.length ? splitMarkdown(body.join('\n\n'), CHUNK) : []
  const first: APIEmbed = { color }
  if (author) first.author = author
  if (embedTitle) first.title = embedTitle
  if (chunks[0]) first.description = chunks[0]
  if (q.number !== undefined) first.footer = { text: `Question ${q.number} of ${view.questions.length}` }
  return [first, ...chunks.slice(1).map((description) => ({ color, description }))]
}

/** The shared draft (batches) or the final answer, as text. */
function questionState(q: QuestionView): string | undefined {
  const s = q.status
  const by = (p: Person | undefined) => (p ? `\n*by ${personName(p)}*` : '')
  switch (s.kind) {
    case 'none':
      return undefined
    case 'unanswered':
      return '**Answer:** *none*'
    case 'skipped':
      return `*Skipped${s.by ? ` by ${personName(s.by)}` : ''}*`
    case 'draft':
      return `${answerText(s.selected, s.custom, '**Selected:**')}${by(s.by)}`
    case 'answer':
      return answerText(s.selected, s.custom, '**Answer:**', s.customLabel)
  }
}

function answerText(
  selected: readonly string[],
  custom: string | undefined,
  lead: string,
  customLabel?: string,
): string {
  const parts: string[] = []
  if (selected.length) parts.push(selected.map((label) => escapeInline(label)).join(', '))
  if (custom !== undefined) {
    const quoted = `“${escapeMentions(custom)}”`
    parts.push(customLabel === 'Feedback' ? `**Feedback:** ${quoted}` : quoted)
  }
  if (!parts.length) return `${lead} *skipped*`
  return `${lead} ${parts.join(' + ')}`
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
