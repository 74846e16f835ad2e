/**
 * A fixed-window request count per key (an agent token's digest): at most `perMinute` requests in
 * each minute. Windows of idle keys are dropped, so memory follows the tokens in use.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Count one request: 0 when allowed, else the whole seconds until the window ends (Retry-After). */
  take(key: string, perMinute: number): number {
    const now = this.now()
    let w = this.windows.get(key)
    if (!w || now - w.start >= 60_000) {
      if (this.windows.size > 10_000) this.prune(now)
      w = { start: now, count: 0 }
      this.windows.set(key, w)
    }
    if (w.count >= perMinute) return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000))
    w.count++
    return 0
  }

  private prune(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(key)
  }
}
