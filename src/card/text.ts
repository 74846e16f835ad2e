import type { LocalizedText } from '../protocol/types.js'

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
