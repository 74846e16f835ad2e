import type { CardState, Person } from '../card/types.js'
import type { UserQuestionService } from '../service/service.js'
import { callKeyOf, callKeyString } from '../store/fold.js'
import type { CallKey } from '../store/types.js'

export interface HoldsOptions {
  service: UserQuestionService
  now: () => number
  /** The longest a hold lasts, renewed or not. */
  maxMs: number
  /** A hold ended by itself (its lease or the maximum ran out): drop the person from the card. */
  expired: (call: CallKey, person: Person) => void
}

interface Hold {
  controller: AbortController
  timer?: ReturnType<typeof setTimeout>
  /** Claimed at; a hold never outlives `claimedAt + maxMs`. */
  claimedAt: number
  /** Without a renewal, the hold ends this long after its last sign of life (undefined: no lease). */
  leaseMs: number | undefined
}

const keyOf = (call: CallKey, person: Pick<Person, 'platform' | 'userId'>) =>
  `${callKeyString(call)}\u0000${person.platform}:${person.userId}`

/**
 * "Take my time" and open forms: while a person holds a timed wait, the service's timer waits
 * for them (a claim through `attachWait`). A hold ends when they let go, when the card finishes,
 * after `maxMs`, or, for a surface that renews it (the web inbox's heartbeat), when the renewals
 * stop for longer than its lease: a closed tab lets go within the lease.
 */
export class Holds {
  readonly #options: HoldsOptions
  readonly #holds = new Map<string, Hold>()

  constructor(options: HoldsOptions) {
    this.#options = options
  }

  /** Claim the card's timed wait for a person. `leaseMs`: how long it lasts without a renewal. */
  claim(card: CardState, person: Person, leaseMs?: number): void {
    if (card.deadline === undefined || card.status !== 'open') return
    const call = callKeyOf(card)
    const key = keyOf(call, person)
    if (this.#holds.has(key)) {
      this.renew(call, person)
      return
    }
    const controller = new AbortController()
    const hold: Hold = { controller, claimedAt: this.#options.now(), leaseMs }
    this.#holds.set(key, hold)
    this.#arm(key, call, person, hold)
    const { service } = this.#options
    void (async () => {
      for await (const _frame of service.attachWait(card.agentId, card.callId, controller.signal)) {
        // One frame; the claim lasts until the controller aborts or the wait ends.
      }
    })()
  }

  /** A sign of life from the holder: the lease starts again. False when there is no such hold. */
  renew(call: CallKey, person: Person): boolean {
    const key = keyOf(call, person)
    const hold = this.#holds.get(key)
    if (!hold) return false
    this.#arm(key, call, person, hold)
    return true
  }

  /** The person let go. True when they held the wait. */
  release(call: CallKey, person: Person): boolean {
    return this.#end(keyOf(call, person))
  }

  /** The card finished: every hold on it ends. */
  releaseAll(call: CallKey): void {
    const prefix = `${callKeyString(call)}\u0000`
    for (const key of [...this.#holds.keys()].filter((k) => k.startsWith(prefix))) this.#end(key)
  }

  stop(): void {
    for (const key of [...this.#holds.keys()]) this.#end(key)
  }

  #arm(key: string, call: CallKey, person: Person, hold: Hold): void {
    clearTimeout(hold.timer)
    const now = this.#options.now()
    const until = Math.min(
      hold.claimedAt + this.#options.maxMs,
      hold.leaseMs === undefined ? Number.POSITIVE_INFINITY : now + hold.leaseMs,
    )
    hold.timer = setTimeout(
      () => {
        if (this.#end(key)) this.#options.expired(call, person)
      },
      Math.max(0, until - now),
    )
    hold.timer.unref()
  }

  #end(key: string): boolean {
    const hold = this.#holds.get(key)
    if (!hold) return false
    clearTimeout(hold.timer)
    hold.controller.abort()
    this.#holds.delete(key)
    return true
  }
}
