import { parseDuration as parse } from '../routing/duration.js'

/** `--timeout` values: `90s`, `5m`, `1h`, `1d`, `250ms`, fractions, or a bare number of seconds. */
export const parseDuration = (text: string): number | undefined => parse(text, { lenient: true })

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
