import { UserQuestionError } from '../protocol/errors.js'
import type { Answerer, AnswererRequest, AskUserQuestionAnswer } from '../protocol/types.js'

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

  run(
    request: AnswererRequest,
    terminal: () => Promise<AskUserQuestionAnswer>,
  ): Promise<AskUserQuestionAnswer> {
    // Snapshot: registrations made while a request runs apply to later requests.
    const chain = this.chain.filter((r) => r.agentId === undefined || r.agentId === request.agent?.id)
    const step = (i: number): Promise<AskUserQuestionAnswer> => {
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
