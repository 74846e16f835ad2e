/**
 * Work that follows an acknowledgement, started when interactions pause.
 *
 * A click is acknowledged once it is durable, and its answer reaches the agent in that same turn;
 * what follows (re-rendering and updating every copy) is real work too, and when it ran between
 * the clicks of a burst, every later click waited behind it. Here each piece of that work waits for a moment without interactions (`quietMs` since the
 * last one began) and then takes a turn of the event loop of its own, oldest first, one per turn.
 * Under a steady stream of interactions nothing starves: a piece that has waited `maxDeferMs` goes
 * anyway (still one per turn, so interactions read meanwhile go between them).
 */
export interface TurnsOptions {
  /** @default Date.now */
  now?: () => number
  /** How long interactions must pause before deferred work starts. @default 20 */
  quietMs?: number
  /** The longest a piece of work waits for a pause. @default 1000 */
  maxDeferMs?: number
}

/** The real ones, whatever a test's fake timers later put on globalThis. */
const immediate = setImmediate
const timeout = setTimeout

export class Turns {
  readonly #now: () => number
  readonly #quietMs: number
  readonly #maxDeferMs: number
  readonly #waiting: Array<{ since: number; resolve: () => void }> = []
  #lastInteraction = Number.NEGATIVE_INFINITY
  #scheduled = false

  constructor(options: TurnsOptions = {}) {
    this.#now = options.now ?? Date.now
    this.#quietMs = options.quietMs ?? 20
    this.#maxDeferMs = options.maxDeferMs ?? 1000
  }

  /** An interaction begins: deferred work holds off while they keep coming. */
  interaction(): void {
    this.#lastInteraction = this.#now()
  }

  /** Resolves when the oldest waiting piece may start (see the module comment). */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push({ since: this.#now(), resolve })
      this.#schedule()
    })
  }

  /** How many pieces are waiting (for tests and metrics). */
  get waiting(): number {
    return this.#waiting.length
  }

  /** Ms until the oldest waiting piece may start: 0 when it may start now. */
  wait(): number {
    const oldest = this.#waiting[0]
    if (!oldest) return 0
    const now = this.#now()
    const quiet = this.#lastInteraction + this.#quietMs - now
    const overdue = oldest.since + this.#maxDeferMs - now
    return Math.max(0, Math.min(quiet, overdue))
  }

  #schedule(): void {
    if (this.#scheduled || this.#waiting.length === 0) return
    this.#scheduled = true
    const delay = this.wait()
    const release = () => {
      this.#scheduled = false
      if (this.wait() === 0) this.#waiting.shift()?.resolve()
      this.#schedule()
    }
    // A turn of its own, after the I/O phase: interactions read meanwhile go first.
    if (delay === 0) immediate(release)
    else timeout(release, delay)
  }
}
