import { cleanText } from '../../src/adapter-kit.js'

const ZWSP = '\u200b'

/**
 * Discord's own `<…>` syntax: user, role and channel mentions (`<@1>`, `<@!1>`, `<@&1>`, `<#1>`),
 * slash-command mentions (`</deploy:1>`), custom emoji (`<:name:1>`, `<a:name:1>`), timestamps
 * (`<t:1:R>`) and guild links (`<id:customize>`); also after a markdown backslash (`<\#1>`).
 */
const DISCORD_TAG = /<(?=\\?[@#]|\/[^<>\n]{1,100}:\d|a?:\w+:\d|t:-?\d|id:)/gi

/**
 * Break everything in agent text that Discord would render as a mention or its other `<…>`
 * syntax. `allowed_mentions` already stops pings; this also stops `@everyone` or `<@&role>` from
 * *looking* like a ping, and `</command:id>` from being a button that fills in a command.
 */
export function escapeMentions(text: string): string {
  return cleanText(text)
    .replace(/@(everyone|here)/gi, `@${ZWSP}$1`)
    .replace(DISCORD_TAG, `<${ZWSP}`)
}

/** Escape markdown and mentions, for agent text shown inline (option labels in a list, names). */
export function escapeInline(text: string): string {
  return escapeMentions(text.replace(/([\\*_~`|>[\]()#-])/g, '\\$1'))
}

/**
 * Shorten text for a display-only slot (a button label, a modal title). Only ever used where the
 * full text is shown elsewhere on the card, so nothing is lost.
 */
export function clamp(text: string, max: number): string {
  const flat = cleanText(text).replace(/\s+/g, ' ').trim()
  if (flat.length <= max) return flat
  let cut = max - 1
  if (isHighSurrogate(flat.charCodeAt(cut - 1))) cut--
  return `${flat.slice(0, cut).trimEnd()}…`
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

const FENCE = /^\s*(```|~~~)/

/** The fence opener still open after `text`, given the one open before it (or ''). */
function openFence(before: string, text: string): string {
  let open = before
  for (const line of text.split('\n')) {
    if (!FENCE.test(line)) continue
    if (open) open = ''
    else open = line.trim().length <= 24 ? line.trim() : line.trim().slice(0, 3)
  }
  return open
}

function findCut(text: string, limit: number): number {
  if (text.length <= limit) return text.length
  const floor = Math.floor(limit / 2)
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = text.lastIndexOf(sep, limit - sep.length)
    if (at >= floor) return at + sep.length
  }
  return isHighSurrogate(text.charCodeAt(limit - 1)) ? limit - 1 : limit
}

/**
 * Split markdown into chunks of at most `max` characters, at paragraph, line or word boundaries
 * where possible. A code fence open at a cut is closed and reopened in the next chunk so every
 * chunk renders on its own. Only whitespace at the cuts is dropped.
 */
export function splitMarkdown(text: string, max: number): string[] {
  if (max < 40) throw new RangeError('splitMarkdown needs max >= 40')
  const chunks: string[] = []
  let rest = text.replace(/\s+$/, '')
  let reopen = ''
  while (rest.length > 0) {
    const prefix = reopen ? `${reopen}\n` : ''
    const budget = max - prefix.length
    if (rest.length <= budget) {
      chunks.push(prefix + rest)
      break
    }
    // Reserve room for a closing fence.
    const cut = findCut(rest, budget - 4)
    const piece = rest.slice(0, cut).replace(/\s+$/, '')
    const fence = openFence(reopen, piece)
    chunks.push(prefix + piece + (fence ? '\n```' : ''))
    rest = rest.slice(cut).replace(/^\s*\n/, '')
    reopen = fence
  }
  return chunks
}

export { pickLocale } from '../../src/adapter-kit.js'

/**
 * A private notice fits one message (2000 characters); line breaks are kept. Notices quote names
 * and agent text, so mentions are escaped like everywhere else.
 */
export function noticeText(raw: string): string {
  const text = escapeMentions(raw)
  if (text.length <= 2000) return text
  const cut = isHighSurrogate(text.charCodeAt(1998)) ? 1998 : 1999
  return `${text.slice(0, cut)}…`
}
