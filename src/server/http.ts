import { timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { HookDeps } from '../hooks/run.js'
import { type Logger, silentLogger } from '../log.js'
import type { UserQuestionService } from '../service/service.js'
import { isStorageError } from '../store/errors.js'
import type { Store } from '../store/types.js'
import { addApiRoutes } from './api.js'
import { sendJson } from './body.js'
import { Edge, type EdgeOptions } from './edge.js'
import { errorResponse, HttpError } from './errors.js'
import { addHookRoutes } from './hooks.js'
import { Metrics } from './metrics.js'
import { Router } from './router.js'
import { parseCookies, type SignedInUser } from './signin.js'
import { sendTokenPage } from './token-page.js'

/** Something else that answers HTTP on the bridge's port (the web inbox). */
export interface HttpMount {
  /** Resolves true when it answered the request. `context.user`: who is signed in to the inbox. */
  handleHttp(req: IncomingMessage, res: ServerResponse, url: URL, context?: InboxContext): Promise<boolean>
  /** The pattern of its route a path matches (`/inbox/tool/:callId`): the metrics label. */
  routeOf?(pathname: string): string | undefined
}

/** What the server knows about an inbox request. */
export interface InboxContext {
  /** The signed-in person (inbox sign-in through OpenID Connect). */
  user?: SignedInUser
}

/** Inbox sign-in: answers its own routes and refusals (undefined), or names the signed-in person. */
export interface InboxGate {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<SignedInUser | undefined>
  /** Its own routes (`/inbox/login`, …): the metrics label. */
  routeOf?(pathname: string): string | undefined
}

/** A platform webhook on the bridge's port (Slack HTTP mode, Discord interactions). Verified by signature, not by the API token. */
export interface WebhookMount {
  method: 'POST'
  path: string
  handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void
}

/** Options of {@link createHttpServer}. */
export interface HttpServerOptions {
  service: UserQuestionService
  store: Store
  /** The web inbox (and anything else serving pages). */
  mounts?: HttpMount[]
  webhooks?: WebhookMount[]
  /** Bearer token for everything but `/healthz` and platform webhooks. Unset: loopback Host only. */
  apiToken?: string
  logger?: Logger
  metrics?: Metrics
  /** SSE heartbeat interval. @default 15000 */
  heartbeatMs?: number
  /** Hook requests without `?timeout=` answer "no decision" before this (ASKBRIDGE_HOOK_TIMEOUT). @default 600000 */
  hookTimeoutMs?: number
  /** What PreToolUse answers when nobody decides in time (ASKBRIDGE_HOOK_TIMEOUT_DECISION). @default 'ask' */
  hookTimeoutDecision?: 'ask' | 'deny'
  /**
   * Asks (`POST /v1/ask`) that may wait at once; the excess gets 503 OVERLOADED
   * (ASKBRIDGE_MAX_WAITING_ASKS). @default 5000
   */
  maxWaitingAsks?: number
  /** Inbox sign-in: with it, /inbox needs a session (not the API token or a loopback Host). */
  signIn?: InboxGate
  /** Claude Code `Notification` / `Stop` hooks: post a notice where the route opts in. */
  notices?: HookDeps['notices']
  /** The bridge's public URL (ASKBRIDGE_PUBLIC_URL): hook cards link to the whole tool input. */
  publicUrl?: string
  /** The network edge: trusted proxies, the body timeout, connection and stream caps (edge.ts). */
  edge?: Omit<EdgeOptions, 'apiToken' | 'logger'>
}

/** The running HTTP side of the bridge. */
export interface BridgeHttpServer {
  readonly server: Server
  readonly metrics: Metrics
  listen(port: number, host: string): Promise<string>
  /**
   * Stop intake: new connections and requests are refused, waiting requests (blocking asks,
   * long-polls, SSE) are ended with 503 so clients re-attach after the restart.
   */
  stopIntake(): void
  /** Close every connection and the listener. */
  close(): Promise<void>
}

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d+)?$/i
const INBOX_PATH = /^\/(inbox(\/.*)?)?$/
/** The inbox page itself (not its API). */
const INBOX_PAGE = /^\/(inbox\/?)?$/

/** A browser opening the inbox page (it asks for HTML), not a script calling it. */
function wantsPage(req: IncomingMessage, url: URL): boolean {
  return INBOX_PAGE.test(url.pathname) && /\btext\/html\b/.test(req.headers.accept ?? '')
}
const COOKIE = 'askbridge_token'

