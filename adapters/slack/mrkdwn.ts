/**
 * Agent text -> Slack mrkdwn, as pure functions.
 *
 * Agent text is untrusted: `&`, `<` and `>` are always escaped, so it can never form `<!channel>`,
 * `<!here>`, `<!everyone>`, `<@U…>`, `<!subteam^…>` or a link Slack would parse. Bare `@here` style
 * words are defanged too (Slack only parses them with `link_names`, which we never set, but a
 * zero-width space costs nothing). The only `<…>` sequences in the output are links this module
 * builds itself from http(s)/mailto URLs.
 */

const ZWSP = '\u200b'
/** Private-use sentinels for spans already converted (code, links, bold) during inline conversion. */
const OPEN = '\ue000'
const CLOSE = '\ue001'

/** Escape the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return defangBroadcasts(text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'))
}

/** `@channel`, `@here`, `@everyone` in agent text get a zero-width space so they never notify. */
function defangBroadcasts(text: string): string {
  return text.replace(/@(channel|here|everyone)\b/gi, `@${ZWSP}$1`)
}

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s<>|]+$/i

/** A link Slack renders, or the escaped text plus URL when the URL is not a plain web/mail link. */
function link(url: string, text: string): string {
  const label = text.trim() === '' ? url : text
  if (!SAFE_URL.test(url)) return `${escapeMrkdwn(label)} (${escapeMrkdwn(url)})`
  // `|` would end the URL part early; `>` ends the link. Both are already excluded from the URL.
  return `<${url.replace(/&/g, '&amp;')}|${escapeMrkdwn(label).replace(/\|/g, '¦')}>`
}

/**
 * Convert one line of inline markdown: code spans, links, images, bold, italic, strike.
 * Everything else is escaped literal text.
 */
export function inlineToMrkdwn(line: string): string {
  const spans: string[] = []
  const hold = (converted: string) => {
    spans.push(converted)
    return `${OPEN}${spans.length - 1}${CLOSE}`
  }
  let text = line.replace(/[\ue000\ue001]/g, '')
  // Code spans first: their content is literal.
  text = text.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) =>
    hold(`\`${escapeMrkdwn(code.replace(/`/g, 'ˋ'))}\``),
  )
  // Images and links: [text](url) / ![alt](url) / <https://…> autolinks.
  text = text.replace(
    /!?\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g,
    (_m, label: string, url: string) => hold(link(url, label)),
  )
  text = text.replace(/<((?:https?:\/\/|mailto:)[^\s<>]+)>/gi, (_m, url: string) => hold(link(url, url)))
  text = escapeMrkdwn(text)
  // Emphasis. Bold first, held so the italic pass does not see its asterisks.
  text = text.replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, (_m, _d, inner: string) => hold(`*${inner}*`))
  text = text.replace(
    /(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?![\w*])/g,
    (_m, pre: string, inner: string) => `${pre}_${inner}_`,
  )
  text = text.replace(/~~(?=\S)([\s\S]*?\S)~~/g, (_m, inner: string) => `~${inner}~`)
  // Restore held spans (they may nest: bold can contain a link).
  const restore = (s: string): string =>
    s.replace(new RegExp(`${OPEN}(\\d+)${CLOSE}`, 'g'), (_m, i: string) => restore(spans[Number(i)] ?? ''))
  return restore(text)
}

