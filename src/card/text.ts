import type { LocalizedText } from '../protocol/types.js'
import type { CardState } from './types.js'

/**
 * Pick the wording for a locale: exact (`pt-BR`), then the language (`pt`), then any regional
 * variant of it (`pt-PT`), then `en`. Used by every renderer for approval `display` texts.
 * @example pickLocale({ en: 'Approve', de: 'Genehmigen' }, 'de-AT') // 'Genehmigen'
 */
export function pickLocale(texts: LocalizedText, locale?: string): string
export function pickLocale(texts: LocalizedText | undefined, locale?: string): string | undefined
export function pickLocale(texts: LocalizedText | undefined, locale?: string): string | undefined {
  if (!texts) return undefined
  if (locale) {
    const exact = texts[locale]
    if (exact) return exact
    const lang = locale.split(/[-_]/)[0] ?? locale
    const base = texts[lang]
    if (base) return base
    for (const [key, value] of Object.entries(texts)) if (key.split(/[-_]/)[0] === lang && value) return value
  }
  return texts.en
}

/**
 * What a card says about its on-call people, one line per look-up, in plain text (each renderer
 * escapes it): who PagerDuty says is on call, or that PagerDuty was unreachable and the last
 * known on-call or the route's fallback was used instead.
 * @example oncallText(card) // 'On call (PagerDuty): Alice Smith'
 */
export function oncallText(card: Pick<CardState, 'oncall'>): string | undefined {
  const lines = (card.oncall ?? []).map((o) => {
    const level = o.level > 1 ? ` level ${o.level}` : ''
    const names = o.names.join(', ')
    if (o.source === 'pagerduty')
      return names ? `On call${level} (PagerDuty): ${names}` : `Nobody on call${level} in PagerDuty`
    if (o.source === 'last-known') {
      const at = new Date(o.at).toISOString().slice(0, 16).replace('T', ' ')
      return `PagerDuty unreachable: last known on call${level} (as of ${at} UTC): ${names || 'nobody'}`
    }
    return `PagerDuty unreachable: the route's fallback${level} was called instead`
  })
  return lines.length ? lines.join(' · ') : undefined
}

/**
 * Bidirectional embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069). In agent
 * or person text they can reverse what a reader sees ("Approve" that reads as "Reject", a file
 * name whose extension hides), so nothing askbridge renders keeps them.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g
/** C0 and C1 control characters other than tab and newline (NUL, ESC, backspace, ...). */
const CONTROL_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g

/**
 * The one text clean-up for everything askbridge renders (labels, headers, display names, markdown
 * output, notices) on every surface: line endings become `\n`, bidi override/isolate characters
 * and other control characters are removed. Escaping for a surface (mentions, markup) comes after.
 * @example cleanText('Approve\u202Eevil') // 'Approveevil'
 */
export function cleanText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(BIDI_CONTROLS, '').replace(CONTROL_CHARS, '')
}

/** {@link cleanText} applied to every string of a plain data value (a view about to be rendered or sent). */
export function cleanDeep<T>(value: T): T {
  if (typeof value === 'string') return cleanText(value) as T
  if (Array.isArray(value)) return value.map(cleanDeep) as T
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cleanDeep(v)])) as T
  return value
}
