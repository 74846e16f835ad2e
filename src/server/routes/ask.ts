/** `POST /v1/ask`: ask questions and wait on the connection, until answered or for `timeoutMs`. */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { z } from 'zod'
import { CALL_ID_PATTERN } from '../../card/codec.js'
import { DEFAULT_MAX_WAITING_ASKS } from '../../config/env.js'
import { UserQuestionError } from '../../protocol/errors.js'
import type { TimedUserQuestionResult } from '../../protocol/types.js'
import { parseBody, readJson, sendJson } from '../body.js'
import { agentOf, type Caller, requireScope } from '../credentials.js'
import { errorResponse, HttpError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { RouteContext, Router } from '../router.js'
import { type ApiDeps, callerOf } from './deps.js'

export const idSchema = z.string().regex(CALL_ID_PATTERN, 'must be 1-64 characters of A-Z a-z 0-9 _ . : -')

export const askBodySchema = z.strictObject({
  questions: z.unknown(),
  agentId: idSchema.optional(),
  callId: idSchema.optional(),
  timeoutMs: z.unknown().optional(),
  route: z.string().min(1).max(200).optional(),
})

type AskBody = z.infer<typeof askBodySchema>
type Counter = ReturnType<Metrics['counter']>

/** Seconds an overloaded client is told to wait before asking again. */
const OVERLOADED_RETRY_AFTER_S = 1

/** One ask under way: the call it waits on, and the service's promise of its result. */
interface Asked {
  callId: string
  work: Promise<TimedUserQuestionResult>
}

/** Register `POST /v1/ask`: authorize → parse → admit → ask → respond. */
export function addAskRoutes(router: Router, deps: ApiDeps): void {
  const asks = deps.metrics.counter('askbridge_asks_total', 'Questions asked over the HTTP API, by mode.')
  const results = deps.metrics.counter(
    'askbridge_ask_results_total',
    'How HTTP asks ended: answered, pending or an error code.',
  )
  const maxWaiting = deps.maxWaitingAsks ?? DEFAULT_MAX_WAITING_ASKS
  let waitingAsks = 0

  router.add('POST', '/v1/ask', async ({ req, res, caller: who }) => {
    const caller = authorize(who, deps)
    const body = await parse(req)
    // Admission: every ask waits on its connection; past the limit the excess is told so with a
    // code (the question is not stored: ask again later), never left hanging or dropped.
    if (waitingAsks >= maxWaiting) {
      results({ result: 'OVERLOADED' })
      throw new HttpError(
        'OVERLOADED',
        `${maxWaiting} asks are already waiting (ASKBRIDGE_MAX_WAITING_ASKS); this one was not taken, ask again shortly`,
        { retryAfter: OVERLOADED_RETRY_AFTER_S },
      )
    }
    waitingAsks++
    try {
      const asked = ask(body, caller, deps, asks)
      await respond(asked, res, deps, results)
    } finally {
      waitingAsks--
    }
  })
}

/** The caller may ask, and the bridge still takes asks. */
function authorize(who: RouteContext['caller'], deps: ApiDeps): Caller {
  const caller = callerOf(who)
  requireScope(caller, 'ask')
  if (deps.closing()) throw new HttpError('SHUTTING_DOWN', 'the bridge is shutting down; ask again shortly')
  return caller
}

async function parse(req: IncomingMessage): Promise<AskBody> {
  return parseBody(askBodySchema, await readJson(req))
}

/** Hand the ask to the service, or re-attach to the same call in flight. */
function ask(body: AskBody, caller: Caller, deps: ApiDeps, asks: Counter): Asked {
  const { service } = deps
  if (!Array.isArray(body.questions)) {
    throw new UserQuestionError('BAD_QUESTION', 'questions must be an array of question objects')
  }
  if (body.timeoutMs !== undefined && typeof body.timeoutMs !== 'number') {
    throw new UserQuestionError('BAD_TIMEOUT', 'timeoutMs must be a whole number of milliseconds')
  }
  // The agent is the token's: a body naming another agent is refused (403 FORBIDDEN_AGENT).
  const agentId = agentOf(caller, body.agentId, 'default')
  const callId = body.callId ?? `call-${randomUUID()}`
  asks({ mode: body.timeoutMs !== undefined ? 'timed' : 'blocking' })
  // Re-attach: the same agent and call while it is in flight waits on the same card.
  const reattached = service.inflight(agentId, callId)
  const agent = service.agents.ensure(agentId, caller.requester)
  const request = {
    questions: body.questions,
    agent,
    ...(body.route === undefined ? {} : { route: body.route }),
  }
  const work =
    reattached ??
    (body.timeoutMs !== undefined
      ? service.askTimed(request, callId, body.timeoutMs as number)
      : service.ask({ ...request, wait: { callId } }))
  return { callId, work }
}

/** Wait for the result and answer it; a restart ends the wait with 503 SHUTTING_DOWN. */
async function respond(
  { callId, work }: Asked,
  res: ServerResponse,
  deps: ApiDeps,
  results: Counter,
): Promise<void> {
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
    sendJson(res, 200, 'pending' in result ? { pending: true, callId } : { answers: result.answers, callId })
  } catch (error) {
    const code = (error as { code?: unknown }).code
    results({ result: typeof code === 'string' ? code : 'error' })
    if (ended || res.destroyed) return
    throw error
  } finally {
    untrack()
  }
}
