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
