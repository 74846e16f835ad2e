import type { ChatAdapter } from '../answerer/adapter.js'
import { ChatAnswerer } from '../answerer/chat.js'
import { type Config, ConfigError, publicUrlOf, redirectUriOf, secureCookiesOf } from '../config/env.js'
import { platformProblems } from '../config/platforms.js'
import { type Logger, silentLogger } from '../log.js'
import { OnCallLookup } from '../oncall/lookup.js'
import { pagerDutyForRoutes } from '../oncall/startup.js'
import type { PlatformModule, WebInbox } from '../platform.js'
import { People } from '../routing/people.js'
import { loadRoutes, type RoutesFile, routesRouter } from '../routing/routes.js'
import type { Router as RoutesRouter } from '../routing/types.js'
import { followReplicas } from '../service/replicas.js'
import { startRetention } from '../service/retention.js'
import { UserQuestionService } from '../service/service.js'
import { connectStore } from '../store/index.js'
import type { Store } from '../store/types.js'
import { type BuiltAdapters, buildPlatforms } from './build-platforms.js'
import { type BridgeHttpServer, createHttpServer } from './http.js'
import { InboxLinks } from './inbox-link.js'
import { Metrics } from './metrics.js'
import { InboxSignIn } from './signin.js'

export type { WebInbox }

/** Options of {@link serve}. */
export interface ServeOptions {
  /** Validated configuration (see `loadConfig`). */
  config: Config
  /**
   * The platforms (adapters/platforms.js): each one that is configured is built, and the
   * configuration and routes are checked against them. They live outside src/, so the core
   * never imports a platform; bin/askbridge.js and the tests pass them in.
   */
  platforms: readonly PlatformModule[]
  /** @default silent */
  logger?: Logger
  /** SSE heartbeat interval (tests shorten it). @default 15000 */
  heartbeatMs?: number
  /** How often escalation timers are checked. @default 15000 */
  escalationIntervalMs?: number
  /**
   * The routes (destinations, responders, quorum, escalation). Default: the file named by
   * ASKBRIDGE_ROUTES; neither: every question goes to the default destinations.
   */
  routes?: RoutesFile
  /** A ready-made router; wins over `routes`. */
  router?: RoutesRouter
  /**
   * Several bridges on one PostgreSQL database (tests shorten these). `leaseMs`: how long a
   * timed wait stays this bridge's without renewal (@default 3000); `intervalMs`: how often
   * missed notifications are re-checked (@default 2000; dead bridges' deadlines every second).
   */
  replicas?: { leaseMs?: number; intervalMs?: number }
  /** How often history past ASKBRIDGE_RETENTION is pruned (tests shorten it). @default 600000 */
  retentionIntervalMs?: number
  /**
   * Called with each new one-time inbox sign-in link (a full URL) after the previous one was
   * used; the first is {@link BridgeHandle.inboxUrl}. Without OpenID Connect only.
   */
  onInboxLink?: (url: string) => void
  /** Inbox sign-in sessions: lifetime (default 8 hours) and clock (tests). */
  inboxSession?: { ttlMs?: number; now?: () => number }
}

/** A running bridge. */
export interface BridgeHandle {
  /** Base URL of the HTTP API, e.g. `http://127.0.0.1:8787`. */
  readonly url: string
  /**
   * Where a person opens the inbox: with OpenID Connect `URL/inbox`; without, a one-time sign-in
   * link (`URL/inbox?login=…`), the inbox's own credential (print it, never log it).
   */
  readonly inboxUrl: string
  readonly service: UserQuestionService
  readonly store: Store
  readonly chat: ChatAnswerer
  readonly web: WebInbox
  readonly adapters: ChatAdapter[]
  readonly http: BridgeHttpServer
  /**
   * Graceful shutdown: stop intake, end waiting requests with 503 (clients re-attach after the
   * restart), let adapters finish acknowledgements, then close the store. Idempotent.
   */
  close(): Promise<void>
}

