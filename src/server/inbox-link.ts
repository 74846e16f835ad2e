import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type Logger, silentLogger } from '../log.js'
import { HttpError } from './errors.js'
import { parseCookies } from './signin.js'
import { sendTokenPage } from './token-page.js'

/** The inbox's own cookie without OpenID Connect sign-in. */
export const INBOX_COOKIE = 'askbridge_inbox'

/** Options of {@link InboxLinks}. */
export interface InboxLinksOptions {
  /** Called with each new sign-in link (`serve` prints it; it is never logged). */
  onLink?: (path: string) => void
  /** How many browsers may be signed in at once; the oldest session goes first. @default 100 */
  maxSessions?: number
  /** Mark the cookie `Secure` (the bridge's public URL is https). @default false */
  secureCookies?: boolean
  logger?: Logger
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The inbox's credential without sign-in, one the agents do not hold: a one-time sign-in link
 * (`/inbox?login=CODE`) that `serve` prints. Opening it sets an HttpOnly, SameSite=Strict cookie
 * holding a random session id; the link is then spent and the next one is issued (and printed).
 * Only SHA-256 digests of codes and session ids are kept, compared in constant time. The API token
 * and agent tokens are never accepted here.
 */
export class InboxLinks {
  private code: Buffer | undefined
  private readonly sessions: Buffer[] = []
  private readonly max: number
  private readonly log: Logger

  constructor(private readonly options: InboxLinksOptions = {}) {
    this.max = options.maxSessions ?? 100
    this.log = options.logger ?? silentLogger
  }

  /** A fresh one-time sign-in link (a path), replacing the previous unused one. */
  issue(): string {
    const code = randomBytes(24).toString('base64url')
    this.code = digest(code)
    return `/inbox?login=${code}`
  }

  /**
   * The inbox gate. Answers `?login=` itself (302 with the cookie, or 401) and refusals; true
   * when the request carries a live session and may go on.
   */
  handle(req: IncomingMessage, res: ServerResponse, url: URL, method: string): boolean {
    const login = url.searchParams.get('login')
    if (login !== null && method === 'GET') {
      if (!this.code || !sameDigest(digest(login), this.code)) {
        this.log.info('inbox sign-in link refused', { reason: 'unknown or already used' })
        if (wantsHtml(req)) sendTokenPage(res, true)
        else throw notSignedIn()
        return false
      }
      const session = randomBytes(32).toString('base64url')
      this.sessions.push(digest(session))
      if (this.sessions.length > this.max) this.sessions.shift()
      this.log.info('inbox signed in through the sign-in link')
      res.writeHead(302, {
        location: '/inbox',
        'set-cookie': `${INBOX_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Strict${this.options.secureCookies ? '; Secure' : ''}`,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      })
      res.end()
      // Spent: the next browser needs the next link.
      const next = this.issue()
      this.options.onLink?.(next)
      return false
    }
    if (this.signedIn(req)) return true
    if ((method === 'GET' || method === 'HEAD') && wantsHtml(req) && isPage(url)) {
      sendTokenPage(res, false)
      return false
    }
    throw notSignedIn()
  }

  private signedIn(req: IncomingMessage): boolean {
    const cookie = parseCookies(req.headers.cookie).get(INBOX_COOKIE)
    if (!cookie) return false
    const d = digest(cookie)
    let found = false
    // Every stored digest is compared, so the time taken does not say which one matched.
    for (const s of this.sessions) if (sameDigest(s, d)) found = true
    return found
  }
}

function notSignedIn(): HttpError {
  return new HttpError(
    'INBOX_SIGN_IN_REQUIRED',
    'open the inbox through the sign-in link `askbridge serve` printed (agent and API tokens are not accepted here)',
  )
}

function wantsHtml(req: IncomingMessage): boolean {
  return /\btext\/html\b/.test(req.headers.accept ?? '')
}

function isPage(url: URL): boolean {
  return url.pathname === '/' || url.pathname === '/inbox'
}
