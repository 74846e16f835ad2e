/** Requests that carry no credential must come from this very origin when they write. */
import type { IncomingMessage } from 'node:http'
import { HttpError } from '../errors.js'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** No Origin (curl, scripts, same-origin GETs) or an Origin naming this very host and port. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin
  if (origin === undefined) return req.headers['sec-fetch-site'] !== 'cross-site'
  try {
    const o = new URL(origin)
    return (
      (o.protocol === 'http:' || o.protocol === 'https:') &&
      o.host.toLowerCase() === (req.headers.host ?? '').toLowerCase()
    )
  } catch {
    // `Origin: null` (sandboxed frames, file: pages) and garbage.
    return false
  }
}

/**
 * Without a bearer token nothing in the request proves who sent it, so a web page on any other
 * origin could post here (a body-less or untyped POST needs no CORS preflight). Browsers always
 * send Origin on such requests: it must be us. Called by the inbox step (one-time links) and the
 * token step (loopback without a token).
 */
export function checkOrigin(req: IncomingMessage, method: string): void {
  if (!SAFE_METHODS.has(method) && !sameOrigin(req)) {
    throw new HttpError(
      'FORBIDDEN_ORIGIN',
      'requests from other web origins are refused (set ASKBRIDGE_API_TOKEN to use the API from a browser app)',
    )
  }
}
