import { UserQuestionError } from '../protocol/errors.js'
import { callKeyString } from '../store/fold.js'

/** A timed wait: the host keeps the question open until its deadline unless a client claims it. */
export interface LiveWait {
  agentId: string
  callId: string
  deadline: number
  claims: number
  timer: ReturnType<typeof setTimeout> | undefined
  /** Resolves the host's race with a timeout. */
  expire: () => void
  /** The deadline passed while nobody held the wait (also before the waterfall started). */
  expired: boolean
  /** Aborts the waterfall's own signal. */
  controller: AbortController
  ended: boolean
  /**
   * Wakes attached clients when the wait ends. Plain callbacks, not an AbortController: every
   * timed ask opens a wait, and aborting a controller builds an Event and a DOMException with a
   * stack trace, garbage that outlived young-generation collections under load (issue #29).
   */
  onEnded: Set<() => void>
}

const key = (agentId: string, callId: string) => callKeyString({ agentId, callId })

/**
 * The live timed waits of one service: their deadline timers, and the claims answer clients
 * (a person taking their time, an open form) hold on them.
 */
export class TimedWaits {
  readonly #waits = new Map<string, LiveWait>()
  readonly #now: () => number

  constructor(now: () => number) {
    this.#now = now
  }

  /** Open a wait; `expired` resolves when its deadline passes while nobody claims it. */
  open(agentId: string, callId: string, deadline: number): { wait: LiveWait; expired: Promise<'expired'> } {
    const k = key(agentId, callId)
    if (this.#waits.has(k)) {
      throw new UserQuestionError('DUPLICATE_WAIT', `a timed wait for call "${callId}" is already live`)
    }
    const wait: LiveWait = {
      agentId,
      callId,
      deadline,
      claims: 0,
      timer: undefined,
      expire: () => {},
      expired: false,
      controller: new AbortController(),
      ended: false,
      onEnded: new Set(),
    }
    this.#waits.set(k, wait)
    const expired = new Promise<'expired'>((resolve) => {
      wait.expire = () => {
        wait.expired = true
        resolve('expired')
      }
    })
    this.#arm(wait)
    return { wait, expired }
  }

  /**
   * Claim a live wait. Yields one `{remainingMs}` frame, then holds until the client stops
   * iterating, `signal` aborts, or the wait ends. While any claim is held the timer is stopped;
   * the original deadline applies again when the last claim leaves.
   */
  async *attach(
    agentId: string,
    callId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<{ remainingMs: number }, void, undefined> {
    const wait = this.#waits.get(key(agentId, callId))
    if (!wait || wait.ended || signal?.aborted) return
    // Past its deadline with nobody holding it, the wait has expired even if its timer has not
    // fired yet: it expires now and there is nothing to claim.
    if (wait.claims === 0 && this.#now() >= wait.deadline) {
      wait.expire()
      return
    }
    wait.claims++
    if (wait.timer) clearTimeout(wait.timer)
    wait.timer = undefined
    let done = () => {}
    try {
      yield { remainingMs: Math.max(0, wait.deadline - this.#now()) }
      await new Promise<void>((resolve) => {
        if (wait.ended || signal?.aborted) return resolve()
        done = () => resolve()
        wait.onEnded.add(done)
        signal?.addEventListener('abort', done, { once: true })
      })
    } finally {
      wait.onEnded.delete(done)
      signal?.removeEventListener('abort', done)
      wait.claims--
      if (wait.claims === 0 && !wait.ended) this.#arm(wait)
    }
  }

  /** The wait is over (answered, pending, failed): its timer stops and its claims let go. */
  end(wait: LiveWait): void {
    wait.ended = true
    if (wait.timer) clearTimeout(wait.timer)
    wait.timer = undefined
    for (const wake of wait.onEnded) wake()
    wait.onEnded.clear()
    const k = key(wait.agentId, wait.callId)
    if (this.#waits.get(k) === wait) this.#waits.delete(k)
  }

  #arm(wait: LiveWait): void {
    if (wait.timer) clearTimeout(wait.timer)
    const remaining = Math.max(0, wait.deadline - this.#now())
    wait.timer = setTimeout(() => {
      wait.timer = undefined
      if (wait.claims === 0 && !wait.ended) wait.expire()
    }, remaining)
  }
}
