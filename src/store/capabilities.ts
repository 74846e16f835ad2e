import type { LeaderHandlers, Leadership } from './pg-leader.js'
import type { StoreChangeListener } from './pg-notify.js'
import type { CallKey, Store } from './types.js'

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

/**
 * A store several processes share (PostgreSQL): it tells of the others' changes as they commit
 * and lets a process take over the deadlines of one that died.
 */
export interface SharedStore extends Store {
  /** This process, in leases and notifications. */
  readonly instanceId: string
  /** Changes other processes commit; `resync` after notifications may have been missed. */
  watch(listener: StoreChangeListener): () => void
  /** Turn due timed calls of dead processes pending, each once across processes; returns them. */
  takeOverDue(now?: number): Promise<CallKey[]>
}

export function isSharedStore(store: Store): store is SharedStore {
  const s = store as Partial<SharedStore>
  return typeof s.watch === 'function' && typeof s.takeOverDue === 'function'
}