/**
 * The composition root of `askbridge serve`: store, service, adapters (the web inbox always,
 * every other platform when configured), the chat answerer, and the HTTP server.
 */
export async function serve(options: ServeOptions): Promise<BridgeHandle> {
  const { config } = options
  const log = options.logger ?? silentLogger
  // A bad routes file stops the start before anything is opened (RoutesError names every problem).
  const routes =
    options.routes ??
    (config.ASKBRIDGE_ROUTES ? loadRoutes(config.ASKBRIDGE_ROUTES, options.platforms) : undefined)
  // Routes naming PagerDuty: the token and every schedule and policy are checked before anything opens.
  const pagerDuty = await pagerDutyForRoutes(routes, config, log)
  const { store, signIn } = await openStore(options, log)
  const service = new UserQuestionService({ store, logger: log })
  const started: { chat?: ChatAnswerer; http?: BridgeHttpServer } = {}
  try {
    // Timed calls left open by a previous process become continued: still answerable.
    const recovered = await service.recover()
    if (recovered.length > 0) log.info('restored continued questions', { count: recovered.length })
    const built = await buildPlatforms(options.platforms, {
      config,
      store,
      logger: log,
      ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    })
    // The CLI names these with every other problem before it gets here; a host embedding the
    // bridge gets the same stop.
    const problems = platformProblems(config, routes, options.platforms, config.ASKBRIDGE_ROUTES)
    if (problems.length > 0) throw new ConfigError(problems)
    const people = new People(routes?.people)
    const chat = createAnswerer(options, { service, built, routes, people, pagerDuty, log })
    started.chat = chat
    const front = createHttp(options, { service, store, built, people, chat, signIn, log })
    started.http = front.http
    return await startServing(options, { service, store, built, chat, signIn, routes, log, ...front })
  } catch (error) {
    started.http?.stopIntake()
    await started.http?.close().catch(() => {})
    await service.close({ keepCalls: true })
    await started.chat?.stop().catch(() => {})
    await store.close().catch(() => {})
    throw error
  }
}

/**
 * Open the store and, with OpenID Connect configured, inbox sign-in: the provider must answer
 * now, or serve refuses to start (naming the variable). Sessions live in the store, so signing
 * out holds on every replica.
 */
