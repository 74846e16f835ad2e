/** The web inbox adapter (WebAdapter): its routes (page, cards, events, clicks, holds) and live pushes; card lookups in cards.ts. */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type {
  CardAction,
  CardHost,
  CardState,
  ChatAdapter,
  Destination,
  Notice,
  Person,
} from '../../src/adapter-kit.js'
import {
  cardRef,
  describeZodError,
  FINISHED_STATUSES,
  LIVE_STATUSES,
  type Logger,
  silentLogger,
} from '../../src/adapter-kit.js'
import { readJson, sendJson as send } from '../../src/server/body.js'
import { errorResponse, HttpError } from '../../src/server/errors.js'
import type { InboxContext } from '../../src/server/http.js'
import { Router } from '../../src/server/router.js'
import type { SignedInUser } from '../../src/server/signin.js'
import { openSse, type SseStream } from '../../src/server/sse.js'
import { actionRequestSchema, holdRequestSchema, withCardLabels } from './actions.js'
import { serveClientFile } from './assets.js'
import { InboxCards, type InboxStore } from './cards.js'
import type {
  WebActionReply,
  WebCardList,
  WebCardView,
  WebFyi,
  WebFyiList,
  WebMe,
  WebNotice,
} from './client/types.js'
import { feedParams, settledPage } from './feed.js'
import { INBOX_CSP, inboxPage } from './page.js'
import { TOOL_PAGE_CSP, toolInputPage } from './tool-page.js'
import { cardToWebView } from './view.js'

/** Options of {@link WebAdapter}. */
export interface WebAdapterOptions {
  /** Where failed inbox requests are logged. @default silent */
  logger?: Logger
  /**
   * Where cards and posts live (the bridge's store): the inbox then lists every card posted to
   * it, also after a restart. Without a store it shows the cards it was given since it started.
   */
  store?: InboxStore
  /** How many finished cards one page of the inbox's settled list shows ("Show older" loads the next). @default 30 */
  recentLimit?: number
  /** SSE heartbeat interval. @default 15000 */
  heartbeatMs?: number
  /**
   * How long "Take my time" holds a wait without a sign of life from the page: an open tab
   * renews it every 10 s, so a closed one lets go within this. @default 30000
   */
  holdLeaseMs?: number
  /** @default Date.now */
  now?: () => number
}

/** What `post` returns and `update` receives. */
export interface WebRef {
  web: true
  callId: string
  agentId: string
}

/**
 * The local web inbox: the zero-configuration channel. Cards live in the store; this adapter
 * serves the page, lists cards, streams card changes to open pages over SSE, and turns clicks
 * into card interactions.
 */
export class WebAdapter implements ChatAdapter {
  readonly platform = 'web' as const
  readonly holdLeaseMs: number
  private host: CardHost | undefined
  private readonly log: Logger
  private readonly store: WebAdapterOptions['store']
  private readonly recentLimit: number
  private readonly heartbeatMs: number
  private readonly now: () => number
  private readonly clients = new Set<SseStream>()
  private readonly cards: InboxCards
  private readonly routes = new Router()
  /** Notices without buttons, newest first (the last `recentLimit`, since this bridge started). */
  private readonly notices: WebFyi[] = []
  /** Who is signed in, per request being served (inbox sign-in). */
  private readonly signedIn = new WeakMap<IncomingMessage, SignedInUser>()
  private stopped = false

  constructor(options: WebAdapterOptions = {}) {
    this.log = options.logger ?? silentLogger
    this.store = options.store
    this.cards = new InboxCards(options.store)
    this.recentLimit = options.recentLimit ?? 30
    this.heartbeatMs = options.heartbeatMs ?? 15_000
    this.holdLeaseMs = options.holdLeaseMs ?? 30_000
    this.now = options.now ?? Date.now
    this.routes
      .add('GET', '/', ({ res }) => {
        res.writeHead(302, { location: '/inbox' }).end()
      })
      .add('GET', '/inbox', ({ res }) => this.page(res))
      .add('GET', '/inbox/client/:file', ({ res, params }) => serveClientFile(res, params.file ?? ''))
      .add('GET', '/inbox/api/cards', ({ res, url }) => this.listCards(res, url))
      .add('GET', '/inbox/api/me', ({ req, res }) => this.me(req, res))
      .add('GET', '/inbox/api/notices', ({ res }) =>
        send(res, 200, { notices: this.notices, limit: this.recentLimit } satisfies WebFyiList),
      )
      .add('GET', '/inbox/tool/:callId', ({ res, params }) => this.toolInput(res, params.callId ?? ''))
      .add('GET', '/inbox/api/events', ({ req, res }) => this.events(req, res))
      .add('POST', '/inbox/api/cards/:callId/actions', ({ req, res, params, url }) =>
        this.action(req, res, params.callId ?? '', url.searchParams.get('agentId') ?? undefined),
      )
      .add('POST', '/inbox/api/cards/:callId/hold', ({ req, res, params, url }) =>
        this.renewHold(req, res, params.callId ?? '', url.searchParams.get('agentId') ?? undefined),
      )
  }

