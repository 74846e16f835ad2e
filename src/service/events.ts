import type { EventEmitter } from 'node:events'
import type { Logger } from '../log.js'
import type { UserQuestionError } from '../protocol/errors.js'
import type { AskUserQuestionAnswerItem } from '../protocol/types.js'
import type { StorageError } from '../store/errors.js'
import type { CallKey } from '../store/types.js'
import type { QueuedReply } from './replies.js'

/** What the service tells its listeners (the chat answerer, the HTTP API's reply streams, metrics). */
export interface ServiceEvents {
  /** A call was recorded (blocking or timed). */
  asked: [call: { callId: string; agentId: string; timed: boolean }]
  /** A timed call's window closed: it is continued. */
  pending: [call: CallKey]
  /**
   * A call settled with an answer (in the window, or a blocking ask). `via: 'card'`: the call's
   * own card stored it (its click's commit settled the call), so the card says so already.
   */
  answered: [call: CallKey, answers: AskUserQuestionAnswerItem[], via?: 'card']
  /** A call ended without an answer (failure, abort, cancel). */
  dropped: [call: CallKey, code: string, failure?: UserQuestionError | StorageError]
  /** A late reply was queued for an agent. */
  reply: [reply: QueuedReply]
  /** A queued reply was admitted (the call settled) or discarded (answerable again). */
  replyAdmitted: [reply: { agentId: string; callId: string }]
  replyDiscarded: [reply: { agentId: string; callId: string }]
}

/**
 * Call each listener of `event`; one that throws or rejects is logged and never undoes or
 * misreports what was already recorded (a queued reply stays queued). True when any listened.
 */
export function emitSafely<K extends keyof ServiceEvents>(
  emitter: EventEmitter<ServiceEvents>,
  log: Logger,
  event: K,
  args: ServiceEvents[K],
): boolean {
  const listeners = emitter.listeners(event) as Array<(...a: ServiceEvents[K]) => unknown>
  for (const listener of listeners) {
    try {
      const result = listener.apply(emitter, args)
      if (result instanceof Promise) {
        result.catch((error: unknown) => log.error('a service event listener failed', { event, error }))
      }
    } catch (error) {
      log.error('a service event listener failed', { event, error })
    }
  }
  return listeners.length > 0
}
