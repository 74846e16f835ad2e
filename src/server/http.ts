import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { AgentTokenEntry } from '../config/agent-tokens.js'
import type { HookDeps } from '../hooks/run.js'
import { type Logger, silentLogger } from '../log.js'
import type { People } from '../oncall/people.js'
import { ResponderPolicy } from '../routing/policy.js'
import type { UserQuestionService } from '../service/service.js'
import { isStorageError } from '../store/errors.js'
import type { Store } from '../store/types.js'
import { addApiRoutes } from './api.js'
import { sendJson } from './body.js'
import { type Caller, Credentials } from './credentials.js'
import { Edge, type EdgeOptions } from './edge.js'
import { errorResponse, HttpError } from './errors.js'
import { addHookRoutes } from './hooks.js'
import { InboxLinks } from './inbox-link.js'
import { Metrics } from './metrics.js'
import { canonicalPath } from './path.js'
import { RateLimiter } from './rate-limit.js'
import { Router } from './router.js'
import type { SignedInUser } from './signin.js'

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
  /**
   * The all-agents (admin) bearer token for the `/v1` API (never the inbox). With neither it nor
   * `agentTokens`: loopback Host only.
   */
  apiToken?: string
  /** Per-agent tokens (ASKBRIDGE_AGENT_TOKENS): digests, agent, scopes, requester. */
  agentTokens?: AgentTokenEntry[]
  /**
   * The inbox's own credential without OpenID Connect: one-time sign-in links.
   * @default a new set whose links are only given out through {@link BridgeHttpServer.signInLink}
   */
  inboxLinks?: InboxLinks
  /** Who is who across platforms (the routes file's `people`), for requester checks on API answers. */
  people?: People
  /** Clock for rate limits (tests). @default Date.now */
  now?: () => number
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
  edge?: Omit<EdgeOptions, 'logger'>
}

/** The running HTTP side of the bridge. */
export interface BridgeHttpServer {
  readonly server: Server
  readonly metrics: Metrics
  /** A new one-time inbox sign-in link (a path such as `/inbox?login=…`); the previous one stops working. */
  signInLink(): string
  listen(port: number, host: string): Promise<string>
  /**
   * Stop intake: new connections and requests are refused, waiting requests (blocking asks,
   * long-polls, SSE) are ended with 503 so clients re-attach after the restart.
   */
  stopIntake(): void
  /** Close every connection and the listener. */
  close(): Promise<void>
}

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
    policy: new ResponderPolicy({
      // An API caller is never a member of a group: no look-up needed.
      groupMembers: async () => undefined,
      ...(options.people ? { people: options.people } : {}),
    }),
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

  const links = options.inboxLinks ?? new InboxLinks({ logger: log })

  const credentials = new Credentials({ apiToken: options.apiToken, agentTokens: options.agentTokens })
  const limiter = new RateLimiter(options.now ?? Date.now)
  const edge = new Edge({ ...options.edge, logger: log })

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    edge.admit(req, res)
    // The path is parsed once, here: the same canonical segments pick the guard and the route.
    const path = canonicalPath(req.url ?? '/')
    let url: URL
    try {
      url = new URL(req.url ?? '/', 'http://askbridge.local')
    } catch {
      throw new HttpError('BAD_REQUEST', 'malformed request URL')
    }
    url.pathname = path.pathname
    const method = req.method ?? 'GET'
    const webhook = webhooks.get(`${method} ${path.pathname}`)
    if (webhook) {
      await webhook.handle(req, res)
      return
    }
    if (path.area === 'health') {
      const m = router.match(method, path.pathname)
      if ('handler' in m) await m.handler({ req, res, url, params: m.params })
      return
    }
    // Without a token only this machine is served: a loopback peer naming a loopback host (which
    // defeats DNS rebinding), no proxy in between. The inbox and sign-in included (edge.ts).
    if (!credentials.required) edge.loopbackOnly(req)
    if (path.area === 'inbox') {
      // The inbox never takes the API token or an agent token: people hold their own credential.
      let user: SignedInUser | undefined
      if (options.signIn) {
        // Signed in: the session (and its CSRF token on writes) is the inbox's authentication.
        user = await options.signIn.handle(req, res, url)
        if (!user) return
      } else {
        // The cookie is SameSite=Strict, but another port of this host is the same site: writes
        // must come from this very origin (and be JSON, which no other origin may send unasked).
        checkOrigin(req, method)
        if (!links.handle(req, res, url, method)) return
      }
      for (const mount of options.mounts ?? []) {
        if (await mount.handleHttp(req, res, url, user ? { user } : {})) return
      }
      return route(req, res, url, method, undefined)
    }
    let caller = credentials.fromRequest(req)
    if (!caller) {
      if (credentials.required) throw unauthorized()
      checkOrigin(req, method)
      caller = Credentials.loopback()
    }
    if (caller.key && caller.ratePerMinute) {
      const wait = limiter.take(caller.key, caller.ratePerMinute)
      if (wait > 0) {
        log.info('rate limited', { caller: caller.label })
        throw Object.assign(
          new HttpError(
            'RATE_LIMITED',
            `this token made more than ${caller.ratePerMinute} requests a minute; try again in ${wait} s`,
          ),
          { retryAfter: wait },
        )
      }
    }
    return route(req, res, url, method, caller)
  }

  const route = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    method: string,
    caller: Caller | undefined,
  ): Promise<void> => {
    const match = router.match(method, url.pathname)
    if (!('handler' in match)) {
      if (match.allowed.length > 0) {
        throw Object.assign(new HttpError('METHOD_NOT_ALLOWED', `use ${match.allowed.join(' or ')}`), {
          allow: match.allowed.join(', '),
        })
      }
      throw new HttpError('NOT_FOUND', `no route for ${method} ${url.pathname}`)
    }
    // The /v1 API's routes are never reached through the inbox's credential.
    if (!caller) throw new HttpError('NOT_FOUND', `no route for ${method} ${url.pathname}`)
    if (closing && url.pathname !== '/metrics') {
      throw new HttpError('SHUTTING_DOWN', 'the bridge is shutting down')
    }
    await match.handler({ req, res, url, params: match.params, caller })
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
      const retryAfter = (error as { retryAfter?: number }).retryAfter
      // A body we stopped reading: close the connection rather than drain a huge upload.
      const headers: Record<string, string> = status === 413 ? { connection: 'close' } : {}
      if (allow) headers.allow = allow
      if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter)
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
    signInLink: () => links.issue(),
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
  return new HttpError(
    'UNAUTHORIZED',
    'missing or wrong bearer token (ASKBRIDGE_API_TOKEN or a token of ASKBRIDGE_AGENT_TOKENS)',
  )
}

/**
 * Without a bearer token nothing in the request proves who sent it, so a web page on any other
 * origin could post here (a body-less or untyped POST needs no CORS preflight). Browsers always
 * send Origin on such requests: it must be us.
 */
function checkOrigin(req: IncomingMessage, method: string): void {
  if (!SAFE_METHODS.has(method) && !sameOrigin(req)) {
    throw new HttpError(
      'FORBIDDEN_ORIGIN',
      'requests from other web origins are refused (set ASKBRIDGE_API_TOKEN to use the API from a browser app)',
    )
  }
}
