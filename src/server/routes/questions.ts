/** The calls: `GET /v1/questions` (the projection, paged), and one call read or cancelled. */
import type { CardState } from '../../card/types.js'
import type { CallKey } from '../../store/types.js'
import { sendJson } from '../body.js'
import { type Caller, listedAgent, requireAgent } from '../credentials.js'
import { HttpError } from '../errors.js'
import { agentParam, encodeCursor, optionalAgent, pageParams, resolveCall } from '../query.js'
import type { Router } from '../router.js'
import { type ApiDeps, callerOf, notFound } from './deps.js'

/** Register `GET /v1/questions`, `GET /v1/questions/:callId` and `DELETE /v1/questions/:callId`. */
export function addQuestionRoutes(router: Router, deps: ApiDeps): void {
  const { service, store } = deps

  /** The call a route names, when the caller may act for its agent (403 otherwise). */
  const ownCall = async (caller: Caller, callId: string, named: string | undefined): Promise<CallKey> => {
    const mine = named === undefined && !caller.scopes.has('admin') && !caller.agent.includes('*')
    const key = await resolveCall(service, callId, mine ? caller.agent : named)
    requireAgent(caller, key.agentId)
    return key
  }

  router.add('GET', '/v1/questions', async ({ url, res, caller: who }) => {
    const caller = callerOf(who)
    const { limit, afterSeq } = pageParams(url)
    const named = agentParam(url)
    // An agent's token lists its own calls only.
    const agentId = listedAgent(caller, named)
    const page = await service.projectionPage({
      limit,
      ...(afterSeq === undefined ? {} : { afterSeq }),
      ...optionalAgent(agentId),
    })
    sendJson(res, 200, {
      ...page.view,
      ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }),
    })
  })

  router.add('GET', '/v1/questions/:callId', async ({ params, url, res, caller }) => {
    const key = await ownCall(callerOf(caller), params.callId ?? '', agentParam(url))
    // The card and its copies from one snapshot (a copy exists only beside its card).
    const [call, card] = await Promise.all([service.getCall(key), store.getCardWithPosts<CardState>(key)])
    if (!call && !card) throw notFound(key)
    sendJson(res, 200, callView(key, call, card?.state, card?.posts ?? []))
  })

  router.add('DELETE', '/v1/questions/:callId', async ({ params, url, res, caller }) => {
    const key = await ownCall(callerOf(caller), params.callId ?? '', agentParam(url))
    const [call, card] = await Promise.all([service.getCall(key), store.getCard(key)])
    if (!call && !card && !service.inflight(key.agentId, key.callId)) throw notFound(key)
    const cancelled = await service.cancel(key, 'cancelled through the API')
    if (!cancelled) {
      throw new HttpError('NOT_ANSWERABLE', `question "${key.callId}" is already finished`)
    }
    sendJson(res, 200, { cancelled: true, callId: key.callId, agentId: key.agentId })
  })
}

type StoredCall = Awaited<ReturnType<ApiDeps['service']['getCall']>>
type StoredPost = Awaited<ReturnType<ApiDeps['store']['listPosts']>>[number]

/** One call as `GET /v1/questions/:callId` answers it: the call's record, its card and posts. */
function callView(
  key: CallKey,
  call: StoredCall,
  c: CardState | undefined,
  posts: StoredPost[],
): Record<string, unknown> {
  return {
    callId: key.callId,
    agentId: key.agentId,
    questions: call?.questions ?? c?.questions,
    state: call?.state ?? c?.status,
    timed: call?.timed ?? false,
    ...(call?.deadline === undefined ? {} : { deadline: call.deadline }),
    ...(call?.route === undefined ? {} : { route: call.route }),
    ...(call ? { askedAt: call.askedAt } : {}),
    ...(call?.answers ? { answers: call.answers } : c?.result ? { answers: c.result.answers } : {}),
    ...(call?.settledAt === undefined ? {} : { settledAt: call.settledAt }),
    ...(call?.dropCode === undefined ? {} : { dropCode: call.dropCode }),
    ...(call?.queuedReply ? { queuedReply: call.queuedReply } : {}),
    ...(c?.answeredBy ? { answeredBy: c.answeredBy } : {}),
    // askbridge's own field: the reason typed with Approve or Reject (the answer stays the label).
    ...(c?.reason ? { reason: c.reason } : {}),
    ...(c
      ? {
          card: {
            status: c.status,
            kind: c.kind,
            quorum: c.quorum,
            approvals: c.approvals,
            // Who holds a timed wait right now ("Take my time", an open form).
            holders: c.holders,
            ...(c.answeredAt === undefined ? {} : { answeredAt: c.answeredAt }),
            ...(c.closedReason ? { closedReason: c.closedReason } : {}),
            ...(c.route ? { route: c.route } : {}),
          },
        }
      : {}),
    posts: posts.map((p) => ({ platform: p.platform, destination: p.destKey, postedAt: p.createdAt })),
  }
}
