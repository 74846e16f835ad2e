import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { z } from 'zod'
import { CALL_ID_PATTERN } from '../card/codec.js'
import type { CardState } from '../card/types.js'
import type { Logger } from '../log.js'
import { UserQuestionError } from '../protocol/errors.js'
import type { LateReply, TimedUserQuestionResult } from '../protocol/types.js'
import type { QueuedReply, UserQuestionService } from '../service/service.js'
import type { CallKey, Store } from '../store/types.js'
import { readJson } from './body.js'
import { HttpError } from './errors.js'
import type { Metrics } from './metrics.js'
import type { RouteContext, Router } from './router.js'
import { openSse, wantsEventStream } from './sse.js'

/** Long-polls and SSE never hold a reply request longer than this. */
export const MAX_REPLY_WAIT_SECONDS = 60

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
}

/** Register the `/v1` HTTP API (see ARCHITECTURE.md) on a router. */
export function addApiRoutes(router: Router, deps: ApiDeps): void {
  const { service, store } = deps
  const asks = deps.metrics.counter('askbridge_asks_total', 'Questions asked over the HTTP API, by mode.')
  const results = deps.metrics.counter(
    'askbridge_ask_results_total',
    'How HTTP asks ended: answered, pending or an error code.',
  )

  router.add('POST', '/v1/ask', async ({ req, res }) => {
    if (deps.closing())
      throw new HttpError(503, 'SHUTTING_DOWN', 'the bridge is shutting down; ask again shortly')
    const body = parseBody(askBodySchema, await readJson(req))
    if (!Array.isArray(body.questions)) {
      throw new UserQuestionError('BAD_QUESTION', 'questions must be an array of question objects')
    }
    if (body.timeoutMs !== undefined && typeof body.timeoutMs !== 'number') {
      throw new UserQuestionError('BAD_TIMEOUT', 'timeoutMs must be a whole number of milliseconds')
    }
    const agentId = body.agentId ?? 'default'
    const callId = body.callId ?? `call-${randomUUID()}`
    const timed = body.timeoutMs !== undefined
    asks({ mode: timed ? 'timed' : 'blocking' })

    // Re-attach: the same agent and call while it is in flight waits on the same card.
    const reattached = service.inflight(agentId, callId)
    const agent = service.agents.ensure(agentId)
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
      sendJson(res, 503, {
        error: {
          name: 'HttpError',
          code: 'SHUTTING_DOWN',
          message: `the bridge is restarting; ask again with callId "${callId}" to re-attach`,
        },
      })
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
  })

  router.add('GET', '/v1/questions', async ({ url, res }) => {
    const { limit, afterSeq } = pageParams(url)
    const page = await service.projectionPage({
      limit,
      ...(afterSeq === undefined ? {} : { afterSeq }),
      ...optionalAgent(agentParam(url)),
    })
    sendJson(res, 200, {
      ...page.view,
      ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }),
    })
  })

  router.add('GET', '/v1/questions/:callId', async ({ params, url, res }) => {
    const key = await resolveCall(service, params.callId ?? '', agentParam(url))
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

  router.add('POST', '/v1/questions/:callId/answer', async ({ req, params, url, res }) => {
    const body = parseBody(answerBodySchema, await readJson(req))
    const named = agentParam(url)
    if (body.agentId !== undefined && named !== undefined && body.agentId !== named) {
      throw new HttpError(400, 'BAD_REQUEST', 'agentId in the query and in the body differ')
    }
    const key = await resolveCall(service, params.callId ?? '', body.agentId ?? named)
    const accepted = await service.answer(key.agentId, key.callId, { answers: body.answers })
    sendJson(res, 200, { accepted })
  })

  router.add('DELETE', '/v1/questions/:callId', async ({ params, url, res }) => {
    const key = await resolveCall(service, params.callId ?? '', agentParam(url))
    const [call, card] = await Promise.all([service.getCall(key), store.getCard(key)])
    if (!call && !card && !service.inflight(key.agentId, key.callId)) throw notFound(key)
    const cancelled = await service.cancel(key, 'cancelled through the API')
    if (!cancelled) {
      throw new HttpError(409, 'NOT_ANSWERABLE', `question "${key.callId}" is already finished`)
    }
    sendJson(res, 200, { cancelled: true, callId: key.callId, agentId: key.agentId })
  })

  router.add('GET', '/v1/agents/:agentId/replies', (ctx) => replies(ctx, deps))

  router.add('POST', '/v1/agents/:agentId/replies/:callId/admit', async ({ params, res }) => {
    const agentId = params.agentId ?? ''
    const callId = params.callId ?? ''
    if (!(await service.admitReply(agentId, callId))) throw noReply(agentId, callId)
    sendJson(res, 200, { admitted: true, callId })
  })

  router.add('DELETE', '/v1/agents/:agentId/replies/:callId', async ({ params, res }) => {
    const agentId = params.agentId ?? ''
    const callId = params.callId ?? ''
    if (!(await service.discardReply(agentId, callId))) throw noReply(agentId, callId)
    sendJson(res, 200, { discarded: true, callId })
  })

  router.add('GET', '/v1/audit', async ({ url, res }) => {
    const callId = url.searchParams.get('callId') ?? undefined
    const agentId = agentParam(url)
    const sinceText = url.searchParams.get('since')
    let since: number | undefined
    if (sinceText !== null) {
      since = /^\d+$/.test(sinceText) ? Number(sinceText) : Date.parse(sinceText)
      if (!Number.isFinite(since)) {
        throw new HttpError(400, 'BAD_REQUEST', 'since must be epoch milliseconds or an ISO date')
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

/** Late replies: SSE with `Accept: text/event-stream`, else JSON long-polled with `?wait=`. */
async function replies({ req, res, params, url }: RouteContext, deps: ApiDeps): Promise<void> {
  const { service } = deps
  const agentId = params.agentId ?? ''
  if (!CALL_ID_PATTERN.test(agentId)) throw new HttpError(400, 'BAD_REQUEST', 'agentId is malformed')
  const mine = (r: QueuedReply) => r.agentId === agentId

  if (wantsEventStream(req)) {
    const stream = openSse(req, res, { heartbeatMs: deps.heartbeatMs ?? 15_000 })
    // Subscribe before reading the queue so nothing slips between; `sent` drops the overlap.
    const sent = new Set<string>()
    const send = (reply: LateReply) => {
      if (sent.has(reply.payload.callId)) return
      sent.add(reply.payload.callId)
      stream.send('reply', reply, reply.payload.callId)
    }
    const onReply = (r: QueuedReply) => {
      if (mine(r)) send(r.reply)
    }
    // A discarded reply may be answered again; that new reply must be sent too.
    const onGone = (r: { agentId: string; callId: string }) => {
      if (r.agentId === agentId) sent.delete(r.callId)
    }
    service.on('reply', onReply)
    service.on('replyDiscarded', onGone)
    service.on('replyAdmitted', onGone)
    const untrack = deps.track(res, () => stream.close())
    void stream.done.then(() => {
      service.off('reply', onReply)
      service.off('replyDiscarded', onGone)
      service.off('replyAdmitted', onGone)
      untrack()
    })
    for (const r of await service.replies(agentId)) send(r.reply)
    return
  }

  const waitText = url.searchParams.get('wait')
  let wait = 0
  if (waitText !== null) {
    wait = Number(waitText)
    if (!Number.isFinite(wait) || wait < 0) {
      throw new HttpError(400, 'BAD_REQUEST', 'wait must be a number of seconds (0-60)')
    }
    wait = Math.min(wait, MAX_REPLY_WAIT_SECONDS)
  }
  const current = async () => (await service.replies(agentId)).map((r) => r.reply)
  let list = await current()
  if (list.length === 0 && wait > 0) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        service.off('reply', onReply)
        req.off('close', done)
        untrack()
        resolve()
      }
      const onReply = (r: QueuedReply) => {
        if (mine(r)) done()
      }
      const timer = setTimeout(done, wait * 1000)
      service.on('reply', onReply)
      req.on('close', done)
      const untrack = deps.track(res, done)
    })
    if (res.destroyed) return
    list = await current()
  }
  sendJson(res, 200, { replies: list })
}

export function parseBody<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const problems = parsed.error.issues.map((i) => {
    const path = i.path.length ? i.path.map(String).join('.') : '(body)'
    if (i.code === 'unrecognized_keys') return `unknown field(s): ${i.keys.join(', ')}`
    // z.unknown() reports a missing required field as "expected nonoptional".
    if (i.code === 'invalid_type' && i.expected === 'nonoptional') return `${path} is required`
    return `${path}: ${i.message}`
  })
  throw new HttpError(400, 'BAD_REQUEST', problems.join('; '))
}

/** The `?agentId=` query parameter, validated like every id (undefined when absent). */
/** How many settled calls `GET /v1/questions` returns without `?limit=`, and at most. */
export const DEFAULT_PAGE = 100
export const MAX_PAGE = 1000

const limitSchema = z.coerce.number().int().min(1).max(MAX_PAGE)
const cursorSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,40}$/)
  .transform((c) => /^s(\d{1,15})$/.exec(Buffer.from(c, 'base64url').toString('utf8'))?.[1])
  .pipe(z.string())
  .transform(Number)

