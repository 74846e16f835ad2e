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
  /** A call settled with an answer (in the window, or a blocking ask). */
  answered: [call: CallKey, answers: AskUserQuestionAnswerItem[]]
  /** A call ended without an answer (failure, abort, cancel). */
  dropped: [call: CallKey, code: string, failure?: UserQuestionError | StorageError]
  /** A late reply was queued for an agent. */
  reply: [reply: QueuedReply]
  /** A queued reply was admitted (the call settled) or discarded (answerable again). */
  replyAdmitted: [reply: { agentId: string; callId: string }]
  replyDiscarded: [reply: { agentId: string; callId: string }]
}
