const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * Parse a duration: `90s`, `10m`, `2h`, `1d` (also `500ms`). Undefined when malformed.
 * @example parseDuration('10m') // 600000
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim())
  if (!match) return undefined
  const value = Number(match[1]) * (UNITS[match[2] ?? ''] ?? Number.NaN)
  return Number.isSafeInteger(value) && value > 0 ? value : undefined
}
