/**
 * The base of every error askbridge throws, and the HTTP API's own error. This module imports
 * nothing, so every layer (the protocol, the store, the server, the CLI, the adapters through
 * `src/adapter-kit.ts`) can build on it.
 *
 * An askbridge error has a stable `name` (its class) and a stable `code` (what went wrong, for
 * programs: logs, exit codes, the HTTP status `errorResponse` in src/server/errors.ts picks from
 * its one table), a message for people, and an optional `cause`. `toJSON()` gives the wire shape
 * `{name, code, message}` and never the stack or the cause.
 */
export abstract class AskbridgeError extends Error {
  abstract override readonly name: string
  abstract readonly code: string

  toJSON(): { name: string; code: string; message: string } {
    return { name: this.name, code: this.code, message: this.message }
  }
}

/** Options of {@link HttpError}. */
export interface HttpErrorOptions {
  cause?: unknown
  /**
   * The status a response carried, when a client saw this error (BridgeClient). A server never
   * sets it: the status it answers with comes from the code (`errorResponse`).
   */
  status?: number
  /** Seconds a client should wait before it tries again: the response's `Retry-After`. */
  retryAfter?: number
  /** The methods the path takes, for a 405: the response's `Allow`. */
  allow?: readonly string[]
}

/**
 * A problem of the HTTP API that is not a protocol error: bad JSON, an oversize body, an unknown
 * route, auth, overload. The server throws it with a code (the status comes from the code); the
 * client (`BridgeClient`) throws it for a non-protocol error response, with the status it got, or
 * without one when no response came (BAD_URL, UNREACHABLE).
 */
export class HttpError extends AskbridgeError {
  override readonly name = 'HttpError' as const
  readonly code: string
  readonly status: number | undefined
  readonly retryAfter: number | undefined
  readonly allow: readonly string[] | undefined

  constructor(code: string, message: string, options: HttpErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.status = options.status
    this.retryAfter = options.retryAfter
    this.allow = options.allow
  }
}
