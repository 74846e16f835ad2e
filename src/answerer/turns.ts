/**
 * Work that follows an acknowledgement, one start per turn of the event loop.
 *
 * A click is acknowledged once it is durable; what follows it (handing the answer over, which is
 * the answer's own commit and the reply to the agent; re-rendering and updating every copy) is
 * real work too, and when it all ran in the turn after a burst of clicks, the next clicks waited
 * behind it. Here each piece of that work waits for a turn of its own: a turn starts at most one,
 * and the clicks that arrived meanwhile (read in the loop's I/O phase) go first. When nothing else
 * is happening, turns follow each other at once and the work drains at full speed; under a steady
 * stream of clicks it still advances one piece per turn, so none of it starves.
 */
export class Turns {
  readonly #waiting: Array<() => void> = []
  #scheduled = false

  /** Resolves on a later turn of the event loop, at most one waiter per turn, oldest first. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve)
      this.#schedule()
    })
  }

  /** How many are waiting for a turn (for tests and metrics). */
  get waiting(): number {
    return this.#waiting.length
  }

  #schedule(): void {
    if (this.#scheduled || this.#waiting.length === 0) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#waiting.shift()?.()
      this.#schedule()
    })
  }
}
