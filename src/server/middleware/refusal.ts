/** A request that threw: logged by kind, answered as `{error: {name, code, message}}`. */
import type { ServerResponse } from 'node:http'
import { HttpError } from '../../errors.js'
import type { Logger } from '../../log.js'
import { isStorageError } from '../../store/errors.js'
import { sendJson } from '../body.js'
import { errorResponse } from '../errors.js'

/** Answer the error a request's handling threw (or end the response when it already began). */
export function answerError(res: ServerResponse, error: unknown, route: string, log: Logger): void {
  const { status, body } = errorResponse(error)
  if (isStorageError(error)) {
    log.warn('storage unavailable', { route, status, fault: error.fault, message: error.message })
  } else if (status >= 500 && status !== 503) log.error('request failed', { route, error })
  else log.info('request refused', { route, status, code: body.error.code })
  if (res.headersSent || res.destroyed) {
    res.end()
    return
  }
  // A body we stopped reading: close the connection rather than drain a huge upload.
  const headers: Record<string, string> = status === 413 ? { connection: 'close' } : {}
  if (error instanceof HttpError && error.allow) headers.allow = error.allow.join(', ')
  if (error instanceof HttpError && error.retryAfter !== undefined)
    headers['retry-after'] = String(error.retryAfter)
  sendJson(res, status, body, headers)
}