  /** The pattern of the inbox route a path matches (the metrics label). */
  routeOf(pathname: string): string | undefined {
    return this.routes.pattern(pathname)
  }

  /** How many pages are connected (for metrics). */
  get connections(): number {
    return this.clients.size
  }

  async start(host: CardHost): Promise<void> {
    this.host = host
    this.stopped = false
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const c of this.clients) c.close()
    this.clients.clear()
  }

  async post(card: CardState, _destination: Destination): Promise<WebRef> {
    this.cards.remember(card)
    await this.broadcastLatest(card)
    return { web: true, callId: card.callId, agentId: card.agentId }
  }

  async update(card: CardState, _ref: unknown): Promise<void> {
    this.cards.remember(card)
    await this.broadcastLatest(card)
  }

  /** A notice without buttons: listed on the page (the page escapes it as text) and pushed live. */
  async postNotice(notice: Notice, _destination: Destination): Promise<{ web: true; noticeId: string }> {
    this.notices.unshift(notice)
    this.notices.splice(this.recentLimit)
    this.broadcast('fyi', notice)
    return { web: true, noticeId: notice.id }
  }

  async notify(person: Person, text: string, ref?: unknown): Promise<void> {
    const { callId, agentId } = (ref ?? {}) as Partial<WebRef>
    const notice: WebNotice = {
      userId: person.userId,
      text,
      ...(callId ? { callId, agentId: agentId ?? 'default' } : {}),
    }
    this.broadcast('notice', notice)
  }

  /**
   * Serve the inbox routes. Resolves true when the request was the inbox's (answered here),
   * false when it belongs to someone else. Authentication is the caller's job.
   */
  async handleHttp(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    context: InboxContext = {},
  ): Promise<boolean> {
    if (context.user) this.signedIn.set(req, context.user)
    const match = this.routes.match(req.method ?? 'GET', url.pathname)
    if (!('handler' in match)) {
      if (match.allowed.length === 0) return false
      const { status, body } = errorResponse(new HttpError('METHOD_NOT_ALLOWED', 'method not allowed'))
      send(res, status, body, { allow: match.allowed.join(', ') })
      return true
    }
    try {
      await match.handler({ req, res, url, params: match.params })
    } catch (error) {
      // Answered with the coded error and logged like every other route's failure.
      const { status, body } = errorResponse(error)
      if (status >= 500 && status !== 503)
        this.log.error('inbox request failed', { path: url.pathname, error })
      else this.log.info('inbox request refused', { path: url.pathname, status, code: body.error.code })
      if (!res.headersSent) send(res, status, body)
      else res.end()
    }
    return true
  }

  // ---- routes ----

  private page(res: ServerResponse): void {
    sendPage(res, 200, inboxPage(), INBOX_CSP)
  }

  /** The whole tool input of a hook call (cards link here when they cut it short). */
  private async toolInput(res: ServerResponse, callId: string): Promise<void> {
    const audit = this.store ? await this.store.listAudit({ callId }) : []
    const { status, html } = toolInputPage(callId, audit)
    sendPage(res, status, html, TOOL_PAGE_CSP)
  }

  /** Who the page answers as: the signed-in person (with the session's CSRF token), or nobody. */
  private me(req: IncomingMessage, res: ServerResponse): void {
    const user = this.signedIn.get(req)
    const me: WebMe = user
      ? { signedIn: true, userId: user.email, name: user.name, email: user.email, csrf: user.csrf }
      : { signedIn: false }
    send(res, 200, me, { 'cache-control': 'no-store' })
  }

  /**
   * The cards the page shows: every live card posted to the inbox plus the newest page of finished
   * ones; with `?cursor=` (a previous `nextCursor`) only the next, older page of finished cards.
   */
  private async listCards(res: ServerResponse, url: URL): Promise<void> {
    const { limit, after } = feedParams(url, this.recentLimit)
    const live = after ? [] : await this.cards.cardsWith(LIVE_STATUSES)
    const page = await settledPage(
      (n) => this.cards.cardsWith(FINISHED_STATUSES, n).then((cards) => ({ cards, all: cards.length < n })),
      (card) => this.cards.postedHere(card),
      limit,
      after,
    )
    const shown: WebCardView[] = []
    for (const c of live)
      if (await this.cards.postedHere(c.state)) shown.push(cardToWebView(c.state, c.version))
    for (const c of page.cards) shown.push(cardToWebView(c.state, c.version))
    const list: WebCardList = { cards: shown, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
    send(res, 200, list)
  }

  private events(req: IncomingMessage, res: ServerResponse): void {
    if (this.stopped) throw new HttpError('SHUTTING_DOWN', 'the inbox is shutting down')
    const stream = openSse(req, res, { heartbeatMs: this.heartbeatMs })
    this.clients.add(stream)
    stream.send('hello', { at: this.now() })
    void stream.done.then(() => this.clients.delete(stream))
  }

  /** The page's heartbeat while it holds a wait: `{held: false}` once the hold is gone. */
  private async renewHold(
    req: IncomingMessage,
    res: ServerResponse,
    callId: string,
    agentId: string | undefined,
  ): Promise<void> {
    const parsed = holdRequestSchema.safeParse(await this.readJsonBody(req))
    if (!parsed.success)
      throw new HttpError('BAD_HOLD', `bad hold renewal: ${describeZodError(parsed.error)}`)
    if (!this.host) throw new HttpError('NOT_STARTED', 'the inbox is not started yet')
    const key = await this.cards.resolve(callId, agentId)
    const person = this.actorOf(req, parsed.data.person?.name)
    const held = key ? ((await this.host.renewHold?.(cardRef(key), person)) ?? false) : false
    send(res, 200, { held })
  }

  /** Who acts: the signed-in person (a name in the request is then not used), else the typed name. */
  private actorOf(req: IncomingMessage, name: string | undefined): Person {
    const user = this.signedIn.get(req)
    return user ? { platform: 'web', userId: user.email, name: user.name, email: user.email } : personOf(name)
  }

  /** JSON only: a cross-site form cannot send it without a CORS preflight we never grant. */
  private async readJsonBody(req: IncomingMessage): Promise<unknown> {
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'send the request as application/json')
    }
    return readJson(req)
  }

  private async action(
    req: IncomingMessage,
    res: ServerResponse,
    callId: string,
    agentId: string | undefined,
  ): Promise<void> {
    const parsed = actionRequestSchema.safeParse(await this.readJsonBody(req))
    if (!parsed.success) throw new HttpError('BAD_ACTION', `bad action: ${describeZodError(parsed.error)}`)
    if (!this.host) throw new HttpError('NOT_STARTED', 'the inbox is not started yet')
    const key = await this.cards.resolve(callId, agentId)
    const exists = key && (await this.cards.latest(key))
    if (!key || !exists || !(await this.cards.postedHere(key))) {
      throw new HttpError('NOT_FOUND', `no question "${callId}" in the inbox`)
    }
    const actor = this.actorOf(req, parsed.data.person?.name)
    // JSON cannot carry an explicit undefined, so the parsed action is a CardAction as-is.
    const outcome = await this.host.handle({
      ...cardRef(key),
      interaction: {
        id: parsed.data.id ?? `web-${randomUUID()}`,
        actor,
        action: withCardLabels(parsed.data.action as CardAction, exists.state),
        at: this.now(),
      },
    })
    const stored = this.store ? await this.store.getCard<CardState>(key) : undefined
    const card = stored?.state ?? outcome.card ?? exists.state
    const reply: WebActionReply = {
      ok: outcome.ok,
      ...(outcome.message ? { message: outcome.message } : {}),
      card: cardToWebView(card, stored?.version),
    }
    send(res, 200, reply)
  }

  // ---- pushing changes ----

  /** Send the stored (latest) state, so a late, out-of-order update never rolls a page back. */
  private async broadcastLatest(card: CardState): Promise<void> {
    if (this.clients.size === 0) return
    const latest = await this.cards.latest(card)
    this.broadcast('card', latest ? cardToWebView(latest.state, latest.version) : cardToWebView(card))
  }

  private broadcast(event: string, data: unknown): void {
    for (const c of this.clients) c.send(event, data)
  }
}

/** An inbox page: HTML under its own Content-Security-Policy, never cached, never sniffed. */
function sendPage(res: ServerResponse, status: number, html: string, csp: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  })
  res.end(html)
}

/** Who acts in the inbox: the name the page sends, or the one local user. */
function personOf(rawName: string | undefined): Person {
  const name = rawName?.trim()
  return {
    platform: 'web',
    userId: name ? `web:${name}` : 'local',
    ...(name ? { name } : { name: 'local user' }),
  }
}
