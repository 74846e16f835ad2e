import { HttpError } from '../errors.js'
import type { HookErrorCode } from '../hooks/errors.js'
import { asUserQuestionError, type UserQuestionErrorCode } from '../protocol/errors.js'
import { isStorageError, type STORAGE_UNAVAILABLE } from '../store/errors.js'

export { HttpError }

/** The wire shape of every error response. */
export interface ErrorBody {
  error: { name: string; code: string; message: string }
}

/**
 * The HTTP status for each protocol code. ASK_ABORTED means the client went away: there is
 * nobody to send to, 499 is what gets logged.
 */
const PROTOCOL_STATUS: Record<UserQuestionErrorCode, number> = {
  BAD_QUESTION: 400,
  EMPTY_QUESTIONS: 400,
  BAD_INTENT: 400,
  BAD_TIMEOUT: 400,
  BAD_ANSWER: 400,
  CALLER_NOT_LIVE: 403,
  DELEGATED_CALLER: 403,
  DUPLICATE_WAIT: 409,
  REPLY_QUEUED: 409,
  ASK_CANCELLED: 410,
  ASK_ABORTED: 499,
  ASK_TIMED_OUT: 504,
  NO_PROVIDER: 503,
  PROVIDER_ERROR: 502,
}

/** A hook request that cannot become a card (its HookError travels as an HttpError). */
const HOOK_STATUS: Record<HookErrorCode, number> = {
  UNSUPPORTED_HOOK: 400,
  UNSUPPORTED_SCHEMA: 400,
  BAD_HOOK: 400,
  BAD_TOOL_INPUT: 400,
  BAD_ANSWER: 400,
}

/** Not stored: the client may retry the same request once the storage recovers. */
const STORAGE_STATUS: Record<typeof STORAGE_UNAVAILABLE, number> = { STORAGE_UNAVAILABLE: 503 }

/** The HTTP API's own codes (HttpError), the inbox's and the platform webhooks' included. */
const HTTP_STATUS = {
  // The request itself.
  BAD_REQUEST: 400,
  BAD_JSON: 400,
  BAD_PATH: 400,
  BAD_HOLD: 400,
  BAD_ACTION: 400,
  BAD_BODY: 400,
  BAD_PAYLOAD: 400,
  BAD_INTERACTION: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  // Who asks.
  UNAUTHORIZED: 401,
  SIGN_IN_REQUIRED: 401,
  INBOX_SIGN_IN_REQUIRED: 401,
  FORBIDDEN_SCOPE: 403,
  FORBIDDEN_AGENT: 403,
  FORBIDDEN_ORIGIN: 403,
  FORBIDDEN_PEER: 403,
  FORBIDDEN_HOST: 403,
  FORWARDED_REFUSED: 403,
  CSRF: 403,
  NOT_ALLOWED: 403,
  // The question.
  AMBIGUOUS_CALL: 409,
  NOT_ANSWERABLE: 409,
  // The bridge.
  RATE_LIMITED: 429,
  TOO_MANY_CONNECTIONS: 429,
  TOO_MANY_STREAMS: 429,
  INTERNAL: 500,
  NOT_BUILT: 500,
  OVERLOADED: 503,
  SHUTTING_DOWN: 503,
  NOT_STARTED: 503,
} as const

/** Every code an error response may carry, and its status: the one place a status is decided. */
export const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  ...PROTOCOL_STATUS,
  ...HOOK_STATUS,
  ...STORAGE_STATUS,
  ...HTTP_STATUS,
}

const INTERNAL: ErrorBody = {
  error: { name: 'HttpError', code: 'INTERNAL', message: 'internal error (see the server log)' },
}

/**
 * Map anything thrown to a status and a safe body. The errors meant for the wire (HttpError, a
 * protocol error, a storage fault, or their `{name, code, message}` shapes from another copy of
 * this module) keep their body and take their status from {@link STATUS_OF_CODE}; anything else,
 * or a code the table does not know, is a 500 INTERNAL that leaks neither message nor stack.
 */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  const wire = wireError(error)
  const status = wire && Object.hasOwn(STATUS_OF_CODE, wire.code) ? STATUS_OF_CODE[wire.code] : undefined
  if (!wire || status === undefined) return { status: 500, body: INTERNAL }
  return { status, body: { error: wire } }
}

function wireError(error: unknown): ErrorBody['error'] | undefined {
  if (error instanceof HttpError) return error.toJSON()
  if (isStorageError(error)) return { name: 'StorageError', code: error.code, message: error.message }
  return asUserQuestionError(error)?.toJSON()
}
