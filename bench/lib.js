// Shared measuring tools for the bench sections (see run.js for how a section plugs in).
import { cpus } from 'node:os'

/** The value below which `p` percent of the sorted samples fall (nearest rank). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

/** p50, p99 and max of a list of latencies (ms). */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  }
}

/** A number for a table: 3 decimals under 1, one decimal above. */
export function fmt(n) {
  if (!Number.isFinite(n)) return String(n)
  return n.toFixed(Math.abs(n) < 1 ? 3 : 1)
}

export const mib = (bytes) => bytes / 1024 / 1024

export function machine() {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`
}

/** A markdown table from a header row and rows of cells. */
export function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n')
}

/** Run `task` over `items` with at most `limit` in flight. */
export async function pool(items, limit, task) {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      await task(items[i], i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
