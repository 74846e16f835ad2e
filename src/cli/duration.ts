const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * Parse `90s`, `5m`, `1h`, `1d`, `250ms` or a bare number of seconds into milliseconds.
 * Returns undefined for anything else (including zero and negatives).
 */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text)
  if (!m) return undefined
  const n = Number(m[1]) * (UNITS[(m[2] ?? 's').toLowerCase()] ?? 1000)
  return Number.isFinite(n) && n >= 1 ? Math.round(n) : undefined
}

/** `83000` -> `1m 23s`, for countdowns. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`
  return `${s}s`
}
