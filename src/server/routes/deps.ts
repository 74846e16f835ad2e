/**
 * What every `/v1` route file needs, in one module below them all: the route files (and the
 * replies stream) import it, never each other.
 */
import type { ServerResponse } from 'node:http'
import type { Logger } from '../../log.js'
import type { ResponderPolicy } from '../../routing/policy.js'
import type { UserQuestionService } from '../../service/service.js'
import type { CallKey, Store } from '../../store/types.js'
import type { Caller } from '../credentials.js'
import { HttpError } from '../errors.js'
import type { Metrics } from '../metrics.js'
import type { RouteContext } from '../router.js'

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

/** The caller of a `/v1` route (the server always sets it there). */
export function callerOf(caller: RouteContext['caller']): Caller {
  if (!caller) throw new HttpError('UNAUTHORIZED', 'this route needs a bearer token')
  return caller
}

/** 404 for a call that does not exist. */
export function notFound(key: CallKey): HttpError {
  return new HttpError('NOT_FOUND', `no question with callId "${key.callId}" for agent "${key.agentId}"`)
}
