import type { LeaderHandlers, Leadership } from './pg-leader.js'
import type { Store } from './types.js'

export type { LeaderHandlers, Leadership }

/**
 * What a store shared by several bridges offers their adapters, handed to each platform's
 * `build()` so no adapter imports a store. Both are absent when this bridge is the only process
 * on its store: then the adapter leads and remembers on its own.
 */
export interface StoreCapabilities {
  /** Run a job (a gateway session) in one process at a time; another takes over when it dies. */
  leader?: (job: string, handlers: LeaderHandlers) => Leadership
  /** Remember a key once across every bridge (a replay guard): true the first time. */
  seenOnce?: Pick<Store, 'rememberOnce'>
}

/** The capabilities a store offers: a store that can elect a leader is shared by replicas. */
export function capabilitiesOf(store: Store): StoreCapabilities {
  const lead = store.lead?.bind(store)
  if (!lead) return {}
  return { leader: (job, handlers) => lead(job, handlers), seenOnce: store }
}
