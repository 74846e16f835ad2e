import type { CardState } from '../card/types.js'
import type { AuditEntry, CallKey, CallStep, Store, VersionedCard } from '../store/types.js'

/** How many times a compare-and-set is retried when someone else changed the card in between. */
const CAS_ATTEMPTS = 20

/**
 * What to do with the card as read: stop with a result, or write a new state (with the audit
 * entries that record the step, in the same commit) and then finish.
 */
export type CasStep<T> =
  | { done: T }
  /** Decide again on the card as stored: what was decided on a remembered card (a hint) and writes nothing. */
  | { reread: true }
  | {
      write: CardState
      audit?: AuditEntry[]
      /** Decided on the card's call in the same commit (see `Store.casCard`). */
      call?: CallStep
      /** The step's result when `call` refused it (threw); undefined: the error stands. */
      refused?: (error: unknown) => Promise<T> | undefined
      after: (version: number) => T | Promise<T>
    }

/**
 * The one compare-and-set loop over a card: read it, decide, write only if nobody changed it
 * since the read, and decide again on the new state when somebody did. `busy` is the result
 * when the card kept changing for every attempt.
 */
export async function compareAndSet<T>(
  store: Pick<Store, 'getCard' | 'casCard'>,
  call: CallKey,
  decide: (current: VersionedCard<CardState> | undefined) => CasStep<T> | Promise<CasStep<T>>,
  busy: () => T,
  /**
   * The card as the caller already knows it (just read, or `card: undefined` for a call whose card
   * is most likely not made yet): the first attempt decides on it instead of reading. A wrong guess
   * costs one attempt: its write fails the compare-and-set, and the next attempt reads.
   */
  first?: { card: VersionedCard<CardState> | undefined },
): Promise<T> {
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
    const current = attempt === 0 && first ? first.card : await store.getCard<CardState>(call)
    const step = await decide(current)
    if ('done' in step) return step.done
    if ('reread' in step) continue
    let version: number | undefined
    try {
      version = await store.casCard(call, current?.version ?? 0, step.write, step.audit, step.call)
    } catch (error) {
      const refused = step.refused?.(error)
      if (refused) return refused
      throw error
    }
    if (version !== undefined) return step.after(version)
  }
  return busy()
}
