import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { z } from 'zod'
import { auditSafely, shownOf } from '../answerer/interactions.js'
import { CALL_ID_PATTERN } from '../card/codec.js'
import type { CardState, Person } from '../card/types.js'
import { DEFAULT_MAX_WAITING_ASKS } from '../config/env.js'
import type { Logger } from '../log.js'
import { asUserQuestionError, UserQuestionError } from '../protocol/errors.js'
import type { TimedUserQuestionResult } from '../protocol/types.js'
import type { ResponderPolicy } from '../routing/policy.js'
import type { UserQuestionService } from '../service/service.js'
import type { CallKey, Store } from '../store/types.js'
import { parseBody, readJson, sendJson } from './body.js'
import { agentOf, type Caller, listedAgent, requireAgent, requireScope } from './credentials.js'
import { errorResponse, HttpError } from './errors.js'
import type { Metrics } from './metrics.js'
import { openApiDocument } from './openapi.js'
import { agentParam, encodeCursor, optionalAgent, pageParams, resolveCall } from './query.js'
import { replies } from './replies.js'
import type { RouteContext, Router } from './router.js'

const idSchema = z.string().regex(CALL_ID_PATTERN, 'must be 1-64 characters of A-Z a-z 0-9 _ . : -')

const askBodySchema = z.strictObject({
  questions: z.unknown(),
  agentId: idSchema.optional(),
  callId: idSchema.optional(),
  timeoutMs: z.unknown().optional(),
  route: z.string().min(1).max(200).optional(),
})

const answerBodySchema = z.strictObject({
  answers: z.unknown(),
  agentId: idSchema.optional(),
})

/** What the v1 routes need. */
export interface ApiDeps {
  service: UserQuestionService
  store: Store
  logger: Logger
  metrics: Metrics
  /** SSE heartbeat interval. @default 15000 */
  heartbeatMs?: number
  /** True once shutdown began: new asks are refused. */
  closing: () => boolean
  /** Track a response that waits (blocking ask, long-poll, SSE) so shutdown can end it. */
  track: (res: ServerResponse, end: () => void) => () => void
  /** Asks that may wait at once; the excess gets 503 OVERLOADED. @default 5000 */
  maxWaitingAsks?: number
  /** Who may answer a card: API answers pass the same rules as clicks. */
  policy: ResponderPolicy
}

/** Seconds an overloaded client is told to wait before asking again. */
const OVERLOADED_RETRY_AFTER_S = 1

