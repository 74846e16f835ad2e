import { UserQuestionError } from '../protocol/errors.js'
import type {
  Answerer,
  AnswererRequest,
  AskUserQuestionAnswer,
  AskUserQuestionRequest,
} from '../protocol/types.js'
import { checkAnswer } from '../protocol/validate.js'

interface Registration {
  answerer: Answerer
  agentId?: string
}

/**
 * Answerers composed as a waterfall: each answers or calls `next()`. Agent-scoped answerers
 * only see their agent's requests. The end of the chain is `terminal`.
 */
export class Waterfall {
  private readonly chain: Registration[] = []

  use(answerer: Answerer, options: { agentId?: string } = {}): () => void {
    const registration: Registration = {
      answerer,
      ...(options.agentId === undefined ? {} : { agentId: options.agentId }),
    }
    this.chain.push(registration)
    return () => {
      const i = this.chain.indexOf(registration)
      if (i >= 0) this.chain.splice(i, 1)
    }
  }

  /**
   * Run an ask through the chain: the answerers see `request` with its call, signal and
   * deadline; the answer must answer each question (checkAnswer) or the ask fails.
   */
  runFor(
    request: AskUserQuestionRequest,
    callId: string,
    controller: AbortController,
    deadline: number | undefined,
    terminal: () => Promise<AskUserQuestionAnswer>,
  ): Promise<AskUserQuestionAnswer> {
    const answererRequest: AnswererRequest = {
      questions: request.questions,
      signal: controller.signal,
      callId,
      ...(request.agent ? { agent: request.agent } : {}),
      ...(request.wait ? { wait: request.wait } : {}),
      ...(request.route === undefined ? {} : { route: request.route }),
      ...(deadline === undefined ? {} : { deadline }),
      ...(request.form ? { form: request.form } : {}),
      ...(request.tool ? { tool: request.tool } : {}),
    }
    return this.run(answererRequest, terminal).then((answer) => checkAnswer(request.questions, answer))
  }

  run(
    request: AnswererRequest,
    terminal: () => Promise<AskUserQuestionAnswer>,
  ): Promise<AskUserQuestionAnswer> {
    // Snapshot: registrations made while a request runs apply to later requests.
    const chain = this.chain.filter((r) => r.agentId === undefined || r.agentId === request.agent?.id)
    const step = (i: number): Promise<AskUserQuestionAnswer> => {
      // However late the chain gets here, no answerer sees a request nobody waits for any more
      // (the caller left, the wait ended): it would post a card for nobody.
      if (request.signal.aborted) return Promise.reject(request.signal.reason)
      const registration = chain[i]
      if (!registration) return terminal()
      let called = false
      const next = () => {
        if (called) return Promise.reject(new UserQuestionError('PROVIDER_ERROR', 'next() called twice'))
        called = true
        return step(i + 1)
      }
      try {
        return Promise.resolve(registration.answerer(request, next))
      } catch (error) {
        return Promise.reject(error)
      }
    }
    return step(0)
  }
}
