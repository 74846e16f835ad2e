/**
 * Discord's rate limits, enforced by the fake (docs/platform-limits.md#rate-limits-1, from Discord's rate limits page):
 *
 * - Per-route buckets, per top-level resource (the channel): a bucket allows `limit` requests per
 *   window; every response carries `X-RateLimit-Limit`, `-Remaining`, `-Reset`, `-Reset-After`
 *   and `-Bucket`, and a request past the limit gets 429 with `Retry-After`, a JSON
 *   `retry_after` and `X-RateLimit-Scope: user`.
 * - A global limit of 50 requests a second across all routes, interaction endpoints exempt; past
 *   it a 429 with `X-RateLimit-Global: true`, `global: true` and `X-RateLimit-Scope: global`.
 *
 * Discord does not publish per-route numbers (clients learn them from the headers). The fake uses
 * the ones Discord sends for the routes askbridge uses at volume: 5 per 5 s per channel for
 * creating messages, and the same, in a bucket of its own, for editing them.
 */

/** Requests a second across the API (interactions exempt). */
export const GLOBAL_PER_SECOND = 50

/** Per-route limits: requests per window, per channel. */
export const ROUTE_LIMITS: ReadonlyArray<{
  method: string
  route: RegExp
  bucket: string
  limit: number
  windowMs: number
}> = [
  { method: 'POST', route: /^\/channels\/(\d+)\/messages$/, bucket: 'msg-create', limit: 5, windowMs: 5000 },
  {
    method: 'PATCH',
    route: /^\/channels\/(\d+)\/messages\/\d+$/,
    bucket: 'msg-edit',
    limit: 5,
    windowMs: 5000,
  },
]

export interface DiscordLimitOptions {
  /** Run the windows this many times faster (benchmarks). @default 1 */
  speed?: number
  /** Clock (tests). @default Date.now */
  now?: () => number
}

interface Window {
  limit: number
  remaining: number
  resetAt: number
}

/** What the fake answers: the headers for a request that goes, or the 429 for one that does not. */
export type LimitVerdict =
  | { ok: true; headers: Record<string, string> }
  | { ok: false; status: 429; headers: Record<string, string>; body: Record<string, unknown> }

export class DiscordLimits {
  readonly #windows = new Map<string, Window>()
  readonly #speed: number
  readonly #now: () => number

  constructor(options: DiscordLimitOptions = {}) {
    this.#speed = options.speed ?? 1
    this.#now = options.now ?? Date.now
  }

  /** Count one request to `route` (the path after /v10). Interaction endpoints are exempt. */
  check(method: string, route: string): LimitVerdict {
    if (route.startsWith('/interactions/') || route.startsWith('/webhooks/')) return { ok: true, headers: {} }
    const now = this.#now()
    const global = this.#window('global', GLOBAL_PER_SECOND, 1000, now)
    if (global.remaining <= 0) {
      const retryAfter = seconds(global.resetAt - now)
      return {
        ok: false,
        status: 429,
        headers: {
          'retry-after': retryAfter,
          'x-ratelimit-global': 'true',
          'x-ratelimit-scope': 'global',
        },
        body: { message: 'You are being rate limited.', retry_after: Number(retryAfter), global: true },
      }
    }
    const rule = ROUTE_LIMITS.find((r) => r.method === method && r.route.test(route))
    if (!rule) {
      global.remaining--
      return { ok: true, headers: {} }
    }
    const channel = rule.route.exec(route)?.[1] ?? ''
    const bucket = this.#window(`${rule.bucket}:${channel}`, rule.limit, rule.windowMs, now)
    const headers = (w: Window): Record<string, string> => ({
      'x-ratelimit-limit': String(w.limit),
      'x-ratelimit-remaining': String(w.remaining),
      'x-ratelimit-reset': (w.resetAt / 1000).toFixed(3),
      'x-ratelimit-reset-after': seconds(w.resetAt - now),
      'x-ratelimit-bucket': rule.bucket,
    })
    if (bucket.remaining <= 0) {
      const retryAfter = seconds(bucket.resetAt - now)
      return {
        ok: false,
        status: 429,
        headers: { ...headers(bucket), 'retry-after': retryAfter, 'x-ratelimit-scope': 'user' },
        body: { message: 'You are being rate limited.', retry_after: Number(retryAfter), global: false },
      }
    }
    global.remaining--
    bucket.remaining--
    return { ok: true, headers: headers(bucket) }
  }

  #window(key: string, limit: number, windowMs: number, now: number): Window {
    let w = this.#windows.get(key)
    if (!w || now >= w.resetAt) {
      w = { limit, remaining: limit, resetAt: now + windowMs / this.#speed }
      this.#windows.set(key, w)
    }
    return w
  }
}

/** Seconds with millisecond precision, as Discord sends them. */
function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3)
}
