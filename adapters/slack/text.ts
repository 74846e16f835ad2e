/**
 * Slack text helpers: escaping agent text for mrkdwn, splitting long mrkdwn at safe points, and
 * cutting plain text for fields with a hard limit. Markdown itself is printed by markdown.ts from
 * the one parsed tree.
 *
 * Agent text is untrusted: `&`, `<` and `>` are always escaped, so it can never form `<!channel>`,
 * `<!here>`, `<!everyone>`, `<@U…>`, `<!subteam^…>` or a link Slack would parse. Bare `@here` style
 * words are defanged too (Slack only parses them with `link_names`, which we never set, but a
 * zero-width space costs nothing). Everything passes through the core `cleanText` first (no bidi
 * overrides or control characters).
 */
import { cleanText } from '../../src/adapter-kit.js'

const ZWSP = '\u200b'

/** Escape the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return defangBroadcasts(cleanText(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'))
}

/** `@channel`, `@here`, `@everyone` in agent text get a zero-width space so they never notify. */
function defangBroadcasts(text: string): string {
  return text.replace(/@(channel|here|everyone)\b/gi, `@${ZWSP}$1`)
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
    at = avoidEntityOrLink(rest, at, room)
    let piece = rest.slice(0, at).replace(/\s+$/, '')
    if (piece === '') {
      // A link longer than a whole chunk cannot stay a link: it becomes its text and its URL,
      // which are cut like any text (a cut inside `<…|…>` would leave a broken link behind).
      const link = /^(\s*)<([^|>]*)\|([^>]*)>/.exec(rest)
      if (link) {
        rest = `${link[1]}${link[3]} (${defangBroadcasts(link[2] ?? '')})${rest.slice(link[0].length)}`
        continue
      }
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

/**
 * Move a split point so it does not fall inside `&amp;`-style entities or `<…>` links: before
 * the link, or after it when the chunk starts with it and it fits; 0 when it cannot fit at all.
 */
function avoidEntityOrLink(text: string, at: number, room: number): number {
  const head = text.slice(0, at)
  const lt = head.lastIndexOf('<')
  if (lt > head.lastIndexOf('>')) {
    if (head.slice(0, lt).trim() !== '') return lt
    const end = text.indexOf('>', lt)
    return end !== -1 && end < room ? end + 1 : 0
  }
  const amp = head.lastIndexOf('&')
  if (amp > head.lastIndexOf(';') && at - amp < 6 && amp > 0) return amp
  return at
}

/** Cut plain text to `max` characters with a visible `…`, never splitting a surrogate pair. */
export function truncatePlain(text: string, max: number): string {
  const clean = cleanText(text).replace(/\s+/g, ' ').trim()
  if (clean.length <= max) return clean
  let cut = max - 1
  const code = clean.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return `${clean.slice(0, cut)}…`
}

/**
 * Agent text as escaped mrkdwn on one line, cut to `max` characters after escaping (an escape
 * turns one character into up to five), with a visible `…`; never inside an entity or a
 * surrogate pair.
 * @example escapeMrkdwnCut('<<<<', 10) // '&lt;&lt;…'
 */
export function escapeMrkdwnCut(text: string, max: number): string {
  const escaped = escapeMrkdwn(text.replace(/\s+/g, ' ').trim())
  if (escaped.length <= max) return escaped
  let cut = max - 1
  const amp = escaped.lastIndexOf('&', cut - 1)
  if (amp !== -1 && !escaped.slice(amp, cut).includes(';')) cut = amp
  const code = escaped.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return `${escaped.slice(0, cut)}…`
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
