/**
 * Slack's documented Web API rate limits, enforced by the fake (docs/platform-limits.md#rate-limits):
 *
 * - chat.postMessage: about 1 message per second per channel, short bursts allowed, plus a
 *   workspace-wide limit of "several hundred per minute".
 * - Other methods: their tier, per method per workspace (Tier 1 = 1/min, Tier 2 = 20/min,
 *   Tier 3 = 50/min, Tier 4 = 100/min; tiers from the Java SDK's MethodsRateLimits.java).
 *
 * Each limit is a token bucket: `burst` calls may go at once, and tokens come back at the
 * documented rate. A call with no token left gets HTTP 429 and `Retry-After` in whole seconds (the
 * time until a token is back, rounded up, at least 1), as Slack sends it. Slack does not publish
 * burst sizes: a channel may take {@link POST_BURST} posts at once, a tier a minute's worth.
 *
 * Start-up and connection methods (auth.test, apps.connections.open, api.test) are not limited:
 * the adapter calls them once per (re)connection, not per card.
 */

/** Calls per minute, per method per workspace. */
export const TIER_PER_MINUTE = { 1: 1, 2: 20, 3: 50, 4: 100 } as const
export type Tier = keyof typeof TIER_PER_MINUTE

/** The tier of every limited method the adapter uses (Java SDK MethodsRateLimits.java). */
export const METHOD_TIERS: Readonly<Record<string, Tier>> = {
  'chat.update': 3,
  'chat.delete': 3,
  'chat.postEphemeral': 4,
  'conversations.history': 3,
  'conversations.open': 3,
  'users.info': 4,
  'users.lookupByEmail': 3,
  'usergroups.users.list': 2,
  'views.open': 4,
  'views.update': 4,
  'views.push': 4,
}

/** chat.postMessage per channel: one per second… */
export const POST_INTERVAL_MS = 1000
/** …after a burst of this many ("short bursts allowed"; Slack gives no number). */
export const POST_BURST = 3
/** chat.postMessage per workspace: "several hundred per minute". */
export const POSTS_PER_MINUTE = 300

export interface SlackLimitOptions {
  /**
   * Run the limits' clock this many times faster (tokens come back sooner). Retry-After is still
   * whole seconds, as Slack's is. @default 1
   */
  speed?: number
  /** Clock (tests). @default Date.now */
  now?: () => number
}

class TokenBucket {
  #tokens: number
  #at: number

  constructor(
    readonly burst: number,
    /** ms per token. */
    readonly intervalMs: number,
    now: number,
  ) {
    this.#tokens = burst
    this.#at = now
  }

  /** 0 when a token is there now, else the ms until one is back. */
  waitMs(now: number): number {
    this.#tokens = Math.min(this.burst, this.#tokens + (now - this.#at) / this.intervalMs)
    this.#at = now
    return this.#tokens >= 1 ? 0 : (1 - this.#tokens) * this.intervalMs
  }

  take(): void {
    this.#tokens -= 1
  }
}

export class SlackLimits {
  readonly #buckets = new Map<string, TokenBucket>()
  readonly #speed: number
  readonly #now: () => number

  constructor(options: SlackLimitOptions = {}) {
    this.#speed = options.speed ?? 1
    this.#now = options.now ?? Date.now
  }

  /**
   * Count one call. Undefined when it may go; else the Retry-After Slack sends, in seconds.
   * A refused call uses no token.
   */
  check(method: string, args: Record<string, unknown>): number | undefined {
    const now = this.#now()
    const buckets: TokenBucket[] = []
    if (method === 'chat.postMessage') {
      buckets.push(
        this.#bucket(`chat.postMessage@${String(args.channel ?? '')}`, POST_BURST, POST_INTERVAL_MS),
      )
      buckets.push(this.#bucket('chat.postMessage', POSTS_PER_MINUTE, 60_000 / POSTS_PER_MINUTE))
    } else {
      const tier = METHOD_TIERS[method]
      if (tier === undefined) return undefined
      const perMinute = TIER_PER_MINUTE[tier]
      buckets.push(this.#bucket(method, perMinute, 60_000 / perMinute))
    }
    // Every bucket must have a token before any is taken: a refused call uses none.
    const waitMs = Math.max(...buckets.map((b) => b.waitMs(now)))
    if (waitMs > 0) return Math.max(1, Math.ceil(waitMs / 1000))
    for (const b of buckets) b.take()
    return undefined
  }

  #bucket(key: string, burst: number, intervalMs: number): TokenBucket {
    let bucket = this.#buckets.get(key)
    if (!bucket) {
      bucket = new TokenBucket(burst, intervalMs / this.#speed, this.#now())
      this.#buckets.set(key, bucket)
    }
    return bucket
  }
}
