/**
 * Web API calls within Slack's rate limits (docs/platform-limits.md#rate-limits), paced before Slack has to
 * say no, with 429s waited out in the bucket Slack limited.
 *
 * - New posts (chat.postMessage) go through one ordered lane per channel, so the messages of one
 *   card are never interleaved with another's. Each post takes a token from the channel's bucket
 *   (about one a second, with a short burst) and from the workspace's chat.postMessage bucket.
 * - Card updates (chat.update) do not wait behind a channel's posts: they have their own queue,
 *   by message. An update of a message still waiting for its turn (held by a 429, or behind the
 *   message's update on the wire) is replaced by a newer one: only the newest is sent.
 * - Other methods are limited per method per workspace by tier ("50+ a minute", bursts of no
 *   published size), so they are not held back in advance, only after a 429.
 * - A 429 holds the bucket Slack limited for the Retry-After it sent: chat.postMessage's 429
 *   holds only that channel's posts, any other method's holds that method everywhere. The call is
 *   retried, so nothing is dropped until the adapter stops.
 */
import { setMaxListeners } from 'node:events'
import PQueue from 'p-queue'
import { AskbridgeError, Superseding } from '../../src/adapter-kit.js'

/** chat.postMessage per channel, unless configured: one post per this many ms after a burst. */
export const DEFAULT_PER_CHANNEL_INTERVAL_MS = 1000
/**
 * chat.postMessage per channel, unless configured: posts at once after a quiet spell. Slack
 * publishes no burst size; 2 keeps a margin (the bench's fake allows 3).
 */
export const DEFAULT_POST_BURST = 2

export interface RateLimitOptions {
  /**
   * chat.postMessage per channel: one post per this many ms after a burst (`postBurst`).
   * 0 turns per-channel pacing off. @default 1000
   */
  perChannelIntervalMs?: number
  /** chat.postMessage per channel: how many posts may go at once after a quiet spell. @default 2 */
  postBurst?: number
  /**
   * Run every bucket this many times faster: only for a fake Slack whose limits run faster too
   * (benchmarks). @default 1
   */
  speed?: number
  /**
   * Pace calls before Slack has to refuse them. Off, only 429s slow calls down: for tests against
   * a fake Slack without rate limits. @default true
   */
  pace?: boolean
  /** How often one call may be rate-limited before it fails. @default 100 */
  maxRateLimitRetries?: number
}

/** Thrown when a call was still rate limited after every retry, or the adapter stopped. */
export class SlackQueueError extends AskbridgeError {
  override readonly name = 'SlackQueueError'
  readonly code = 'SLACK_QUEUE'
}

/** Make one Web API call inside a lane task: paced, and retried after a 429. */
export type LaneCall = <T>(method: string, call: () => Promise<T>) => Promise<T>

/** What a rate-limited Web API call throws (`WebAPIRateLimitedError` from @slack/web-api). */
export function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, retryAfter } = error as { code?: unknown; retryAfter?: unknown }
  if (code !== 'slack_webapi_rate_limited_error') return undefined
  return typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 1
}

/** chat.postMessage across the workspace: "several hundred a minute"; we keep to 300. */
const POSTS_PER_MINUTE = 300

/**
 * Tokens come back one per `intervalMs`, up to `burst`. Reservations queue: a caller takes a token
 * now and is told how long to wait for it, so callers go in order.
 */
class TokenBucket {
  #tokens: number
  #at = Date.now()

  constructor(
    readonly burst: number,
    readonly intervalMs: number,
  ) {
    this.#tokens = burst
  }

  /** Take a token; how many ms until it is really there. */
  reserve(): number {
    const now = Date.now()
    this.#tokens = Math.min(this.burst, this.#tokens + (now - this.#at) / this.intervalMs)
    this.#at = now
    this.#tokens -= 1
    return this.#tokens >= 0 ? 0 : -this.#tokens * this.intervalMs
  }
}

/** The bucket a 429 holds: chat.postMessage's is per channel, every other method's per workspace. */
function heldBucket(method: string, lane: string | undefined): string {
  return method === 'chat.postMessage' && lane !== undefined ? `${method}@${lane}` : method
}

interface QueuedUpdate {
  method: string
  call: () => Promise<void>
}

export class ChannelQueues {
  readonly #lanes = new Map<string, PQueue>()
  readonly #buckets = new Map<string, TokenBucket>()
  /** Per rate-limit bucket: not before this epoch ms (a 429's Retry-After). */
  readonly #notBefore = new Map<string, number>()
  /** Updates by message key: waiting for a token, oldest first, or on the wire (newest wins). */
  readonly #updates = new Superseding<QueuedUpdate>()
  readonly #inflight = new Set<Promise<void>>()
  #pumping = false
  readonly #interval: number
  readonly #burst: number
  readonly #speed: number
  readonly #pace: boolean
  readonly #maxRetries: number
  readonly #stopped = new AbortController()
  /** How many 429s were met and waited out (for metrics and tests). */
  rateLimited = 0
  /** How many queued updates a newer update of the same message replaced. */
  get superseded(): number {
    return this.#updates.superseded
  }

