import type { Store } from '../store/types.js'

/**
 * A store that can be frozen at shutdown: afterwards every call returns a promise that never
 * settles. Work still in flight (waits, timers, card updates) then neither writes nor fails, so
 * the log keeps exactly what it held at shutdown and a restart resumes from it: timed calls come
 * back continued, blocking calls re-attach to their cards, posted cards keep working.
 */
export function freezableStore(store: Store): { store: Store; freeze: () => void } {
  let frozen = false
  const never = new Promise<never>(() => {})
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (frozen && prop !== 'close') return never
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return {
    store: wrapped,
    freeze: () => {
      frozen = true
    },
  }
}
