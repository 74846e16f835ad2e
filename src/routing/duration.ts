const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * Parse a duration into milliseconds: `90s`, `10m`, `2h`, `1d` (also `500ms`). Undefined when
 * malformed, zero or negative.
 *
 * `lenient` is for what a person types on a command line: surrounding spaces, upper-case units,
 * fractions (`1.5h`) and a bare number of seconds (`30`). Files (routes) stay strict.
 * @example parseDuration('10m') // 600000
 * @example parseDuration('30', { lenient: true }) // 30000
 */
export function parseDuration(text: string, options: { lenient?: boolean } = {}): number | undefined {
  const match = options.lenient
    ? /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text)
    : /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim())
  if (!match) return undefined
  const unit = UNITS[(match[2] ?? 's').toLowerCase()]
  if (unit === undefined) return undefined
  const value = Math.round(Number(match[1]) * unit)
  return Number.isSafeInteger(value) && value >= 1 ? value : undefined
}