  constructor(options: RateLimitOptions = {}) {
    this.#speed = options.speed && options.speed > 0 ? options.speed : 1
    this.#interval =
      Math.max(0, options.perChannelIntervalMs ?? DEFAULT_PER_CHANNEL_INTERVAL_MS) / this.#speed
    this.#burst = Math.max(1, options.postBurst ?? DEFAULT_POST_BURST)
    this.#pace = options.pace ?? true
    this.#maxRetries = options.maxRateLimitRetries ?? 100
    // Every queued task listens on the one stop signal until it starts: many queued calls are
    // normal, not a leak, so no MaxListenersExceededWarning.
    setMaxListeners(0, this.#stopped.signal)
  }

  /** Run `task` alone in `lane` (a channel); its calls go through the given {@link LaneCall}. */
  run<R>(lane: string, task: (call: LaneCall) => Promise<R>): Promise<R> {
    if (this.#stopped.signal.aborted)
      return Promise.reject(new SlackQueueError('the Slack adapter is stopped'))
    const call: LaneCall = (method, fn) => this.#paced(method, lane, fn)
    return this.#lane(lane).add(() => task(call), { signal: this.#stopped.signal }) as Promise<R>
  }

  /** One call outside any lane (a modal must open at once), paced by its method's bucket. */
  now<T>(method: string, call: () => Promise<T>): Promise<T> {
    if (this.#stopped.signal.aborted)
      return Promise.reject(new SlackQueueError('the Slack adapter is stopped'))
    return this.#paced(method, undefined, call)
  }

  /**
   * Update one message (`key`), apart from the channel's posts. While it waits for a token, a
   * newer update of the same message replaces it: only the newest is sent, and every caller's
   * promise settles with it. Updates of one message never overlap.
   */
  update(key: string, method: string, call: () => Promise<void>): Promise<void> {
    if (this.#stopped.signal.aborted)
      return Promise.reject(new SlackQueueError('the Slack adapter is stopped'))
    const done = this.#updates.offer(key, { method, call })
    this.#track(done)
    void this.#pump()
    return done
  }

  /** Resolves when every lane is empty and idle and no update is waiting or on the wire. */
  async idle(): Promise<void> {
    await Promise.all([...this.#lanes.values()].map((q) => q.onIdle()))
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
  }

  stop(): void {
    const reason = new SlackQueueError('the Slack adapter is stopped')
    this.#stopped.abort(reason)
    for (const q of this.#lanes.values()) q.clear()
    this.#updates.rejectWaiting(reason)
  }

  #track(promise: Promise<void>): void {
    this.#inflight.add(promise)
    void promise.then(
      () => this.#inflight.delete(promise),
      () => this.#inflight.delete(promise),
    )
  }

  /** Send queued updates, oldest first, one per token; a message's next update waits for its last. */
  async #pump(): Promise<void> {
    if (this.#pumping) return
    this.#pumping = true
    try {
      for (;;) {
        const key = this.#updates.nextKey()
        if (key === undefined) return
        const method = this.#updates.peek(key)?.method as string
        await this.#wait(method, undefined)
        // Sends the newest update queued by now (stop() clears the queue: then nothing is sent).
        void this.#updates
          .send(key, (queued) => this.#retrying(queued.method, undefined, queued.call))
          ?.then(() => this.#pump())
      }
    } catch {
      // Stopped while waiting: stop() rejected what was queued.
    } finally {
      this.#pumping = false
    }
  }

  #lane(lane: string): PQueue {
    let queue = this.#lanes.get(lane)
    if (!queue) {
      queue = new PQueue({ concurrency: 1 })
      this.#lanes.set(lane, queue)
    }
    return queue
  }

  /** Wait for a token in every bucket the call counts against, then make it (429s retried). */
  async #paced<T>(method: string, lane: string | undefined, call: () => Promise<T>): Promise<T> {
    await this.#wait(method, lane)
    return this.#retrying(method, lane, call)
  }

  async #wait(method: string, lane: string | undefined): Promise<void> {
    let ms = (this.#notBefore.get(heldBucket(method, lane)) ?? 0) - Date.now()
    for (const bucket of this.#bucketsOf(method, lane)) ms = Math.max(ms, bucket.reserve())
    await this.#sleep(ms)
  }

  #bucketsOf(method: string, lane: string | undefined): TokenBucket[] {
    if (!this.#pace) return []
    if (method === 'chat.postMessage') {
      const out = [this.#bucket(method, POSTS_PER_MINUTE)]
      if (lane !== undefined && this.#interval > 0) {
        let channel = this.#buckets.get(`${method}@${lane}`)
        if (!channel) {
          channel = new TokenBucket(this.#burst, this.#interval)
          this.#buckets.set(`${method}@${lane}`, channel)
        }
        out.push(channel)
      }
      return out
    }
    // Tiers are floors ("50+ a minute") with bursts of unpublished size: waiting for tokens of
    // our own guess would only slow things down. A 429 holds the method (#retrying).
    return []
  }

  /** chat.postMessage's workspace bucket: half a minute's worth at once, then the rate. */
  #bucket(method: string, perMinute: number): TokenBucket {
    let bucket = this.#buckets.get(method)
    if (!bucket) {
      bucket = new TokenBucket(Math.max(1, Math.floor(perMinute / 2)), 60_000 / perMinute / this.#speed)
      this.#buckets.set(method, bucket)
    }
    return bucket
  }

  async #retrying<T>(method: string, lane: string | undefined, call: () => Promise<T>): Promise<T> {
    const held = heldBucket(method, lane)
    for (let attempt = 0; ; attempt++) {
      await this.#sleep((this.#notBefore.get(held) ?? 0) - Date.now())
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
        this.#notBefore.set(held, Math.max(this.#notBefore.get(held) ?? 0, until))
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
