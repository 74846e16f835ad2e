import { isSharedStore } from '../store/capabilities.js'
import type { CallKey, Store } from '../store/types.js'

/**
 * After a restart: timed calls left open by a dead process become continued (the "outcome
 * unknown" result), so they stay answerable and later replies arrive as a new turn. Calls this
 * process is still flying are left alone. On a database shared with other live bridges, only
 * calls whose own bridge is gone (its lease lapsed) and whose deadline has passed. Reads the
 * open timed calls only (an index range), never history.
 */
export async function recoverTimedCalls(
  store: Store,
  flying: (call: CallKey) => boolean,
): Promise<CallKey[]> {
  if (isSharedStore(store)) return store.takeOverDue()
  const continued: CallKey[] = []
  for (const open of await store.listCalls({ states: ['open'], timed: true })) {
    const call = { agentId: open.agentId, callId: open.callId }
    if (flying(call)) continue
    const turned = await store.transact(call, (current) =>
      current?.state === 'open' && current.timed && !flying(call)
        ? { events: [{ type: 'pending', ...call }], result: true }
        : { events: [], result: false },
    )
    if (turned) continued.push(call)
  }
  return continued
}