async function openStore(
  options: ServeOptions,
  log: Logger,
): Promise<{ store: Store; signIn: InboxSignIn | undefined }> {
  const store = await connectStore(options.config.ASKBRIDGE_DB, {
    log,
    ...(options.replicas?.leaseMs === undefined ? {} : { leaseMs: options.replicas.leaseMs }),
  })
  try {
    return { store, signIn: await startSignIn(options.config, store, log, options.inboxSession) }
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
}

/** The chat answerer over every adapter, registered in the service's waterfall. */
function createAnswerer(
  options: ServeOptions,
  parts: {
    service: UserQuestionService
    built: BuiltAdapters
    routes: RoutesFile | undefined
    people: People
    pagerDuty: Awaited<ReturnType<typeof pagerDutyForRoutes>>
    log: Logger
  },
): ChatAnswerer {
  const { service, built, routes, people, pagerDuty, log } = parts
  const router =
    options.router ?? (routes ? routesRouter(routes, built.destinations, options.platforms, log) : undefined)
  const chat = new ChatAnswerer({
    service,
    adapters: built.adapters,
    destinations: built.destinations,
    logger: log,
    people,
    ...(pagerDuty ? { oncall: new OnCallLookup({ source: pagerDuty, logger: log }) } : {}),
    ...(router ? { router } : {}),
    ...(options.escalationIntervalMs === undefined
      ? {}
      : { escalationIntervalMs: options.escalationIntervalMs }),
    ...(options.replicas?.intervalMs === undefined ? {} : { recheckMs: options.replicas.intervalMs }),
  })
  service.use(chat.answerer)
  return chat
}

/** The HTTP server, not listening yet, and the inbox's one-time links. */
interface HttpFront {
  http: BridgeHttpServer
  inboxLinks: InboxLinks
  /** The URL the server listens on, once known: the links `onInboxLink` hands out start with it. */
  setBase(url: string): void
}

/** The HTTP server: API, hook routes, the inbox, platform webhooks, the network edge. */
function createHttp(
  options: ServeOptions,
  parts: {
    service: UserQuestionService
    store: Store
    built: BuiltAdapters
    people: People
    chat: ChatAnswerer
    signIn: InboxSignIn | undefined
    log: Logger
  },
): HttpFront {
  const { config } = options
  const { service, store, built, people, chat, signIn, log } = parts
  const publicUrl = publicUrlOf(config)
  const metrics = new Metrics()
  // Without OpenID Connect the inbox opens from one-time links `serve` prints (never logged).
  let base = ''
  const onInboxLink = options.onInboxLink
  const inboxLinks = new InboxLinks({
    logger: log,
    secureCookies: secureCookiesOf(config),
    ...(onInboxLink ? { onLink: (path: string) => onInboxLink(`${base}${path}`) } : {}),
  })
  const web = built.web
  metrics.gauge('askbridge_inbox_connections', 'Web inbox pages connected.', () => web.connections)
  const http = createHttpServer({
    service,
    store,
    mounts: [built.web],
    webhooks: built.webhooks,
    ...(config.ASKBRIDGE_API_TOKEN ? { apiToken: config.ASKBRIDGE_API_TOKEN } : {}),
    ...(config.ASKBRIDGE_AGENT_TOKENS ? { agentTokens: config.ASKBRIDGE_AGENT_TOKENS } : {}),
    inboxLinks,
    people,
    logger: log,
    metrics,
    ...(signIn ? { signIn } : {}),
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    hookTimeoutMs: config.ASKBRIDGE_HOOK_TIMEOUT,
    hookTimeoutDecision: config.ASKBRIDGE_HOOK_TIMEOUT_DECISION,
    maxWaitingAsks: config.ASKBRIDGE_MAX_WAITING_ASKS,
    notices: (request) => chat.notice(request),
    ...(publicUrl ? { publicUrl } : {}),
    edge: {
      trustedProxies: config.ASKBRIDGE_TRUSTED_PROXIES,
      limits: {
        bodyTimeoutMs: config.ASKBRIDGE_BODY_TIMEOUT,
        connections: config.ASKBRIDGE_MAX_CONNECTIONS,
        connectionsPerClient: config.ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT,
        streams: config.ASKBRIDGE_MAX_STREAMS,
        streamsPerClient: config.ASKBRIDGE_MAX_STREAMS_PER_CLIENT,
      },
    },
  })
  return {
    http,
    inboxLinks,
    setBase: (url) => {
      base = url
    },
  }
}

/**
 * Start the adapters, follow other replicas, listen, start pruning old history; the running
 * bridge's handle.
 */
async function startServing(
  options: ServeOptions,
  parts: HttpFront & {
    service: UserQuestionService
    store: Store
    built: BuiltAdapters
    chat: ChatAnswerer
    signIn: InboxSignIn | undefined
    routes: RoutesFile | undefined
    log: Logger
  },
): Promise<BridgeHandle> {
  const { config } = options
  const { service, store, built, chat, signIn, routes, log, http, inboxLinks } = parts
  await chat.start()
  // Several bridges on one PostgreSQL database: replies, cancellations and dead bridges'
  // deadlines are followed across them (nothing to do on SQLite).
  const unfollow = followReplicas(service, {
    logger: log,
    ...(options.replicas?.intervalMs === undefined ? {} : { intervalMs: options.replicas.intervalMs }),
  })
  const url = await http.listen(config.ASKBRIDGE_PORT, config.ASKBRIDGE_HOST)
  parts.setBase(url)
  warnUnknownRequesters(routes, config, log)
  // Every replica prunes; batches are small and never take the same rows.
  const stopRetention = startRetention(store, {
    callsMs: config.ASKBRIDGE_RETENTION,
    auditMs: config.ASKBRIDGE_AUDIT_RETENTION,
    logger: log,
    ...(options.retentionIntervalMs === undefined ? {} : { intervalMs: options.retentionIntervalMs }),
  })
  log.info('askbridge is listening', {
    url,
    inbox: `${url}/inbox`,
    adapters: built.adapters.map((a) => a.platform),
    destinations: built.destinations.map((d) => `${d.platform}${d.channel ? `:${d.channel}` : ''}`),
    auth: config.ASKBRIDGE_API_TOKEN ? 'bearer token' : 'loopback only',
    inboxSignIn: signIn ? 'OpenID Connect' : 'off',
  })
  let closing: Promise<void> | undefined
  return {
    url,
    inboxUrl: signIn ? `${url}/inbox` : `${url}${inboxLinks.issue()}`,
    service,
    store,
    chat,
    web: built.web,
    adapters: built.adapters,
    http,
    close() {
      closing ??= (async () => {
        log.info('askbridge is shutting down')
        http.stopIntake()
        unfollow()
        await stopRetention()
        // A restart, not an ending: waiting calls stay open in the log, cards stay as they are.
        await service.close({ keepCalls: true })
        // Adapters finish their acknowledgements and pending card updates here.
        await chat.stop().catch((error: unknown) => log.error('stopping adapters failed', { error }))
        await http.close()
        await store.close()
        log.info('askbridge stopped')
      })()
      return closing
    },
  }
}

/** Inbox sign-in when ASKBRIDGE_OIDC_* are set (the redirect URI from configuration only). */
async function startSignIn(
  config: Config,
  store: Store,
  log: Logger,
  session: ServeOptions['inboxSession'],
): Promise<InboxSignIn | undefined> {
  const issuer = config.ASKBRIDGE_OIDC_ISSUER
  const clientId = config.ASKBRIDGE_OIDC_CLIENT_ID
  const clientSecret = config.ASKBRIDGE_OIDC_CLIENT_SECRET
  if (!issuer || !clientId || !clientSecret) return undefined
  const redirectUri = redirectUriOf(config)
  if (!redirectUri) {
    throw new ConfigError([
      'ASKBRIDGE_OIDC_REDIRECT_URI or ASKBRIDGE_PUBLIC_URL is needed with ASKBRIDGE_OIDC_ISSUER',
    ])
  }
  return InboxSignIn.discover({
    issuer,
    clientId,
    clientSecret,
    redirectUri,
    secureCookies: secureCookiesOf(config),
    sessions: store,
    logger: log,
    ...(session?.ttlMs === undefined ? {} : { sessionTtlMs: session.ttlMs }),
    ...(session?.now ? { now: session.now } : {}),
  })
}

/**
 * `excludeRequester` needs to know whom an agent acts for: an agent token naming a `requester`,
 * or a `people` entry listing the agents a person runs. Without either, the routes that set it
 * are named at start.
 */
function warnUnknownRequesters(routes: RoutesFile | undefined, config: Config, log: Logger): void {
  const byToken = (config.ASKBRIDGE_AGENT_TOKENS ?? []).some((t) => t.requester !== undefined)
  const byPeople = Object.values(routes?.people ?? {}).some((p) => typeof p !== 'string' && p.agents?.length)
  if (byToken || byPeople) return
  const excluding = (routes?.routes ?? []).filter((r) => r.excludeRequester).map((r) => r.name)
  if (excluding.length === 0) return
  log.warn('excludeRequester cannot exclude anyone yet', {
    routes: excluding,
    why: 'no agent token names a requester (ASKBRIDGE_AGENT_TOKENS "requester") and no people entry lists "agents", so no ask says whom it is for',
  })
}
