import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type * as Oidc from 'openid-client'
import { z } from 'zod'
import { ConfigError } from '../config/env.js'
import { type Logger, silentLogger } from '../log.js'
import type { Store } from '../store/types.js'
import { HttpError } from './errors.js'
import type { SignedInUser } from './mounts.js'

export type { SignedInUser } from './mounts.js'

/** Options of {@link InboxSignIn.discover}. */
export interface InboxSignInOptions {
  /** ASKBRIDGE_OIDC_ISSUER */
  issuer: string
  /** ASKBRIDGE_OIDC_CLIENT_ID */
  clientId: string
  /** ASKBRIDGE_OIDC_CLIENT_SECRET; also the key sessions are signed with (through HKDF). */
  clientSecret: string
  /**
   * Where the provider sends people back (register it with the provider): ASKBRIDGE_OIDC_REDIRECT_URI,
   * else ASKBRIDGE_PUBLIC_URL + `/inbox/callback`. Never taken from a request's Host header.
   */
  redirectUri: string
  /** Cookies carry `Secure` (the public URL or the redirect URI is https). @default redirectUri is https */
  secureCookies?: boolean
  /** Where sessions live: signing out ends a session for every replica. */
  sessions: Pick<Store, 'putSession' | 'getSession' | 'deleteSession'>
  /** How long a session lasts. @default 8 hours */
  sessionTtlMs?: number
  now?: () => number
  logger?: Logger
  /** How long discovery may take at start. @default 10000 */
  timeoutMs?: number
}

const SESSION = 'askbridge_session'
const FLOW = 'askbridge_signin'
const FLOW_TTL_MS = 10 * 60_000
const SIGN_IN_ROUTES = new Set(['/inbox/login', '/inbox/callback', '/inbox/logout'])

const sessionSchema = z.strictObject({
  v: z.literal(1),
  /** The session's secret id; the store keeps only its digest. */
  sid: z.string().min(32).max(100),
  email: z.string().min(3).max(320),
  name: z.string().max(200),
  csrf: z.string().min(16).max(100),
  exp: z.number().int(),
})
const flowSchema = z.strictObject({
  v: z.literal(1),
  state: z.string().min(16).max(200),
  nonce: z.string().min(16).max(200),
  verifier: z.string().min(43).max(200),
  redirect: z.string().max(2000),
  exp: z.number().int(),
})
const cookieName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * Cookies of a request as name -> value. A minimal parse that never throws: malformed pairs and
 * values that fail percent-decoding are skipped; the first of a repeated name wins.
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    let value = part.slice(eq + 1).trim()
    if (!cookieName.test(name) || out.has(name)) continue
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1)
    try {
      out.set(name, decodeURIComponent(value))
    } catch {
      // Not percent-decodable: not a cookie we wrote.
    }
  }
  return out
}

/**
 * Inbox sign-in through OpenID Connect: the authorization code flow with PKCE (S256), state and
 * nonce, through openid-client, against any standard provider (Sign in with Slack, Google, Okta,
 * Keycloak). A session is a row in the store (so signing out holds on every replica) named by an
 * HMAC-signed, HttpOnly, SameSite=Lax cookie with an expiry; every write under /inbox must carry
 * the session's CSRF token.
 */
export class InboxSignIn {
  private readonly key: Buffer
  private readonly ttlMs: number
  private readonly now: () => number
  private readonly log: Logger

  private constructor(
    private readonly oidc: typeof Oidc,
    private readonly config: Oidc.Configuration,
    private readonly options: InboxSignInOptions,
  ) {
    this.key = Buffer.from(
      hkdfSync('sha256', options.clientSecret, 'askbridge', 'inbox session cookies v1', 32),
    )
    this.ttlMs = options.sessionTtlMs ?? 8 * 3_600_000
    this.now = options.now ?? Date.now
    this.log = options.logger ?? silentLogger
  }

