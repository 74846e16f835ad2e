/** `POST /v1/questions/:callId/answer`: a late answer, under the same rules as a click. */
import { z } from 'zod'
import { auditSafely } from '../../answerer/interactions.js'
import type { CardState, Person } from '../../card/types.js'
import { asUserQuestionError } from '../../protocol/errors.js'
import type { CallKey } from '../../store/types.js'
import { parseBody, readJson, sendJson } from '../body.js'
import { type Caller, requireAgent, requireScope } from '../credentials.js'
import { HttpError } from '../errors.js'
import { agentParam, resolveCall } from '../query.js'
import type { Router } from '../router.js'
import { idSchema } from './ask.js'
import { type ApiDeps, callerOf } from './deps.js'

export const answerBodySchema = z.strictObject({
  answers: z.unknown(),
  agentId: idSchema.optional(),
})

/** Register `POST /v1/questions/:callId/answer`. */
export function addAnswerRoutes(router: Router, deps: ApiDeps): void {
  const { service, store } = deps
  router.add('POST', '/v1/questions/:callId/answer', async ({ req, params, url, res, caller: who }) => {
    const caller = callerOf(who)
    const body = parseBody(answerBodySchema, await readJson(req))
    const named = agentParam(url)
    if (body.agentId !== undefined && named !== undefined && body.agentId !== named) {
      throw new HttpError('BAD_REQUEST', 'agentId in the query and in the body differ')
    }
    const mine = !caller.scopes.has('admin') && !caller.agent.includes('*') ? caller.agent : undefined
    const key = await resolveCall(service, params.callId ?? '', body.agentId ?? named ?? mine)
    // The same responder, quorum and requester rules as every click: checked on the card, and the
    // answer (or its refusal) is audited with the caller as its actor.
    const actor: Person = { platform: 'api', userId: caller.label }
    const card = (await store.getCard<CardState>(key))?.state
    const shown = card?.shown
    const audit = (refused: boolean, code?: string) =>
      auditSafely(
        { store, log: deps.logger },
        {
          ...key,
          kind: 'interaction',
          platform: 'api',
          actor,
          detail: { type: 'api-answer', answers: body.answers },
          refused,
          ...(code ? { code } : {}),
          ...(shown ? { shown } : {}),
        },
      )
    await authorizeAnswer(caller, key, card, actor, deps, audit)
    // Exactly one answer counts: one that lost to another (a reply already waits) is refused and
    // audited so, as a losing click is.
    let accepted: boolean
    try {
      accepted = await service.answer(key.agentId, key.callId, { answers: body.answers })
    } catch (error) {
      if (asUserQuestionError(error)?.code === 'REPLY_QUEUED') await audit(true, 'reply-queued')
      throw error
    }
    await audit(!accepted, accepted ? undefined : 'not-continued')
    sendJson(res, 200, { accepted })
  })
}

/**
 * A token that may not answer, or not for this agent, or a person the card's rules refuse:
 * refused, and audited when a card exists.
 */
async function authorizeAnswer(
  caller: Caller,
  key: CallKey,
  card: CardState | undefined,
  actor: Person,
  deps: ApiDeps,
  audit: (refused: boolean, code?: string) => Promise<unknown>,
): Promise<void> {
  try {
    requireScope(caller, 'answer')
    requireAgent(caller, key.agentId)
  } catch (error) {
    if (card) await audit(true, (error as HttpError).code.toLowerCase().replace(/_/g, '-'))
    throw error
  }
  const requester = caller.requester ? { ...caller.requester } : undefined
  const refusal = card ? await deps.policy.refusesApi(card, actor, requester) : undefined
  if (refusal) {
    await audit(true, 'not-allowed')
    throw new HttpError('NOT_ALLOWED', refusal)
  }
}
