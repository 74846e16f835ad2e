/**
 * Agent and person text as Teams shows it. Adaptive Card TextBlocks take a small markdown subset
 * and turn `<at>…</at>` into a mention when the card lists a matching entity; agent text never
 * does: every `<at` is broken with a zero-width space, so it cannot even look like one, and
 * markdown characters in plain slots are escaped.
 */
import { cleanText } from '../../src/adapter-kit.js'

const ZWSP = '\u200b'

/** Break anything that could become or look like a mention (`<at>`, `@everyone`-style words). */
export function noMentions(text: string): string {
  return cleanText(text)
    .replace(/<(\/?at\b)/gi, `<${ZWSP}$1`)
    .replace(/@(everyone|here|channel|team)\b/gi, `@${ZWSP}$1`)
}

/** Plain text for a markdown TextBlock: mentions broken, markdown characters escaped. */
export function plain(text: string): string {
  return noMentions(text).replace(/([\\*_~`[\]#>])/g, '\\$1')
}

/** Shorten display-only text (a button title) to `max` characters, on one line. */
export function clamp(text: string, max: number): string {
  const flat = noMentions(text).replace(/\s+/g, ' ').trim()
  if (flat.length <= max) return flat
  let cut = max - 1
  const code = flat.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return `${flat.slice(0, cut).trimEnd()}…`
}
