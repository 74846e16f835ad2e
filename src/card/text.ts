/**
 * Cut `text` to at most `max` UTF-16 units (what Slack and Discord count), ending with `…` when
 * cut, never splitting a surrogate pair. The full text stays the answer value elsewhere.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text
  if (max <= 0) return ''
  let cut = max - 1
  const code = text.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut-- // do not leave half an emoji
  return `${text.slice(0, cut)}…`
}

/**
 * Split long text into chunks of at most `max` units, preferring paragraph, then line, then
 * word boundaries, so nothing is silently cut.
 */
export function splitText(text: string, max: number): string[] {
  const chunks: string[] = []
  let rest = text
  while (rest.length > max) {
    const window = rest.slice(0, max)
    let at = window.lastIndexOf('\n\n')
    if (at < max / 2) at = window.lastIndexOf('\n')
    if (at < max / 2) at = window.lastIndexOf(' ')
    if (at < max / 2) at = max
    const code = rest.charCodeAt(at - 1)
    if (code >= 0xd800 && code <= 0xdbff) at--
    chunks.push(rest.slice(0, at).trimEnd())
    rest = rest.slice(at).replace(/^\n+/, '')
  }
  if (rest.length > 0 || chunks.length === 0) chunks.push(rest)
  return chunks
}

/** Pick a localized text for `locale` (`pt-BR` falls back to `pt`, then `en`). */
export function localized(texts: { en: string; [locale: string]: string } | undefined, locale?: string) {
  if (!texts) return undefined
  if (locale) {
    const exact = texts[locale]
    if (exact !== undefined) return exact
    const base = texts[locale.split(/[-_]/)[0] ?? '']
    if (base !== undefined) return base
  }
  return texts.en
}
