import type { IncomingMessage, ServerResponse } from 'node:http'
import type { z } from 'zod'
import { HttpError } from './errors.js'

/** Bodies above this are refused with 413 BODY_TOO_LARGE: the API's, and both platforms' webhooks. */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * Read and parse a JSON body. Stops reading at `limit` (the socket is not drained further),
 * and rejects non-JSON content types, malformed JSON and non-object roots with 4xx HttpErrors.
 */
export async function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const type = req.headers['content-type']
  if (type !== undefined && !/^application\/(.+\+)?json\b/i.test(type)) {
    throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json')
  }
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    throw new HttpError('BODY_TOO_LARGE', `request body is over ${limit} bytes`)
  }
  const text = (await readRaw(req, limit)).toString('utf8')
  if (text.trim() === '') throw new HttpError('BAD_JSON', 'request body is empty; send a JSON object')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new HttpError('BAD_JSON', `request body is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError('BAD_JSON', 'request body must be a JSON object')
  }
  return value
}

/**
 * Read a body's exact bytes (the signed platform webhooks verify them as received), at most
 * `limit`: past it, a 413 BODY_TOO_LARGE HttpError, and a failed or aborted request is a 400;
 * {@link readFailure} gives the HttpError of any rejection. Plain 'data' events, not an async
 * iterator: this runs for every click.
 */
export function readRaw(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (error?: Error) => {
      if (done) return
      done = true
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('aborted', onAborted)
      if (error) reject(error)
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks))
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        // Stop buffering; the response closes the connection.
        req.pause()
        finish(new HttpError('BODY_TOO_LARGE', `request body is over ${limit} bytes`))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish()
    const onError = (e: Error) => finish(new HttpError('BAD_REQUEST', `request failed: ${e.message}`))
    const onAborted = () => finish(new HttpError('BAD_REQUEST', 'request aborted'))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('aborted', onAborted)
  })
}

/** What a body that could not be read is answered with: readRaw's HttpError, else a 400. */
export function readFailure(error: unknown): HttpError {
  return error instanceof HttpError ? error : new HttpError('BAD_REQUEST', 'the request could not be read')
}

/** Validate a parsed JSON body with zod; every problem is named in one 400 BAD_REQUEST. */
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
  throw new HttpError('BAD_REQUEST', problems.join('; '))
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
