import { HttpError } from './errors.js'

/** Which guard a request passes: decided once, from the canonical path that also routes it. */
export type PathArea = 'health' | 'inbox' | 'api'

/** A request path parsed once: its canonical segments, the same for guard and router. */
export interface CanonicalPath {
  /** `/` followed by the segments joined with `/` (a trailing slash dropped). */
  pathname: string
  segments: readonly string[]
  area: PathArea
}

/** `%2F` (slash), `%5C` (backslash) and `%00` in a segment: a path that means two things. */
const ENCODED_SEPARATOR = /%(2f|5c|00)/i

function badPath(why: string): HttpError {
  return new HttpError('BAD_PATH', `the request path ${why}`)
}

/**
 * Parse the raw request target (`req.url`) into canonical segments. Refused with 400 BAD_PATH:
 * a target that is not an absolute path, a `.` or `..` segment (also percent-encoded), an empty
 * segment (`//`, except one trailing slash), an encoded slash, backslash or NUL, and a segment
 * that does not percent-decode. The segments stay as sent (not decoded): route parameters are
 * decoded by the router, once.
 */
export function canonicalPath(target: string): CanonicalPath {
  const raw = target.split('?', 1)[0]?.split('#', 1)[0] ?? ''
  if (!raw.startsWith('/')) throw badPath('must start with /')
  if (raw.includes('\\')) throw badPath('must not contain a backslash')
  const parts = raw.slice(1).split('/')
  // One trailing slash (`/inbox/`) names the same resource; `/` itself is the empty path.
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  for (const part of parts) {
    if (part === '') throw badPath('must not contain an empty segment (//)')
    if (ENCODED_SEPARATOR.test(part)) throw badPath('must not contain an encoded slash, backslash or NUL')
    let decoded: string
    try {
      decoded = decodeURIComponent(part)
    } catch {
      throw badPath('has a segment that is not valid percent-encoding')
    }
    if (decoded === '.' || decoded === '..') throw badPath('must not contain . or .. segments')
  }
  const first = parts[0]
  const area: PathArea =
    parts.length === 1 && first === 'healthz'
      ? 'health'
      : parts.length === 0 || first === 'inbox'
        ? 'inbox'
        : 'api'
  return { pathname: `/${parts.join('/')}`, segments: parts, area }
}