/** The bridge's HTTP server on node:http: the `/v1` API, health, metrics, the inbox and webhooks. */
export function createHttpServer(options: HttpServerOptions): BridgeHttpServer {
  const log = options.logger ?? silentLogger
  const metrics = options.metrics ?? new Metrics()
  const requests = metrics.counter(
    'askbridge_http_requests_total',
    'HTTP requests by method, route and status.',
  )
  const waiting = new Map<ServerResponse, () => void>()
  metrics.gauge(
    'askbridge_http_waiting',
    'HTTP requests held open (blocking asks, long-polls, SSE).',
    () => waiting.size,
  )
  metrics.gauge(
    'askbridge_questions_active',
    'Timed questions still answerable (open or continued).',
    // Live calls only, through the state index: the settled history never loads for a scrape.
    async () =>
      (await options.service.store.listCalls({ states: ['open', 'continued'], timed: true })).length,
  )
  const calls = metrics.counter(
    'askbridge_calls_total',
    'Call lifecycle events: answered, pending, dropped, reply.',
  )
  const onAnswered = () => calls({ event: 'answered' })
  const onPending = () => calls({ event: 'pending' })
  const onDropped = (_c: unknown, code: string) => calls({ event: 'dropped', code })
  const onReply = () => calls({ event: 'reply' })
  options.service.on('answered', onAnswered)
  options.service.on('pending', onPending)
  options.service.on('dropped', onDropped)
  options.service.on('reply', onReply)

  let closing = false
  const router = new Router()
  router.add('GET', '/healthz', ({ res }) => sendJson(res, closing ? 503 : 200, { ok: !closing }))
  router.add('GET', '/metrics', async ({ res }) => {
    const text = await metrics.render()
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text)
  })
  const apiDeps = {
    service: options.service,
    store: options.store,
    logger: log,
    metrics,
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    closing: () => closing,
    track: (res: ServerResponse, end: () => void) => {
      waiting.set(res, end)
      return () => waiting.delete(res)
    },
  }
  addApiRoutes(router, {
    ...apiDeps,
    ...(options.maxWaitingAsks === undefined ? {} : { maxWaitingAsks: options.maxWaitingAsks }),
  })
  addHookRoutes(router, {
    ...apiDeps,
    ...(options.hookTimeoutMs === undefined ? {} : { hookTimeoutMs: options.hookTimeoutMs }),
    ...(options.hookTimeoutDecision === undefined
      ? {}
      : { hookTimeoutDecision: options.hookTimeoutDecision }),
    ...(options.notices ? { notices: options.notices } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  })
  const webhooks = new Map((options.webhooks ?? []).map((w) => [`${w.method} ${w.path}`, w]))
  /** Metrics and log label: the matched route's pattern; every unknown path shares one label. */
  const routeLabel = (path: string): string =>
    (options.webhooks ?? []).find((w) => w.path === path)?.path ??
    router.pattern(path) ??
    options.signIn?.routeOf?.(path) ??
    (options.mounts ?? []).map((m) => m.routeOf?.(path)).find((r) => r !== undefined) ??
    'other'

  const token = options.apiToken
  const edge = new Edge({ ...options.edge, apiToken: token, logger: log })

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    edge.admit(req, res)
    let url: URL
    try {
      url = new URL(req.url ?? '/', 'http://askbridge.local')
    } catch {
      throw new HttpError(400, 'BAD_REQUEST', 'malformed request URL')
    }
    const method = req.method ?? 'GET'
    const webhook = webhooks.get(`${method} ${url.pathname}`)
    if (webhook) {
      await webhook.handle(req, res)
      return
    }
    if (url.pathname === '/healthz') {
      const m = router.match(method, url.pathname)
      if ('handler' in m) await m.handler({ req, res, url, params: m.params })
      return
    }
    edge.loopbackOnly(req)
    const inbox = INBOX_PATH.test(url.pathname)
    let user: SignedInUser | undefined
    if (inbox && options.signIn) {
      // Signed in: the session (and its CSRF token on writes) is the inbox's authentication.
      user = await options.signIn.handle(req, res, url)
      if (!user) return
    } else if (token === undefined) {
      // Without a token only loopback names are served, which defeats DNS rebinding.
      if (!LOOPBACK_HOST.test(req.headers.host ?? '')) {
        throw new HttpError(
          403,
          'FORBIDDEN_HOST',
          'without ASKBRIDGE_API_TOKEN only loopback host names are served',
        )
      }
      // Without a token nothing authenticates a request, so a web page on any other origin
      // could post to the bridge (a body-less or untyped POST needs no CORS preflight) and
      // answer, admit or ask. Browsers always send Origin on such requests: it must be us.
      if (!SAFE_METHODS.has(method) && !sameOrigin(req)) {
        throw new HttpError(
          403,
          'FORBIDDEN_ORIGIN',
          'requests from other web origins are refused (set ASKBRIDGE_API_TOKEN to use the API from a browser app)',
        )
      }
    } else if (inbox && method === 'GET' && url.searchParams.has('token')) {
      // The inbox link carries the token once; a cookie keeps it, and it leaves the address bar.
      if (!same(url.searchParams.get('token') ?? '', token)) {
        if (wantsPage(req, url)) return sendTokenPage(res, true)
        throw unauthorized()
      }
      res.writeHead(302, {
        location: '/inbox',
        'set-cookie': `${COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict${options.publicUrl?.startsWith('https:') ? '; Secure' : ''}`,
        'cache-control': 'no-store',
      })
      res.end()
      return
    } else if (!authorized(req, token, inbox)) {
      // A person opening the inbox gets a page that says how to get in; scripts get the JSON error.
      if (method === 'GET' && wantsPage(req, url)) return sendTokenPage(res, false)
      throw unauthorized()
    }
    for (const mount of options.mounts ?? []) {
      if (await mount.handleHttp(req, res, url, user ? { user } : {})) return
    }
    const match = router.match(method, url.pathname)
    if (!('handler' in match)) {
      if (match.allowed.length > 0) {
        throw Object.assign(new HttpError(405, 'METHOD_NOT_ALLOWED', `use ${match.allowed.join(' or ')}`), {
          allow: match.allowed.join(', '),
        })
      }
      throw new HttpError(404, 'NOT_FOUND', `no route for ${method} ${url.pathname}`)
    }
    if (closing && url.pathname !== '/metrics') {
      throw new HttpError(503, 'SHUTTING_DOWN', 'the bridge is shutting down')
    }
    await match.handler({ req, res, url, params: match.params })
  }

  const server = createServer((req, res) => {
    const started = process.hrtime.bigint()
    // Labelled up front: many handlers end the response before their promise settles.
    const route = routeLabel((req.url ?? '/').split('?')[0] ?? '/')
    res.on('finish', () => {
      requests({ method: req.method ?? '', route, status: String(res.statusCode) })
      const fields = {
        method: req.method,
        route,
        status: res.statusCode,
        ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
      }
      if (route === '/healthz' || route === '/metrics') log.debug('request', fields)
      else log.info('request', fields)
    })
    handle(req, res).catch((error: unknown) => {
      const { status, body } = errorResponse(error)
      if (isStorageError(error)) {
        log.warn('storage unavailable', { route, status, fault: error.fault, message: error.message })
      } else if (status >= 500 && status !== 503) log.error('request failed', { route, error })
      else log.info('request refused', { route, status, code: body.error.code })
      if (res.headersSent || res.destroyed) {
        res.end()
        return
      }
      const allow = (error as { allow?: string }).allow
      // A body we stopped reading: close the connection rather than drain a huge upload.
      const headers: Record<string, string> = status === 413 ? { connection: 'close' } : {}
      if (allow) headers.allow = allow
      const retryAfter = (error as { retryAfter?: string }).retryAfter
      if (retryAfter) headers['retry-after'] = retryAfter
      sendJson(res, status, body, headers)
    })
  })
  // Blocking asks wait as long as it takes: no socket inactivity timeout, TCP keep-alive on.
  // The request itself must arrive in time, and connections are capped (edge.ts).
  server.timeout = 0
  edge.attach(server)
  server.keepAliveTimeout = 5_000
  const sockets = new Set<Socket>()
  server.on('connection', (socket) => {
    socket.setKeepAlive(true, 30_000)
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  server.on('clientError', (err, socket) => {
    if (edge.clientError(err, socket)) return
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n')
    else socket.destroy()
  })

  return {
    server,
    metrics,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject)
        // A long accept queue: a burst of thousands of connections is answered (maybe with 503
        // OVERLOADED), not dropped by the kernel (which caps it at net.core.somaxconn).
        server.listen({ port, host, backlog: 4096 }, () => {
          server.off('error', reject)
          const addr = server.address() as AddressInfo
          const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
          resolve(`http://${shown}:${addr.port}`)
        })
      })
    },
    stopIntake() {
      if (closing) return
      closing = true
      server.close()
      for (const end of [...waiting.values()]) end()
      waiting.clear()
    },
    async close() {
      this.stopIntake()
      options.service.off('answered', onAnswered)
      options.service.off('pending', onPending)
      options.service.off('dropped', onDropped)
      options.service.off('reply', onReply)
      server.closeIdleConnections()
      // Give in-flight responses a moment to flush, then cut what is left.
      await new Promise((r) => setTimeout(r, 50))
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => {
        if (!server.listening) return resolve()
        server.close(() => resolve())
      })
    },
  }
}

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

function unauthorized(): HttpError {
  return new HttpError(401, 'UNAUTHORIZED', 'missing or wrong bearer token (ASKBRIDGE_API_TOKEN)')
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

function authorized(req: IncomingMessage, token: string, inbox: boolean): boolean {
  const header = req.headers.authorization ?? ''
  const m = /^Bearer\s+(.+)$/i.exec(header)
  if (m && same((m[1] ?? '').trim(), token)) return true
  if (!inbox) return false
  // The inbox page's own requests carry the cookie set by the ?token= link.
  // A malformed cookie (`%ZZ`) is no cookie, never a 500.
  const cookie = parseCookies(req.headers.cookie).get(COOKIE)
  return cookie !== undefined && same(cookie, token)
}