/** An opaque cursor for the settled list: where the next page starts. */
function encodeCursor(settledSeq: number): string {
  return Buffer.from(`s${settledSeq}`, 'utf8').toString('base64url')
}

/** `?limit=` (1-1000, default 100) and `?cursor=` (from the previous page's `nextCursor`). */
function pageParams(url: URL): { limit: number; afterSeq?: number } {
  const rawLimit = url.searchParams.get('limit')
  const limit =
    rawLimit === null ? { success: true as const, data: DEFAULT_PAGE } : limitSchema.safeParse(rawLimit)
  if (!limit.success)
    throw new HttpError(400, 'BAD_REQUEST', `limit must be a whole number from 1 to ${MAX_PAGE}`)
  const rawCursor = url.searchParams.get('cursor')
  if (rawCursor === null) return { limit: limit.data }
  const cursor = cursorSchema.safeParse(rawCursor)
  if (!cursor.success)
    throw new HttpError(400, 'BAD_REQUEST', 'cursor is not one this server gave out (use nextCursor as is)')
  return { limit: limit.data, afterSeq: cursor.data }
}

function optionalAgent(agentId: string | undefined): { agentId?: string } {
  return agentId === undefined ? {} : { agentId }
}

function agentParam(url: URL): string | undefined {
  const agentId = url.searchParams.get('agentId')
  if (agentId === null) return undefined
  if (!CALL_ID_PATTERN.test(agentId)) {
    throw new HttpError(400, 'BAD_REQUEST', 'agentId must be 1-64 characters of A-Z a-z 0-9 _ . : -')
  }
  return agentId
}

