import type { CardState } from '../card/types.js'
import type { AskUserQuestionAnswer } from '../protocol/types.js'
import { isSharedStore } from '../store/capabilities.js'
import type { CallKey, Store } from '../store/types.js'
import type { Waiters } from './waiters.js'

export interface OtherBridgesDeps {
  store: Store
  waiters: Waiters
  /** How often asks waiting here re-read their cards when the store may miss a notification. */
  recheckMs: number
  /** Hand a card's answer to the ask waiting here. */
  handOver: (card: CardState, answer: AskUserQuestionAnswer) => boolean
  background: (work: Promise<unknown>) => void
}

/**
 * Several bridges on one database: a card completed through another bridge completes the ask
 * waiting here, at once when the store notifies, and within `recheckMs` when it does not.
 * Returns what stops it (nothing on a store of its own).
 */
export function followOtherBridges(deps: OtherBridgesDeps): Array<() => void> {
  const { store, waiters, background } = deps
  if (!isSharedStore(store)) return []
  /** An answered card (through another bridge) whose ask waits here: hand it over. */
  const deliver = (card: CardState | undefined) => {
    if (card?.status !== 'answered' || !card.result) return
    // The bridge that applied the click audited it and found nobody waiting there.
    deps.handOver(card, card.result)
  }
  const wake = async (key: CallKey) => {
    if (waiters.has(key)) deliver((await store.getCard<CardState>(key))?.state)
  }
  /** Every ask waiting here, in one read: only the cards answered meanwhile come back. */
  const wakeAll = async () => {
    const calls = waiters.calls()
    if (calls.length === 0) return
    for (const card of await store.listCards<CardState>({ calls, statuses: ['answered'] })) {
      if (waiters.has(card)) deliver(card.state)
    }
  }
  const unwatch = store.watch((change) => {
    if (change.kind === 'resync') background(wakeAll())
    else if (change.kind === 'card' && waiters.has(change)) background(wake(change))
  })
  const timer = setInterval(() => background(wakeAll()), deps.recheckMs)
  timer.unref()
  return [unwatch, () => clearInterval(timer)]
}
