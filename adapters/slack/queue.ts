/**
 * Web API calls per channel, within Slack's rate limits.
 *
 * Slack allows about one message per second per channel (chat.postMessage's special tier) and
 * limits every method per workspace. Each channel (a "lane") gets a p-queue running one task at a
 * time, so the messages of one card are never interleaved with another card's; inside a task,
 * calls to that lane are spaced by `perChannelIntervalMs`. A 429 holds the call, and with it the
 * lane, for the `Retry-After` Slack sent, and makes every other call in the same rate-limit bucket
 * wait as long, then retries it. The bucket is the one Slack limited: chat.postMessage's limit is
 * per channel, so its 429 holds only that channel; every other method is limited per workspace,
 * so its 429 holds that method everywhere. Nothing is dropped: a rate-limited call is retried
 * until it goes through or the adapter stops.
 */
import { setMaxListeners } from 'node:events'
import PQueue from 'p-queue'

export interface RateLimitOptions {
  /**
   * Minimum spacing between the starts of two Web API calls to one channel, in ms.
   * @default 1000
   */
  perChannelIntervalMs?: number
  /** How often one call may be rate-limited before it fails. @default 100 */
  maxRateLimitRetries?: number
}

/** Thrown when a call was still rate limited after every retry, or the adapter stopped. */
export class SlackQueueError extends Error {
  override readonly name = 'SlackQueueError'
}

/** Make one Web API call inside a lane task: spaced, and retried after a 429. */
export type LaneCall = <T>(method: string, call: () => Promise<T>) => Promise<T>

/** What a rate-limited Web API call throws (`WebAPIRateLimitedError` from @slack/web-api). */
export function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, retryAfter } = error as { code?: unknown; retryAfter?: unknown }
  if (code !== 'slack_webapi_rate_limited_error') return undefined
  return typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 1
}

/** Methods whose rate limit Slack counts per channel rather than per workspace. */
const PER_CHANNEL_METHODS = new Set(['chat.postMessage'])

/** The rate-limit bucket a call counts against: `method` (workspace) or `method@lane` (channel). */
function bucketOf(method: string, lane: string | undefined): string {
  return lane !== undefined && PER_CHANNEL_METHODS.has(method) ? `${method}@${lane}` : method
}

export class ChannelQueues {
  readonly #queues = new Map<string, PQueue>()
  readonly #lastStart = new Map<string, number>()
  /**
   * Per rate-limit bucket ({@link bucketOf}): not before this epoch ms. A 429 on chat.update slows
   * every chat.update; a 429 on chat.postMessage slows only that channel's posts.
   */
  readonly #notBefore = new Map<string, number>()
  readonly #interval: number
  readonly #maxRetries: number
  readonly #stopped = new AbortController()
  /** How many 429s were met and waited out (for metrics and tests). */
  rateLimited = 0

  constructor(options: RateLimitOptions = {}) {
    this.#interval = Math.max(0, options.perChannelIntervalMs ?? 1000)
    this.#maxRetries = options.maxRateLimitRetries ?? 100
    // Every queued task listens on the one stop signal until it starts: many queued calls are
    // normal, not a leak, so no MaxListenersExceededWarning.
    setMaxListeners(0, this.#stopped.signal)
  }

  /** Run `task` alone in `lane`; its calls go through the given {@link LaneCall}. */
  run<R>(lane: string, task: (call: LaneCall) => Promise<R>): Promise<R> {
    if (this.#stopped.signal.aborted)
      return Promise.reject(new SlackQueueError('the Slack adapter is stopped'))
    const call: LaneCall = async (method, fn) => {
      await this.#sleep((this.#lastStart.get(lane) ?? 0) + this.#interval - Date.now())
      return this.#withRetries(bucketOf(method, lane), method, () => {
        this.#lastStart.set(lane, Date.now())
        return fn()
      })
    }
    return this.#queue(lane).add(() => task(call), { signal: this.#stopped.signal }) as Promise<R>
  }

  /** One call outside any lane (a modal must open at once), still honouring 429s. */
  now<T>(method: string, call: () => Promise<T>): Promise<T> {
    return this.#withRetries(bucketOf(method, undefined), method, call)
  }

  /** Resolves when every lane is empty and idle. */
  async idle(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.onIdle()))
  }

  stop(): void {
    this.#stopped.abort(new SlackQueueError('the Slack adapter is stopped'))
    for (const q of this.#queues.values()) q.clear()
  }

  #queue(lane: string): PQueue {
    let queue = this.#queues.get(lane)
    if (!queue) {
      queue = new PQueue({ concurrency: 1 })
      this.#queues.set(lane, queue)
    }
    return queue
  }

  async #withRetries<T>(bucket: string, method: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      await this.#sleep((this.#notBefore.get(bucket) ?? 0) - Date.now())
      try {
        return await call()
      } catch (error) {
        const retryAfter = retryAfterOf(error)
        if (retryAfter === undefined) throw error
        this.rateLimited++
        if (attempt >= this.#maxRetries) {
          throw new SlackQueueError(`${method} was still rate limited after ${attempt + 1} attempts`, {
            cause: error,
          })
        }
        const until = Date.now() + retryAfter * 1000
        this.#notBefore.set(bucket, Math.max(this.#notBefore.get(bucket) ?? 0, until))
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    const signal = this.#stopped.signal
    if (signal.aborted) return Promise.reject(signal.reason)
    if (ms <= 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      const onAbort = () => {
        clearTimeout(timer)
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }
}