/**
 * The call a route names. callIds are unique per agent only: with an agent named, that agent's
 * call; without, the one agent's call with this callId (the `default` agent when there is none),
 * and 409 AMBIGUOUS_CALL when several agents have one. Never picks one silently.
 */
export async function resolveCall(
  service: Pick<UserQuestionService, 'callsNamed'>,
  callId: string,
  agentId: string | undefined,
): Promise<CallKey> {
  if (agentId !== undefined) return { agentId, callId }
  const found = await service.callsNamed(callId)
  if (found.length > 1) {
    const agents = found.map((c) => `"${c.agentId}"`).join(', ')
    throw new HttpError(
      409,
      'AMBIGUOUS_CALL',
      `callId "${callId}" names calls of several agents (${agents}); say which with agentId`,
    )
  }
  return found[0] ?? { agentId: 'default', callId }
}

function notFound(key: CallKey): HttpError {
  return new HttpError(404, 'NOT_FOUND', `no question with callId "${key.callId}" for agent "${key.agentId}"`)
}

function noReply(agentId: string, callId: string): HttpError {
  return new HttpError(404, 'NOT_FOUND', `no queued reply for agent "${agentId}" and call "${callId}"`)
}

/** Write a JSON response (no-op when the client is gone). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return
  const json = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'cache-control': 'no-store',
    ...headers,
  })
  res.end(json)
}
