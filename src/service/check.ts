import { CALL_ID_PATTERN } from '../card/codec.js'
import { UserQuestionError } from '../protocol/errors.js'
import type { AskUserQuestionRequest } from '../protocol/types.js'
import { checkIntents, checkQuestions } from '../protocol/validate.js'
import { aborted } from './abort.js'
import type { AgentRegistry } from './agents.js'

/** Everything a request must be before it is recorded: questions, callId, a live caller, intents. */
export function checkRequest(request: AskUserQuestionRequest, timed: boolean, agents: AgentRegistry): void {
  if (request.signal?.aborted) throw aborted(request.signal)
  if (Array.isArray(request.questions) && request.questions.length === 0) {
    throw new UserQuestionError('EMPTY_QUESTIONS', 'the request has no questions')
  }
  checkQuestions(request.questions)
  const callId = request.wait?.callId
  if (callId !== undefined && (typeof callId !== 'string' || !CALL_ID_PATTERN.test(callId))) {
    throw new UserQuestionError('BAD_QUESTION', 'callId must be 1-64 characters of A-Z a-z 0-9 _ . : -')
  }
  if (request.agent) {
    if (!agents.isLive(request.agent)) {
      throw new UserQuestionError('CALLER_NOT_LIVE', `agent "${request.agent.id}" is not the live instance`)
    }
    if (request.agent.delegated) {
      throw new UserQuestionError(
        'DELEGATED_CALLER',
        `agent "${request.agent.id}" is a delegated sub-agent and has no person to ask. Do not ask ` +
          'again: finish what you can and put the open question in your final result, so the agent ' +
          'that delegated to you can ask it.',
      )
    }
  }
  checkIntents(request.questions, timed)
}