/** Register the `/v1` HTTP API (see docs/http-api.md) on a router. */
export function addApiRoutes(router: Router, deps: ApiDeps): void {
  const { service, store } = deps
  const asks = deps.metrics.counter('askbridge_asks_total', 'Questions asked over the HTTP API, by mode.')
  const results = deps.metrics.counter(
    'askbridge_ask_results_total',
    'How HTTP asks ended: answered, pending or an error code.',
  )

  /** The call a route names, when the caller may act for its agent (403 otherwise). */
  const ownCall = async (caller: Caller, callId: string, named: string | undefined): Promise<CallKey> => {
    const mine = named === undefined && !caller.scopes.has('admin') && !caller.agent.includes('*')
    const key = await resolveCall(service, callId, mine ? caller.agent : named)
    requireAgent(caller, key.agentId)
    return key
  }

  const maxWaiting = deps.maxWaitingAsks ?? DEFAULT_MAX_WAITING_ASKS
  let waitingAsks = 0

  router.add('POST', '/v1/ask', async ({ req, res, caller: who }) => {
    const caller = callerOf(who)
    requireScope(caller, 'ask')
    if (deps.closing()) throw new HttpError('SHUTTING_DOWN', 'the bridge is shutting down; ask again shortly')
    const body = parseBody(askBodySchema, await readJson(req))
    // Admission: every ask waits on its connection; past the limit the excess is told so with a
    // code (the question is not stored: ask again later), never left hanging or dropped.
    if (waitingAsks >= maxWaiting) {
      results({ result: 'OVERLOADED' })
      const refusal = errorResponse(
        new HttpError(
          'OVERLOADED',
          `${maxWaiting} asks are already waiting (ASKBRIDGE_MAX_WAITING_ASKS); this one was not taken, ask again shortly`,
        ),
      )
      sendJson(res, refusal.status, refusal.body, { 'retry-after': String(OVERLOADED_RETRY_AFTER_S) })
      return
    }
    waitingAsks++
    try {
      await waitForAsk(body, res, caller)
    } finally {
      waitingAsks--
    }
  })

  const waitForAsk = async (
    body: z.infer<typeof askBodySchema>,
    res: ServerResponse,
    caller: Caller,
  ): Promise<void> => {
    if (!Array.isArray(body.questions)) {
      throw new UserQuestionError('BAD_QUESTION', 'questions must be an array of question objects')
    }
    if (body.timeoutMs !== undefined && typeof body.timeoutMs !== 'number') {
      throw new UserQuestionError('BAD_TIMEOUT', 'timeoutMs must be a whole number of milliseconds')
    }
    // The agent is the token's: a body naming another agent is refused (403 FORBIDDEN_AGENT).
    const agentId = agentOf(caller, body.agentId, 'default')
    const callId = body.callId ?? `call-${randomUUID()}`
    const timed = body.timeoutMs !== undefined
    asks({ mode: timed ? 'timed' : 'blocking' })

    // Re-attach: the same agent and call while it is in flight waits on the same card.
    const reattached = service.inflight(agentId, callId)
    const agent = service.agents.ensure(agentId, caller.requester)
    const request = {
      questions: body.questions,
      agent,
      ...(body.route === undefined ? {} : { route: body.route }),
    }
    const work: Promise<TimedUserQuestionResult> =
      reattached ??
      (timed
        ? service.askTimed(request, callId, body.timeoutMs as number)
        : service.ask({ ...request, wait: { callId } }))
    // The HTTP client may leave; the question stays (its callId re-attaches later). No signal is
    // passed to the service for that reason.
    let ended = false
    const untrack = deps.track(res, () => {
      ended = true
      const restarting = errorResponse(
        new HttpError(
          'SHUTTING_DOWN',
          `the bridge is restarting; ask again with callId "${callId}" to re-attach`,
        ),
      )
      sendJson(res, restarting.status, restarting.body)
    })
    try {
      const result = await work
      results({ result: 'pending' in result ? 'pending' : 'answered' })
      if (ended || res.destroyed) return
      sendJson(
        res,
        200,
        'pending' in result ? { pending: true, callId } : { answers: result.answers, callId },
      )
    } catch (error) {
      const code = (error as { code?: unknown }).code
      results({ result: typeof code === 'string' ? code : 'error' })
      if (ended || res.destroyed) return
      throw error
    } finally {
      untrack()
    }
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
    const { callId } = key
    const [call, card, posts] = await Promise.all([
      service.getCall(key),
      store.getCard<CardState>(key),
      store.listPosts(key),
    ])
    if (!call && !card) throw notFound(key)
    const c = card?.state
    sendJson(res, 200, {
      callId,
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
    })
  })

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
    const shown = card ? await shownOf(store, card) : undefined
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
    // A token that may not answer, or not for this agent: refused, and audited when a card exists.
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

  router.add('GET', '/v1/agents/:agentId/replies', (ctx) => {
    requireAgent(callerOf(ctx.caller), ctx.params.agentId ?? '')
    return replies(ctx, deps)
  })

  router.add('POST', '/v1/agents/:agentId/replies/:callId/admit', async ({ params, res, caller }) => {
    const agentId = params.agentId ?? ''
    requireAgent(callerOf(caller), agentId)
    const callId = params.callId ?? ''
    if (!(await service.admitReply(agentId, callId))) throw noReply(agentId, callId)
    sendJson(res, 200, { admitted: true, callId })
  })

  router.add('DELETE', '/v1/agents/:agentId/replies/:callId', async ({ params, res, caller }) => {
    const agentId = params.agentId ?? ''
    requireAgent(callerOf(caller), agentId)
    const callId = params.callId ?? ''
    if (!(await service.discardReply(agentId, callId))) throw noReply(agentId, callId)
    sendJson(res, 200, { discarded: true, callId })
  })

  router.add('GET', '/v1/openapi.json', ({ res }) =>
    sendJson(res, 200, openApiDocument({ ask: askBodySchema, answer: answerBodySchema })),
  )

  router.add('GET', '/v1/audit', async ({ url, res, caller: who }) => {
    const caller = callerOf(who)
    const callId = url.searchParams.get('callId') ?? undefined
    const named = agentParam(url)
    // The whole audit is the admin's; an agent's token reads its own calls' entries.
    const agentId = listedAgent(caller, named)
    const sinceText = url.searchParams.get('since')
    let since: number | undefined
    if (sinceText !== null) {
      since = /^\d+$/.test(sinceText) ? Number(sinceText) : Date.parse(sinceText)
      if (!Number.isFinite(since)) {
        throw new HttpError('BAD_REQUEST', 'since must be epoch milliseconds or an ISO date')
      }
    }
    const events = await store.listAudit({
      ...(callId === undefined ? {} : { callId }),
      ...(agentId === undefined ? {} : { agentId }),
      ...(since === undefined ? {} : { since }),
    })
    sendJson(res, 200, { events })
  })
}

/** The caller of a `/v1` route (the server always sets it there). */
export function callerOf(caller: RouteContext['caller']): Caller {
  if (!caller) throw new HttpError('UNAUTHORIZED', 'this route needs a bearer token')
  return caller
}

function notFound(key: CallKey): HttpError {
  return new HttpError('NOT_FOUND', `no question with callId "${key.callId}" for agent "${key.agentId}"`)
}

function noReply(agentId: string, callId: string): HttpError {
  return new HttpError('NOT_FOUND', `no queued reply for agent "${agentId}" and call "${callId}"`)
}
