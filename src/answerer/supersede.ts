/**
 * Updates of one platform message, newest wins: the rule both chat adapters follow when a card
 * changes faster than its message can be edited (a click, then the answer, then a copy refresh).
 *
 * Per message (`key`) one update is on its way at a time. An update that has to wait (for the one
 * on its way, or for a rate-limit token) waits in one slot: a newer update of the same message
 * replaces it there, and every caller whose update was replaced settles with the one that carried
 * theirs. Stale edits are never sent, and an edit never overtakes a newer one.
 */
interface Waiting<T> {
  update: T
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>
}

export class Superseding<T> {
  readonly #waiting = new Map<string, Waiting<T>>()
  readonly #sending = new Set<string>()
  /** How many waiting updates a newer update of the same message replaced. */
  superseded = 0

  /** Put `update` in `key`'s slot, replacing what waits there; settles once what carries it is sent. */
  offer(key: string, update: T): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiting = this.#waiting.get(key)
      if (waiting) {
        waiting.update = update
        waiting.waiters.push({ resolve, reject })
        this.superseded++
        return
      }
      this.#waiting.set(key, { update, waiters: [{ resolve, reject }] })
    })
  }

  /** The oldest message with an update waiting and none on its way. */
  nextKey(): string | undefined {
    for (const key of this.#waiting.keys()) if (!this.#sending.has(key)) return key
    return undefined
  }

  /** What waits for `key` now (undefined when nothing does). */
  peek(key: string): T | undefined {
    return this.#waiting.get(key)?.update
  }

  /**
   * Send what waits for `key` with `send`, unless nothing does or an update of it is on its way
   * (then undefined). Its callers settle with the outcome; the promise returned resolves after
   * that, whatever the outcome.
   */
  send(key: string, send: (update: T) => Promise<unknown>): Promise<void> | undefined {
    const waiting = this.#waiting.get(key)
    if (!waiting || this.#sending.has(key)) return undefined
    this.#waiting.delete(key)
    this.#sending.add(key)
    return Promise.resolve()
      .then(() => send(waiting.update))
      .then(
        () => {
          for (const w of waiting.waiters) w.resolve()
        },
        (error: unknown) => {
          for (const w of waiting.waiters) w.reject(error)
        },
      )
      .finally(() => this.#sending.delete(key))
  }

  /** Reject every waiting update's callers with `reason` and forget them (on stop). */
  rejectWaiting(reason: unknown): void {
    for (const waiting of this.#waiting.values()) for (const w of waiting.waiters) w.reject(reason)
    this.#waiting.clear()
  }
}
