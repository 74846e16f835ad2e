import type { UserQuestionProjectionView } from '../protocol/types.js'
import type { CallKey, CallRecord, StoredEvent } from './types.js'

/** Just the key of a call, card or post (drops the other fields). */
export function callKeyOf(x: CallKey): CallKey {
  return { agentId: x.agentId, callId: x.callId }
}

/** One string per call key, for maps and logs (NUL never appears in ids). */
export function callKeyString(key: CallKey): string {
  return `${key.agentId}\u0000${key.callId}`
}

/**
 * A decision on one call (`transact`, or `casCard`'s call step) appends events of that call only:
 * anything else is a programming error, thrown inside the transaction so nothing is written.
 */
export function ownEvents<E extends CallKey>(key: CallKey, events: E[], what: 'transact' | 'casCard'): E[] {
  for (const event of events) {
    if (event.agentId !== key.agentId || event.callId !== key.callId) {
      throw new Error(`${what} on ${key.agentId}/${key.callId} cannot append an event for another call`)
    }
  }
  return events
}

/** A card state's `status` (indexed, so live cards are found without reading every card). */
export function statusOf(state: unknown): string | null {
  const status = (state as { status?: unknown } | null)?.status
  return typeof status === 'string' ? status : null
}

/**
 * Fold one event into its call's record. Pure apart from mutating `call`; returns the record to
 * keep (undefined: the call is unknown and the event changes nothing). Every store uses it, so a
 * call's state is the same whichever store holds the log.
 */
export function foldCall(call: CallRecord | undefined, event: StoredEvent): CallRecord | undefined {
  if (event.type === 'asked') {
    // A reused key (the same agent asking again with the same callId) starts the call over.
    return {
      callId: event.callId,
      agentId: event.agentId,
      questions: event.questions,
      timed: event.timed,
      ...(event.deadline === undefined ? {} : { deadline: event.deadline }),
      ...(event.route === undefined ? {} : { route: event.route }),
      state: 'open',
      askedAt: event.at,
      askedSeq: event.seq,
    }
  }
  if (!call) return undefined
  switch (event.type) {
    case 'answered':
      if (call.state !== 'open') break
      call.state = 'settled'
      call.answers = event.answers
      call.settledSeq = event.seq
      call.settledAt = event.at
      call.endedAt = event.at
      break
    case 'pending':
      if (call.state === 'open' && call.timed) call.state = 'continued'
      break
    case 'dropped':
      if (call.state !== 'open' && call.state !== 'continued') break
      call.state = 'dropped'
      call.dropCode = event.code
      call.endedAt = event.at
      delete call.queuedReply
      break
    case 'reply_queued':
      if (call.state === 'continued' && !call.queuedReply) call.queuedReply = event.reply
      break
    case 'reply_discarded':
      delete call.queuedReply
      break
    case 'reply_admitted':
      // A reply naming a call that is no longer answerable changes nothing.
      if (call.state !== 'continued') break
      call.state = 'settled'
      call.answers = event.answers ?? []
      call.settledSeq = event.seq
      call.settledAt = event.at
      call.endedAt = event.at
      delete call.queuedReply
      break
  }
  return call
}

/** Fold a whole log into a call map keyed by `callKeyString` (tests, migrations). */
export function foldAll(events: Iterable<StoredEvent>): Map<string, CallRecord> {
  const calls = new Map<string, CallRecord>()
  for (const event of events) {
    const k = callKeyString(event)
    const next = foldCall(calls.get(k), event)
    if (next) {
      // An `asked` on a known key puts the call last, as a new call.
      if (event.type === 'asked') calls.delete(k)
      calls.set(k, next)
    }
  }
  return calls
}

/** The protocol projection: only timed calls; active in ask order, settled in settlement order. */
export function projectionOf(calls: Iterable<CallRecord>, agentId?: string): UserQuestionProjectionView {
  const timed = [...calls].filter((c) => c.timed && (agentId === undefined || c.agentId === agentId))
  const active = timed
    .filter((c) => c.state === 'open' || c.state === 'continued')
    .sort((a, b) => a.askedSeq - b.askedSeq)
    .map((c) => ({ callId: c.callId, questions: c.questions, state: c.state as 'open' | 'continued' }))
  const settled = timed
    .filter((c) => c.state === 'settled')
    .sort((a, b) => (a.settledSeq ?? 0) - (b.settledSeq ?? 0))
    .map((c) => ({ callId: c.callId, answers: c.answers ?? [] }))
  return { active, settled }
}

/**
 * A projection page from active calls (ask order) and up to `limit + 1` settled calls
 * (settlement order): the extra one only says that another page follows.
 */
export function pageOf(
  active: CallRecord[],
  settled: CallRecord[],
  limit: number,
): { view: UserQuestionProjectionView; next?: number } {
  const page = settled.slice(0, limit)
  const last = page.at(-1)
  return {
    view: {
      active: active.map((c) => ({
        callId: c.callId,
        questions: c.questions,
        state: c.state as 'open' | 'continued',
      })),
      settled: page.map((c) => ({ callId: c.callId, answers: c.answers ?? [] })),
    },
    ...(settled.length > limit && last?.settledSeq !== undefined ? { next: last.settledSeq } : {}),
  }
}
