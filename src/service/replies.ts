import { UserQuestionError } from '../protocol/errors.js'
import { answerSchema } from '../protocol/schemas.js'
import type { AskUserQuestionAnswerItem, LateReply } from '../protocol/types.js'
import { checkAnswer } from '../protocol/validate.js'
import type { CallRecord, Store, StoreEvent } from '../store/types.js'

/** A late reply waiting for its agent to admit or discard it. */
export interface QueuedReply {
  agentId: string
  callId: string
  reply: LateReply
}

/**
 * Queue a late answer for a continued call, in the protocol's reply shape. Undefined for an open
 * or unknown call; BAD_ANSWER for a batch that does not fit; REPLY_QUEUED while one waits.
 */
export function queueReply(
  store: Store,
  agentId: string,
  callId: string,
  answer: unknown,
): Promise<LateReply | undefined> {
  return store.transact({ agentId, callId }, (call) => replyDecision(call, agentId, callId, answer))
}

/**
 * The one decision that queues a late reply, on the call's row as a transaction read it (see
 * `queueReply`; a card's completing click takes it in the card's own commit).
 */
export function replyDecision(
  call: CallRecord | undefined,
  agentId: string,
  callId: string,
  answer: unknown,
): { events: StoreEvent[]; result: LateReply | undefined } {
  if (call?.state !== 'continued') return { events: [], result: undefined }
  const batch = checkAnswer(call.questions, answer)
  if (call.queuedReply) {
    throw new UserQuestionError(
      'REPLY_QUEUED',
      `a reply for call "${callId}" is already waiting for the agent`,
    )
  }
  const reply: LateReply = {
    source: 'user-question-reply',
    outcome: 'answered',
    payload: {
      kind: 'answer_to_pending_question',
      tool: 'ask_user_question',
      callId,
      questions: call.questions,
      answers: batch.answers,
    },
  }
  return { events: [{ type: 'reply_queued', callId, agentId, reply }], result: reply }
}

/** Late replies queued for an agent, not yet admitted or discarded, in ask order. */
export async function listReplies(store: Store, agentId: string): Promise<QueuedReply[]> {
  const calls = await store.listCalls({ agentId, states: ['continued'] })
  return calls.flatMap((c) => (c.queuedReply ? [{ agentId, callId: c.callId, reply: c.queuedReply }] : []))
}

/**
 * Settle a continued call with a reply's batch (zero answers when it has none readable).
 * `reply` defaults to the queued one. False when nothing changed.
 */
export function admitReply(store: Store, agentId: string, callId: string, reply?: unknown): Promise<boolean> {
  return store.transact({ agentId, callId }, (call) => {
    if (call?.state !== 'continued') return { events: [], result: false }
    const source = reply ?? call.queuedReply
    if (source === undefined) return { events: [], result: false }
    const answers = readBatch(source)
    return {
      events: [{ type: 'reply_admitted', agentId, callId, ...(answers ? { answers } : {}) }],
      result: true,
    }
  })
}

/** Drop a queued reply: the call is answerable again. False when none was queued. */
export function discardReply(store: Store, agentId: string, callId: string): Promise<boolean> {
  return store.transact({ agentId, callId }, (call) => {
    if (!call?.queuedReply) return { events: [], result: false }
    return { events: [{ type: 'reply_discarded', agentId, callId }], result: true }
  })
}

function readBatch(reply: unknown): AskUserQuestionAnswerItem[] | undefined {
  const payload = (reply as { payload?: { answers?: unknown } } | null)?.payload
  const parsed = answerSchema.safeParse({ answers: payload?.answers })
  return parsed.success ? (parsed.data.answers as AskUserQuestionAnswerItem[]) : undefined
}
