import { asUserQuestionError, type UserQuestionErrorCode } from '../protocol/errors.js'
import { isStorageError } from '../store/errors.js'

/** An HTTP-level problem (not a protocol error): bad JSON, oversize body, unknown route, auth. */
export class HttpError extends Error {
  override readonly name = 'HttpError' as const
  readonly status: number
  readonly code: string

  constructor(status: number, code: string, message: string) {
    super(message)
    this.status = status
    this.code = code
  }
}

/** The wire shape of every error response. */
export interface ErrorBody {
  error: { name: string; code: string; message: string }
}

/**
 * The HTTP status for each protocol code. ASK_ABORTED means the client went away: there is
 * nobody to send to, 499 is what gets logged.
 */
export const STATUS_OF_CODE: Record<UserQuestionErrorCode, number> = {
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

/** Map anything thrown to a status and a safe body. Unknown errors never leak their stack. */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof HttpError) {
    return {
      status: error.status,
      body: { error: { name: error.name, code: error.code, message: error.message } },
    }
  }
  if (isStorageError(error)) {
    // Not stored: the client may retry the same request once the storage recovers.
    return {
      status: 503,
      body: { error: { name: 'StorageError', code: error.code, message: error.message } },
    }
  }
  const uq = asUserQuestionError(error)
  if (uq) return { status: STATUS_OF_CODE[uq.code], body: { error: uq.toJSON() } }
  return {
    status: 500,
    body: { error: { name: 'HttpError', code: 'INTERNAL', message: 'internal error (see the server log)' } },
  }
}
