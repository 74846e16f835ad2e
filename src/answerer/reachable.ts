import type { Logger } from '../log.js'

/** How long a start-up check waits for a platform's API to answer. */
export const START_CHECK_MS = 5000

/** Options of {@link checkReachable}. */
export interface ReachableOptions {
  /** Any HTTP answer from this URL, even an error status, means the API is there. */
  url: string
  /** Shown to people: "the Slack Web API". */
  what: string
  /** The variable that sets the URL, named in the messages. */
  variable: string
  /** Shown in messages instead of `url` (the base the person configured). @default url */
  shownUrl?: string
  /** @default START_CHECK_MS */
  timeoutMs?: number
  logger: Logger
}

/**
 * A start-up check every adapter uses before it logs in: says what it waits for, waits at most
 * `timeoutMs` (about 5 s), and fails naming the variable. A wrong URL or no network then stops
 * `serve` at once, not after an SDK's own retries (half a minute or more, silently).
 */
export async function checkReachable(options: ReachableOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? START_CHECK_MS
  const shown = options.shownUrl ?? options.url
  const seconds = `${Math.round(timeoutMs / 100) / 10} s`
  options.logger.info(`waiting for ${options.what} to answer (${options.variable}), up to ${seconds}`, {
    url: shown,
  })
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  try {
    const res = await fetch(options.url, { method: 'GET', signal: controller.signal, redirect: 'manual' })
    await res.body?.cancel().catch(() => {})
  } catch (error) {
    const reason = controller.signal.aborted ? `no answer within ${seconds}` : networkReason(error)
    throw new Error(`cannot reach ${options.what} at ${shown} (${options.variable}): ${reason}`, {
      cause: error,
    })
  } finally {
    clearTimeout(timer)
  }
}

/** fetch says "fetch failed"; the cause says why (ECONNREFUSED, ENOTFOUND host, ...). */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause
  if (cause?.message) return cause.message
  if (cause?.code) return cause.code
  return error instanceof Error ? error.message : String(error)
}
