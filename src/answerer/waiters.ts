import type { AskUserQuestionAnswer } from '../protocol/types.js'
import { callKeyString } from '../store/fold.js'
import type { CallKey } from '../store/types.js'

interface Waiter {
  key: CallKey
  resolve: (answer: AskUserQuestionAnswer) => void
  /** Stop waiting without an answer (the ask failed before it could wait). */
  drop: () => void
  signal: AbortSignal
}

/**
 * The asks this process is waiting on, one per call: resolved by a completion, rejected when
 * their signal aborts. What the cards then say comes from the call's lifecycle events
 * (lifecycle.ts), not from here.
 */
export class Waiters {
  readonly #waiters = new Map<string, Waiter>()

  /** Register the waiting ask. */
  wait(call: CallKey, signal: AbortSignal): Promise<AskUserQuestionAnswer> {
    const k = callKeyString(call)
    const waiting = new Promise<AskUserQuestionAnswer>((resolve, reject) => {
      const finish = () => {
        if (this.#waiters.get(k) === waiter) this.#waiters.delete(k)
        signal.removeEventListener('abort', onAbort)
      }
      const onAbort = () => {
        finish()
        reject(signal.reason)
      }
      const waiter: Waiter = {
        key: call,
        signal,
        resolve: (answer) => {
          finish()
          resolve(answer)
        },
        drop: finish,
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      this.#waiters.set(k, waiter)
    })
    // Until it is returned, a rejection (an abort while posting) must not go unhandled.
    waiting.catch(() => {})
    return waiting
  }

  /** Hand the answer to the ask waiting on this call. False when none waits (any more). */
  resolve(call: CallKey, answer: AskUserQuestionAnswer): boolean {
    const waiter = this.#waiters.get(callKeyString(call))
    if (!waiter || waiter.signal.aborted) return false
    waiter.resolve(answer)
    return true
  }

  /** Whether an ask waits here on this call (and has not given up). */
  has(call: CallKey): boolean {
    const waiter = this.#waiters.get(callKeyString(call))
    return waiter !== undefined && !waiter.signal.aborted
  }

  /** The calls asks wait on here. */
  calls(): CallKey[] {
    return [...this.#waiters.values()].map((w) => w.key)
  }

  /** Stop waiting without an answer. */
  drop(call: CallKey): void {
    this.#waiters.get(callKeyString(call))?.drop()
  }
}
