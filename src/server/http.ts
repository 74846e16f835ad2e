import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { AgentTokenEntry } from '../config/agent-tokens.js'
import type { HookDeps } from '../hooks/run.js'
import { type Logger, silentLogger } from '../log.js'
import type { People } from '../routing/people.js'
import { ResponderPolicy } from '../routing/policy.js'
import type { UserQuestionService } from '../service/service.js'
import type { Store } from '../store/types.js'
import { Credentials } from './credentials.js'
import { Edge, type EdgeOptions } from './edge.js'
import { HttpError } from './errors.js'
import { InboxLinks } from './inbox-link.js'
import { Metrics } from './metrics.js'
import type { RequestContext, Step } from './middleware/context.js'
import { healthStep, loopbackStep, webhookStep } from './middleware/edge.js'
import { inboxSessionStep } from './middleware/inbox-session.js'
import { observeRequest, serverMetrics } from './middleware/metrics.js'
import { answerError } from './middleware/refusal.js'
import { tokenStep } from './middleware/token.js'
import type { HttpMount, InboxGate, WebhookMount } from './mounts.js'
import { canonicalPath } from './path.js'
import { RateLimiter } from './rate-limit.js'
import { Router } from './router.js'
import { addRoutes } from './routes/index.js'

/** The web adapter's view of an inbox request (adapters/web). */
export type { InboxContext } from './mounts.js'

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
  const waiting = new Map<ServerResponse, () => void>()
  const counted = serverMetrics(metrics, options.service, () => waiting.size)
  let closing = false
  const router = new Router()
  addRoutes(
    router,
    routeDeps(options, log, metrics, () => closing, waiting),
  )
  const links = options.inboxLinks ?? new InboxLinks({ logger: log })
  const credentials = new Credentials({ apiToken: options.apiToken, agentTokens: options.agentTokens })
  const edge = new Edge({ ...options.edge, logger: log })
  // The middleware, in this order: webhooks and health pass no guard; then loopback-only without
  // a token; then the inbox's session (inbox paths) or the API's token (API paths).
  const steps: Step[] = [
    webhookStep(options.webhooks ?? []),
    healthStep(router),
    loopbackStep(edge, credentials),
    inboxSessionStep({
      links,
      mounts: options.mounts ?? [],
      ...(options.signIn ? { signIn: options.signIn } : {}),
    }),
    tokenStep(credentials, new RateLimiter(options.now ?? Date.now), log),
  ]
  const dispatch = (ctx: RequestContext) => route(router, ctx, closing)
  const label = routeLabeler(router, options)

  const server = createServer((req, res) => {
    // Labelled up front: many handlers end the response before their promise settles.
    const route = label((req.url ?? '/').split('?')[0] ?? '/')
    observeRequest(req, res, route, counted.requests, log)
    handle(req, res, edge, steps, dispatch).catch((error: unknown) => answerError(res, error, route, log))
  })
  const sockets = configure(server, edge)

  return {
    server,
    metrics,
    signInLink: () => links.issue(),
    listen: (port, host) => listen(server, port, host),
    stopIntake() {
      if (closing) return
      closing = true
      server.close()
      for (const end of [...waiting.values()]) end()
      waiting.clear()
    },
    async close() {
      this.stopIntake()
      counted.detach()
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

/** What the routes need, from the server's options. */
function routeDeps(
  options: HttpServerOptions,
  log: Logger,
  metrics: Metrics,
  closing: () => boolean,
  waiting: Map<ServerResponse, () => void>,
) {
  return {
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
    closing,
    track: (res: ServerResponse, end: () => void) => {
      waiting.set(res, end)
      return () => waiting.delete(res)
    },
    ...(options.maxWaitingAsks === undefined ? {} : { maxWaitingAsks: options.maxWaitingAsks }),
    ...(options.hookTimeoutMs === undefined ? {} : { hookTimeoutMs: options.hookTimeoutMs }),
    ...(options.hookTimeoutDecision === undefined
      ? {}
      : { hookTimeoutDecision: options.hookTimeoutDecision }),
    ...(options.notices ? { notices: options.notices } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  }
}

/** Metrics and log label: the matched route's pattern; every unknown path shares one label. */
function routeLabeler(router: Router, options: HttpServerOptions): (path: string) => string {
  return (path) =>
    (options.webhooks ?? []).find((w) => w.path === path)?.path ??
    router.pattern(path) ??
    options.signIn?.routeOf?.(path) ??
    (options.mounts ?? []).map((m) => m.routeOf?.(path)).find((r) => r !== undefined) ??
    'other'
}

/** Admit at the edge, parse the path once, run the steps in order, then route. */
async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  edge: Edge,
  steps: readonly Step[],
  dispatch: (ctx: RequestContext) => Promise<void>,
): Promise<void> {
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
  const ctx: RequestContext = { req, res, url, method: req.method ?? 'GET', path }
  for (const step of steps) if ((await step(ctx)) === 'answered') return
  return dispatch(ctx)
}

/** The router's answer: 404 or 405 without a route; `/v1` routes only with a caller; 503 when closing. */
async function route(router: Router, ctx: RequestContext, closing: boolean): Promise<void> {
  const { req, res, url, method, caller } = ctx
  const match = router.match(method, url.pathname)
  if (!('handler' in match)) {
    if (match.allowed.length > 0) {
      throw new HttpError('METHOD_NOT_ALLOWED', `use ${match.allowed.join(' or ')}`, {
        allow: match.allowed,
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

/** Timeouts, the edge's caps and keep-alive on the node:http server; returns its open sockets. */
function configure(server: Server, edge: Edge): Set<Socket> {
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
  return sockets
}

function listen(server: Server, port: number, host: string): Promise<string> {
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
}
