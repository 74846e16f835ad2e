import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { type Logger, silentLogger } from '../log.js'
import type { Store } from '../store/types.js'

export interface RetentionOptions {
  /** Settled and dropped calls older than this (ms) are deleted. 0: keep everything. */
  callsMs: number
  /** Audit entries older than this (ms) are deleted. 0: keep everything. */
  auditMs: number
  /** Rows per transaction. @default 500 */
  batch?: number
  /** How often to prune. @default 600000 (10 minutes) */
  intervalMs?: number
  now?: () => number
  logger?: Logger
}

/**
 * Prune everything older than the retention, one bounded batch per transaction, yielding to the
 * event loop between batches so serving never waits long behind it. Returns how many calls and
 * audit entries were deleted.
 */
export async function pruneOnce(
  store: Store,
  options: Pick<RetentionOptions, 'callsMs' | 'auditMs' | 'batch' | 'now'>,
): Promise<{ calls: number; audit: number }> {
  const batch = options.batch ?? 500
  const now = (options.now ?? Date.now)()
  const drain = async (prune: (before: number, limit: number) => Promise<number>, ms: number) => {
    let total = 0
    if (ms <= 0) return total
    for (;;) {
      const n = await prune(now - ms, batch)
      total += n
      if (n < batch) return total
      await yieldToLoop()
    }
  }
  const calls = await drain((before, limit) => store.pruneCalls(before, limit), options.callsMs)
  const audit = await drain((before, limit) => store.pruneAudit(before, limit), options.auditMs)
  return { calls, audit }
}

/**
 * Prune on a periodic tick (the first soon after start). Every replica on a shared database may
 * run it: each batch takes rows no other one holds. Returns the stop function (it resolves once
 * a batch in flight has finished).
 */
export function startRetention(store: Store, options: RetentionOptions): () => Promise<void> {
  if (options.callsMs <= 0 && options.auditMs <= 0) return async () => {}
  const log = options.logger ?? silentLogger
  let running: Promise<void> | undefined
  const tick = () => {
    running ??= pruneOnce(store, options)
      .then((pruned) => {
        if (pruned.calls > 0 || pruned.audit > 0) log.info('retention pruned old history', pruned)
      })
      .catch((error: unknown) => log.warn('retention pruning failed; it is retried next time', { error }))
      .finally(() => {
        running = undefined
      })
  }
  const first = setTimeout(tick, 1000)
  const timer = setInterval(tick, options.intervalMs ?? 600_000)
  first.unref()
  timer.unref()
  // Stopping waits for a batch in flight, so the store can close after it.
  return async () => {
    clearTimeout(first)
    clearInterval(timer)
    await running
  }
}