  /**
   * Discover the provider (`/.well-known/openid-configuration`). A provider that cannot be reached
   * or answers nonsense is a ConfigError naming ASKBRIDGE_OIDC_ISSUER.
   */
  static async discover(options: InboxSignInOptions): Promise<InboxSignIn> {
    let issuer: URL
    try {
      issuer = new URL(options.issuer)
    } catch {
      throw new ConfigError(['ASKBRIDGE_OIDC_ISSUER must be the provider’s https URL'])
    }
    // Plain http only for a provider on this machine (a local Keycloak, the tests).
    const local = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(issuer.hostname)
    // Loaded only when sign-in is set up: openid-client and jose are about 8 MiB of RSS.
    const oidc = await import('openid-client')
    try {
      const config = await oidc.discovery(
        issuer,
        options.clientId,
        { client_secret: options.clientSecret },
        oidc.ClientSecretPost(options.clientSecret),
        {
          timeout: Math.ceil((options.timeoutMs ?? 10_000) / 1000),
          ...(issuer.protocol === 'http:' && local ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      )
      return new InboxSignIn(oidc, config, options)
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error)
      throw new ConfigError([
        `ASKBRIDGE_OIDC_ISSUER: cannot use the OpenID Connect provider at ${issuer.origin}${issuer.pathname.replace(/\/$/, '')} (${why})`,
      ])
    }
  }

  /**
   * Gate a request under /inbox: answers the sign-in routes and refusals itself (returns
   * undefined), or returns the signed-in person for the inbox to serve.
   */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<SignedInUser | undefined> {
    const method = req.method ?? 'GET'
    if (url.pathname === '/inbox/login' && method === 'GET') return this.start(res)
    if (url.pathname === '/inbox/callback' && method === 'GET') return this.callback(req, res, url)
    const user = await this.session(req)
    if (url.pathname === '/inbox/logout' && method === 'POST') {
      if (user) {
        this.checkCsrf(req, user)
        // Ended on the server: the cookie, replayed later or elsewhere, no longer signs anyone in.
        await this.options.sessions.deleteSession(user.id)
        this.log.info('inbox sign-out', { email: user.email })
      }
      res.writeHead(200, {
        'content-type': 'application/json',
        'set-cookie': this.clear(SESSION),
        'cache-control': 'no-store',
      })
      res.end(JSON.stringify({ ok: true }))
      return undefined
    }
    if (!user) {
      if (method === 'GET' && /^\/(inbox\/?)?$/.test(url.pathname)) {
        res.writeHead(302, { location: '/inbox/login', 'cache-control': 'no-store' }).end()
        return undefined
      }
      throw new HttpError('SIGN_IN_REQUIRED', 'sign in to the inbox first (/inbox/login)')
    }
    if (!['GET', 'HEAD', 'OPTIONS'].includes(method)) this.checkCsrf(req, user)
    return { email: user.email, name: user.name, csrf: user.csrf }
  }

  /** Its own routes, for the metrics label. */
  routeOf(pathname: string): string | undefined {
    return SIGN_IN_ROUTES.has(pathname) ? pathname : undefined
  }

  // ---- the flow ----

  private async start(res: ServerResponse): Promise<undefined> {
    const state = this.oidc.randomState()
    const nonce = this.oidc.randomNonce()
    const verifier = this.oidc.randomPKCECodeVerifier()
    const redirect = this.options.redirectUri
    const url = this.oidc.buildAuthorizationUrl(this.config, {
      redirect_uri: redirect,
      scope: 'openid email profile',
      response_type: 'code',
      state,
      nonce,
      code_challenge: await this.oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })
    const flow = { v: 1 as const, state, nonce, verifier, redirect, exp: this.now() + FLOW_TTL_MS }
    res.writeHead(302, {
      location: url.href,
      'set-cookie': this.cookie(FLOW, this.seal(flow), FLOW_TTL_MS, '/inbox'),
      'cache-control': 'no-store',
    })
    res.end()
    return undefined
  }

  private async callback(req: IncomingMessage, res: ServerResponse, url: URL): Promise<undefined> {
    const flow = this.open(parseCookies(req.headers.cookie).get(FLOW), flowSchema)
    const refuse = (reason: string, detail?: unknown) => {
      // Logged for the operator; the person sees a plain page. No session is created.
      this.log.warn('inbox sign-in refused', { reason, ...(detail ? { detail } : {}) })
      const body = `<!doctype html><meta charset="utf-8"><title>Sign-in failed</title><p>Sign-in failed (${reason}). <a href="/inbox/login">Try again</a>.</p>`
      res.writeHead(400, {
        'content-type': 'text/html; charset=utf-8',
        'set-cookie': this.clear(FLOW, '/inbox'),
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'none'",
      })
      res.end(body)
      return undefined
    }
    if (!flow) return refuse('no sign-in in progress, or it expired')
    const current = new URL(flow.redirect)
    current.search = url.search
    let claims: Record<string, unknown>
    try {
      const tokens = await this.oidc.authorizationCodeGrant(this.config, current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      })
      const id = tokens.claims()
      if (!id) return refuse('no ID token')
      claims = { ...id }
      // Many providers put e-mail and name in the ID token; the others answer at userinfo.
      if (typeof claims.email !== 'string' || claims.email_verified === undefined) {
        const info = await this.oidc.fetchUserInfo(this.config, tokens.access_token, id.sub)
        claims = { ...info, ...id }
      }
    } catch (error) {
      const code = (error as { code?: string }).code
      const message = error instanceof Error ? error.message : String(error)
      // openid-client's cause says which check failed (`unexpected "state" …`, `… "nonce" claim …`).
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined
      return refuse('the provider’s answer did not check out', { code, message, ...(cause ? { cause } : {}) })
    }
    const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined
    if (!email) return refuse('no e-mail address from the provider')
    // Only a literal true: a missing claim, or the string "false", is not a verified address.
    if (claims.email_verified !== true) {
      return refuse('the provider did not say the e-mail address is verified', {
        code: 'EMAIL_NOT_VERIFIED',
        email,
      })
    }
    const name =
      typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 200) : email
    const now = this.now()
    const session = {
      v: 1 as const,
      sid: randomBytes(32).toString('base64url'),
      email,
      name,
      csrf: randomBytes(24).toString('base64url'),
      exp: now + this.ttlMs,
    }
    await this.options.sessions.putSession(
      { id: digest(session.sid), email, name, csrf: session.csrf, expiresAt: session.exp },
      now,
    )
    this.log.info('inbox sign-in', { email })
    res.writeHead(302, {
      location: '/inbox',
      'set-cookie': [this.cookie(SESSION, this.seal(session), this.ttlMs, '/'), this.clear(FLOW, '/inbox')],
      'cache-control': 'no-store',
    })
    res.end()
    return undefined
  }

  // ---- sessions ----

  /** The cookie's session, when its seal holds and the store still has it (not signed out). */
  private async session(req: IncomingMessage): Promise<(SignedInUser & { id: string }) | undefined> {
    const s = this.open(parseCookies(req.headers.cookie).get(SESSION), sessionSchema)
    if (!s) return undefined
    const id = digest(s.sid)
    const kept = await this.options.sessions.getSession(id, this.now())
    if (!kept || kept.email !== s.email || !same(kept.csrf, s.csrf)) return undefined
    return { id, email: kept.email, name: kept.name, csrf: kept.csrf }
  }

  private checkCsrf(req: IncomingMessage, user: SignedInUser): void {
    const sent = req.headers['x-csrf-token']
    if (typeof sent !== 'string' || !same(sent, user.csrf)) {
      throw new HttpError('CSRF', 'missing or wrong CSRF token (x-csrf-token)')
    }
  }

  /** `payload.signature`, both base64url; the payload is JSON. */
  private seal(value: object): string {
    const payload = Buffer.from(JSON.stringify(value)).toString('base64url')
    return `${payload}.${this.sign(payload)}`
  }

  /** The value of a sealed cookie when its signature holds, its shape is right and it has not expired. */
  private open<T extends { exp: number }>(raw: string | undefined, schema: z.ZodType<T>): T | undefined {
    if (!raw) return undefined
    const [payload, signature, extra] = raw.split('.')
    if (!payload || !signature || extra !== undefined || !same(signature, this.sign(payload)))
      return undefined
    let json: unknown
    try {
      json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return undefined
    }
    const parsed = schema.safeParse(json)
    if (!parsed.success || parsed.data.exp <= this.now()) return undefined
    return parsed.data
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url')
  }

  private secure(): boolean {
    return this.options.secureCookies ?? this.options.redirectUri.startsWith('https:')
  }

  private cookie(name: string, value: string, ttlMs: number, path: string): string {
    return [
      `${name}=${value}`,
      `Path=${path}`,
      `Max-Age=${Math.floor(ttlMs / 1000)}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(this.secure() ? ['Secure'] : []),
    ].join('; ')
  }

  private clear(name: string, path = '/'): string {
    return `${name}=; Path=${path}; Max-Age=0; HttpOnly; SameSite=Lax${this.secure() ? '; Secure' : ''}`
  }
}

/** What the store keeps of a session id: a leaked database names no usable session. */
function digest(sid: string): string {
  return createHash('sha256').update(sid).digest('base64url')
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