const FENCE = /^\s{0,3}(```+|~~~+)/
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/
const BULLET = /^(\s*)[-*+]\s+(.*)$/
const QUOTE = /^\s{0,3}>\s?(.*)$/
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/
const TABLE_ROW = /^\s*\|.*\|\s*$/

/**
 * Convert agent markdown (CommonMark-ish, as models write it) to Slack mrkdwn.
 * Headings become bold lines, bullets `•`, tables and fenced code become Slack code blocks
 * (tables keep their alignment there), quotes stay quotes.
 */
export function markdownToMrkdwn(markdown: string): string {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n')
  const out: string[] = []
  let fence: string | undefined
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    const fenceMatch = FENCE.exec(line)
    if (fence !== undefined) {
      if (fenceMatch && fenceMatch[1]?.[0] === fence[0] && (fenceMatch[1]?.length ?? 0) >= fence.length) {
        out.push('```')
        fence = undefined
      } else {
        out.push(escapeCode(line))
      }
      continue
    }
    if (fenceMatch) {
      fence = fenceMatch[1] ?? '```'
      out.push('```') // Slack ignores a language tag, and would show it as text
      continue
    }
    if (TABLE_ROW.test(line)) {
      const rows: string[] = []
      while (i < lines.length && TABLE_ROW.test(lines[i] ?? '')) rows.push(escapeCode(lines[i++] ?? ''))
      i--
      out.push('```', ...rows, '```')
      continue
    }
    const heading = HEADING.exec(line)
    if (heading) {
      const inner = inlineToMrkdwn(heading[1] ?? '').replace(/\*/g, '')
      out.push(inner === '' ? '' : `*${inner}*`)
      continue
    }
    if (RULE.test(line)) {
      out.push('──────────')
      continue
    }
    const quote = QUOTE.exec(line)
    if (quote) {
      out.push(`&gt; ${inlineToMrkdwn(quote[1] ?? '')}`)
      continue
    }
    const bullet = BULLET.exec(line)
    if (bullet) {
      out.push(`${bullet[1] ?? ''}• ${inlineToMrkdwn(bullet[2] ?? '')}`)
      continue
    }
    out.push(inlineToMrkdwn(line))
  }
  if (fence !== undefined) out.push('```') // an unclosed fence would swallow what follows the card text
  return out.join('\n')
}

/** Inside code, only escaping applies; backtick fences inside are neutralised so they cannot close ours. */
function escapeCode(line: string): string {
  return escapeMrkdwn(line).replace(/```/g, 'ˋˋˋ')
}

/**
 * Split mrkdwn into chunks of at most `max` characters, preferring paragraph, line and word
 * boundaries. Never cuts inside an entity (`&amp;`) or a link (`<url|text>`), and keeps code
 * blocks balanced: a chunk that ends inside ``` closes it and the next one reopens it.
 */
export function splitMrkdwn(text: string, max: number): string[] {
  if (max < 16) throw new RangeError('splitMrkdwn needs room for code fences')
  const chunks: string[] = []
  let rest = text
  let reopen = false
  while (true) {
    const prefix: string = reopen ? '```\n' : ''
    if (prefix.length + rest.length <= max) {
      const last = prefix + rest
      if (last.trim() !== '' || chunks.length === 0) chunks.push(last)
      break
    }
    const room = max - prefix.length - 4 // room for a closing "\n```"
    let at = pickSplit(rest, room)
    at = avoidEntityOrLink(rest, at)
    let piece = rest.slice(0, at).replace(/\s+$/, '')
    if (piece === '') {
      piece = rest.slice(0, room)
      at = room
    }
    const openFence: boolean = countFences(prefix + piece) % 2 === 1
    chunks.push(prefix + piece + (openFence ? '\n```' : ''))
    reopen = openFence
    rest = rest.slice(at).replace(/^\n+/, '')
    if (reopen && rest.startsWith('```')) {
      // The fence closes right at the boundary: nothing to reopen.
      rest = rest.slice(3).replace(/^\n/, '')
      reopen = false
    }
  }
  return chunks
}

function countFences(text: string): number {
  return (text.match(/```/g) ?? []).length
}

function pickSplit(text: string, room: number): number {
  const window = text.slice(0, room + 1)
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(sep)
    if (at >= room / 2) return at
  }
  let at = room
  const code = text.charCodeAt(at - 1)
  if (code >= 0xd800 && code <= 0xdbff) at-- // do not split an emoji
  return at
}

/** Move a split point back so it does not fall inside `&amp;`-style entities or `<…>` links. */
function avoidEntityOrLink(text: string, at: number): number {
  const head = text.slice(0, at)
  const lt = head.lastIndexOf('<')
  if (lt > head.lastIndexOf('>') && lt > 0) return lt
  const amp = head.lastIndexOf('&')
  if (amp > head.lastIndexOf(';') && at - amp < 6 && amp > 0) return amp
  return at
}

/** Cut plain text to `max` characters with a visible `…`, never splitting a surrogate pair. */
export function truncatePlain(text: string, max: number): string {
  const clean = text.replace(/\s+/g, ' ').trim()
  if (clean.length <= max) return clean
  let cut = max - 1
  const code = clean.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return `${clean.slice(0, cut)}…`
}

/**
 * Cut mrkdwn to `max` characters with a visible marker, without leaving half an entity, half a
 * link or an open code block.
 */
export function truncateMrkdwn(text: string, max: number): string {
  if (text.length <= max) return text
  const [first] = splitMrkdwn(text, max - 2)
  return `${first ?? ''} …`
}
