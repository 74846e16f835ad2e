import type { UserQuestionProjectionView } from '../protocol/types.js'
import type { CallRecord, StoredEvent } from './types.js'

/**
 * Fold one event into the call map. Pure apart from mutating `calls`; every store uses it so
 * the projection is the same whichever store holds the log.
 */
export function foldEvent(calls: Map<string, CallRecord>, event: StoredEvent): void {
  if (event.type === 'asked') {
    // A reused callId replaces the row and puts it last as open.
    calls.set(event.callId, {
      callId: event.callId,
      agentId: event.agentId,
      questions: event.questions,
      timed: event.timed,
      ...(event.deadline === undefined ? {} : { deadline: event.deadline }),
      ...(event.route === undefined ? {} : { route: event.route }),
      state: 'open',
      askedAt: event.at,
      askedSeq: event.seq,
    })
    return
  }
  const call = calls.get(event.callId)
  if (!call) return
  switch (event.type) {
    case 'answered':
      if (call.state !== 'open') return
      call.state = 'settled'
      call.answers = event.answers
      call.settledSeq = event.seq
      call.settledAt = event.at
      return
    case 'pending':
      if (call.state === 'open' && call.timed) call.state = 'continued'
      return
    case 'dropped':
      if (call.state !== 'open' && call.state !== 'continued') return
      call.state = 'dropped'
      call.dropCode = event.code
      delete call.queuedReply
      return
    case 'reply_queued':
      if (call.state === 'continued' && !call.queuedReply) call.queuedReply = event.reply
      return
    case 'reply_discarded':
      delete call.queuedReply
      return
    case 'reply_admitted':
      // A reply naming a call that is no longer answerable changes nothing.
      if (call.state !== 'continued') return
      call.state = 'settled'
      call.answers = event.answers ?? []
      call.settledSeq = event.seq
      call.settledAt = event.at
      delete call.queuedReply
      return
  }
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
