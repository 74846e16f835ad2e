/**
 * A fake Slack for tests, on 127.0.0.1 only: the Web API methods the adapter uses, the Socket
 * Mode WebSocket (hello, envelopes, acks, pings), response_url endpoints, and a "person" who clicks
 * buttons, picks from menus and submits modals, producing payloads shaped like Slack's own
 * (see fixtures/README.md). Every payload it receives is checked against the documented
 * limits and refused with Slack's real error (`invalid_blocks`, `msg_blocks_too_long`, …), so
 * renderer bugs fail tests. It can sign and send HTTP interactivity requests, and inject 429s
 * with Retry-After. It enforces Slack's documented rate limits (limits.ts) unless told not to.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type WebSocket, WebSocketServer } from 'ws'
import { SlackLimits } from './limits.js'
import { checkMessage, checkView, mentionsIn, type Problem } from './validate.js'

type Json = Record<string, unknown>

export interface FakeSlackOptions {
  /** @default 'xoxb-fake' */
  botToken?: string
  /** @default 'xapp-test-token' */
  appToken?: string
  /** @default 'test-signing-secret' */
  signingSecret?: string
  /** How often the Socket Mode server pings. @default 5000 */
  pingIntervalMs?: number
  /** How long a trigger_id stays usable. @default 3000 */
  triggerTtlMs?: number
  /** How long Slack waits for an ack. @default 3000 */
  ackTimeoutMs?: number
  /**
   * Enforce Slack's documented rate limits (limits.ts): 429 with Retry-After past them. Turn off
   * only in tests about something else whose adapter does not pace. @default true
   */
  rateLimits?: boolean
  /** Run the rate limits' clock this many times faster (benchmarks). @default 1 */
  limitSpeed?: number
}

export interface FakeUser {
  id: string
  name?: string
  locale?: string
}

export interface StoredMessage {
  channel: string
  ts: string
  text: string
  blocks: Json[]
  /** The call this message belongs to (from our component ids when first posted). */
  callId?: string
  /** Every version, oldest first. */
  history: { text: string; blocks: Json[] }[]
  /** Message metadata (`event_type`, `event_payload`) as posted; Slack keeps it with the message. */
  metadata?: Json
}

export interface Ephemeral {
  channel?: string
  user: string
  text: string
  via: 'chat.postEphemeral' | 'response_url' | 'dm'
}

export interface OpenView {
  id: string
  user: string
  view: Json
  hash: string
  open: boolean
}

export interface ApiCall {
  method: string
  args: Json
  ok: boolean
  error?: string
  status: number
}

export interface Delivery {
  /** What the app acked with (Socket Mode payload or HTTP body), if anything. */
  ack?: unknown
  /** HTTP status (HTTP mode). */
  status?: number
  /** The app did not ack within Slack's deadline. */
  timedOut: boolean
}

const BOT_USER = 'U0FAKEBOT'
const TEAM = { id: 'T0FAKE', domain: 'fake-workspace' }
const APP_ID = 'A0FAKEAPP'

/** How a request is signed: another secret or timestamp, a given or no signature, a retry. */
interface SignOptions {
  secret?: string
  timestamp?: number
  signature?: string | null
  retry?: number
  url?: string
}

export class FakeSlack {
  readonly options: Required<FakeSlackOptions>
  /** How many calls the documented rate limits refused with 429 (injected faults not counted). */
  limited = 0
  readonly calls: ApiCall[] = []
  readonly messages = new Map<string, StoredMessage>()
  readonly ephemerals: Ephemeral[] = []
  readonly views = new Map<string, OpenView>()
  readonly usergroups = new Map<string, string[]>()
  /** The workspace's people, for users.info and users.lookupByEmail. */
  readonly users = new Map<string, { name: string; locale?: string; email?: string }>()
  /** Deliveries Slack would count as failed (no ack within 3 s). */
  ackTimeouts = 0
  /** HTTP interactivity target, for HTTP mode. */
  interactivityUrl: string | undefined
  /** Mentions found in everything posted (to prove agent text never pings anyone). */
  readonly mentions: string[] = []

  #server: Server
  #wss: WebSocketServer
  #sockets = new Set<WebSocket>()
  #pings: NodeJS.Timeout | undefined
  #port = 0
  #seq = 0
  #triggers = new Map<string, { expires: number; used: boolean; user: string }>()
  #responseUrls = new Map<string, { channel?: string; user: string; uses: number }>()
  #pendingAcks = new Map<string, (payload: unknown) => void>()
  #faults: { method: string; remaining: number; status: number; retryAfter?: number; error?: string }[] = []
  #delays = new Map<string, number>()
  #holds = new Map<string, Promise<void>>()
  #socketWaiters: (() => void)[] = []
  #limits: SlackLimits | undefined

  private constructor(options: FakeSlackOptions) {
    this.options = {
      botToken: options.botToken ?? 'xoxb-fake',
      appToken: options.appToken ?? 'xapp-test-token',
      signingSecret: options.signingSecret ?? 'test-signing-secret',
      pingIntervalMs: options.pingIntervalMs ?? 5000,
      triggerTtlMs: options.triggerTtlMs ?? 3000,
      ackTimeoutMs: options.ackTimeoutMs ?? 3000,
      rateLimits: options.rateLimits ?? true,
      limitSpeed: options.limitSpeed ?? 1,
    }
    this.#limits = this.options.rateLimits ? new SlackLimits({ speed: this.options.limitSpeed }) : undefined
    this.#server = createServer((req, res) => {
      this.#route(req, res).catch((error: unknown) => {
        res.writeHead(500).end(String(error))
      })
    })
    this.#wss = new WebSocketServer({ noServer: true })
    this.#server.on('upgrade', (req, socket, head) => {
      if (!req.url?.startsWith('/socket')) {
        socket.destroy()
        return
      }
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onSocket(ws))
    })
  }

  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const fake = new FakeSlack(options)
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve))
    fake.#port = (fake.#server.address() as AddressInfo).port
    fake.#pings = setInterval(() => {
      for (const ws of fake.#sockets) ws.ping()
    }, fake.options.pingIntervalMs)
    return fake
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`
  }

  /** What to give the adapter as SLACK_API_URL. */
  get apiUrl(): string {
    return `${this.url}/api/`
  }

  async close(): Promise<void> {
    clearInterval(this.#pings)
    for (const ws of this.#sockets) ws.terminate()
    this.#wss.close()
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  // ---- fault injection ----

  /** The next `times` calls to `method` (or `*`) get HTTP 429 with `Retry-After: retryAfter`. */
  rateLimit(method: string, times: number, retryAfter = 1): void {
    this.#faults.push({ method, remaining: times, status: 429, retryAfter, error: 'ratelimited' })
  }

  /** The next `times` calls to `method` answer `{ok:false, error}`. */
  failWith(method: string, error: string, times = 1): void {
    this.#faults.push({ method, remaining: times, status: 200, error })
  }

  /** Every call to `method` takes `ms` longer (a slow Slack). */
  delay(method: string, ms: number): void {
    this.#delays.set(method, ms)
  }

  /**
   * Calls to `method` (`response_url` for posts to a response_url) get no answer until the
   * returned function is called: a Slack that has not answered yet.
   */
  hold(method: string): () => void {
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = () => {
        this.#holds.delete(method)
        resolve()
      }
    })
    this.#holds.set(method, held)
    return release
  }

  // ---- Socket Mode ----

  get socketConnected(): boolean {
    return this.#sockets.size > 0
  }

  async waitForSocket(): Promise<void> {
    if (this.socketConnected) return
    await new Promise<void>((resolve) => this.#socketWaiters.push(resolve))
  }

  /** Ask the client to reconnect, as Slack does when it recycles a connection. */
  disconnectSockets(): void {
    for (const ws of this.#sockets)
      ws.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested' }))
  }

  #onSocket(ws: WebSocket): void {
    this.#sockets.add(ws)
    ws.on('close', () => this.#sockets.delete(ws))
    ws.on('message', (data) => {
      let msg: Json
      try {
        msg = JSON.parse(String(data)) as Json
      } catch {
        return
      }
      const id = msg.envelope_id
      if (typeof id === 'string') this.#pendingAcks.get(id)?.(msg.payload)
    })
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.#sockets.size,
        debug_info: { host: 'fake-slack', approximate_connection_time: 18060 },
        connection_info: { app_id: APP_ID },
      }),
    )
    for (const w of this.#socketWaiters.splice(0)) w()
  }

  // ---- delivering interactivity ----

  /** Deliver a payload the way the app is connected: Socket Mode if connected, else signed HTTP. */
  async deliver(payload: Json, options: { retry?: number } = {}): Promise<Delivery> {
    if (this.socketConnected) return this.#deliverSocket(payload, options.retry)
    if (!this.interactivityUrl)
      throw new Error('the app is neither connected by Socket Mode nor given an HTTP URL')
    const res = await this.sendHttp(payload, options.retry === undefined ? {} : { retry: options.retry })
    return { status: res.status, ack: res.body, timedOut: res.timedOut }
  }

  async #deliverSocket(payload: Json, retry?: number): Promise<Delivery> {
    const [ws] = this.#sockets
    if (!ws) throw new Error('no Socket Mode connection')
    const envelopeId = randomBytes(8).toString('hex')
    const acked = new Promise<unknown>((resolve) => this.#pendingAcks.set(envelopeId, resolve))
    ws.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: 'interactive',
        payload,
        accepts_response_payload: payload.type === 'view_submission',
        ...(retry ? { retry_attempt: retry, retry_reason: 'timeout' } : {}),
      }),
    )
    const timeout = new Promise<'timeout'>((resolve) =>
      setTimeout(() => resolve('timeout'), this.options.ackTimeoutMs),
    )
    const result = await Promise.race([acked, timeout])
    this.#pendingAcks.delete(envelopeId)
    if (result === 'timeout') {
      this.ackTimeouts++
      return { timedOut: true }
    }
    return { ack: result, timedOut: false }
  }

  /** A signed interactivity request as Slack sends it: where, with which headers and body. */
  signedRequest(
    payload: Json,
    options: SignOptions = {},
  ): { url: string; headers: Record<string, string>; body: string } {
    const url = options.url ?? this.interactivityUrl
    if (!url) throw new Error('no interactivity URL')
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`
    const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000)
    const secret = options.secret ?? this.options.signingSecret
    const signature =
      options.signature === undefined
        ? `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`
        : options.signature
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(timestamp),
    }
    if (signature !== null) headers['x-slack-signature'] = signature
    if (options.retry) {
      headers['x-slack-retry-num'] = String(options.retry)
      headers['x-slack-retry-reason'] = 'http_timeout'
    }
    return { url, headers, body }
  }

  /**
   * POST a payload to the HTTP interactivity URL, signed like Slack unless told otherwise.
   * `signature: 'forged'` signs with a wrong secret; `timestamp` can make it stale.
   */
  async sendHttp(
    payload: Json,
    options: SignOptions = {},
  ): Promise<{ status: number; body: unknown; timedOut: boolean }> {
    const { url, headers, body } = this.signedRequest(payload, options)
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), this.options.ackTimeoutMs)
    try {
      const res = await fetch(url, { method: 'POST', headers, body, signal: controller.signal })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = text ? JSON.parse(text) : undefined
      } catch {
        // plain text body
      }
      return { status: res.status, body: parsed, timedOut: false }
    } catch (error) {
      if (controller.signal.aborted) {
        this.ackTimeouts++
        return { status: 0, body: undefined, timedOut: true }
      }
      throw error
    } finally {
      clearTimeout(timer)
    }
  }

  // ---- a person using the app ----

  /** Messages of one call, in posting order. */
  messagesOf(callId: string): StoredMessage[] {
    return [...this.messages.values()].filter((m) => m.callId === callId).sort((a, b) => cmpTs(a.ts, b.ts))
  }

  /** Every interactive element (action_id) currently shown on the call's messages. */
  liveActionIds(callId: string): string[] {
    return this.messagesOf(callId).flatMap((m) =>
      elementsOf(m.blocks).map((e) => String(e.element.action_id)),
    )
  }

  /** Private notices a user has received (ephemeral, response_url, or DM). */
  noticesFor(userId: string): string[] {
    return this.ephemerals.filter((e) => e.user === userId).map((e) => e.text)
  }

  /** The block_actions payload Slack would send when `user` uses element `actionId` on `message`. */
  actionPayload(
    user: FakeUser,
    message: StoredMessage,
    actionId: string,
    choice: { values?: string[] } = {},
    blocks: Json[] = message.blocks,
  ): Json {
    const found = elementsOf(blocks).find((e) => e.element.action_id === actionId)
    if (!found) throw new Error(`no element ${actionId} on message ${message.ts}`)
    const { element, blockId } = found
    const actionTs = this.#newTs()
    const action: Json = { type: element.type, action_id: actionId, block_id: blockId, action_ts: actionTs }
    const optionsOf = (el: Json): Json[] => {
      const direct = Array.isArray(el.options) ? (el.options as Json[]) : []
      const grouped = Array.isArray(el.option_groups)
        ? (el.option_groups as Json[]).flatMap((g) => (Array.isArray(g.options) ? (g.options as Json[]) : []))
        : []
      return [...direct, ...grouped]
    }
    const pick = (value: string) => {
      const option = optionsOf(element).find((o) => o.value === value)
      if (!option) throw new Error(`element ${actionId} has no option with value ${value}`)
      return option
    }
    switch (element.type) {
      case 'button':
        action.text = element.text
        if (element.value !== undefined) action.value = element.value
        if (element.style !== undefined) action.style = element.style
        break
      case 'static_select':
        action.selected_option = pick(choice.values?.[0] ?? '')
        action.placeholder = element.placeholder
        break
      case 'multi_static_select':
        action.selected_options = (choice.values ?? []).map(pick)
        action.placeholder = element.placeholder
        break
      case 'checkboxes':
        action.selected_options = (choice.values ?? []).map(pick)
        break
      default:
        throw new Error(`cannot use a ${String(element.type)}`)
    }
    const triggerId = this.#newTrigger(user.id)
    const responseId = randomBytes(6).toString('hex')
    this.#responseUrls.set(responseId, { channel: message.channel, user: user.id, uses: 0 })
    return {
      type: 'block_actions',
      user: {
        id: user.id,
        username: user.name ?? user.id.toLowerCase(),
        name: user.name ?? user.id.toLowerCase(),
        team_id: TEAM.id,
        ...(user.locale ? { locale: user.locale } : {}),
      },
      api_app_id: APP_ID,
      token: 'fakeVerificationToken',
      container: {
        type: 'message',
        message_ts: message.ts,
        channel_id: message.channel,
        is_ephemeral: false,
      },
      trigger_id: triggerId,
      team: TEAM,
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: message.channel, name: `fake-${message.channel.toLowerCase()}` },
      message: {
        user: BOT_USER,
        type: 'message',
        ts: message.ts,
        bot_id: 'B0FAKEBOT',
        app_id: APP_ID,
        text: message.text,
        team: TEAM.id,
        blocks,
      },
      state: { values: {} },
      response_url: `${this.url}/actions/${responseId}`,
      actions: [action],
    }
  }

  /** A person uses an element of a call's card; returns what the app acked. */
  async use(
    user: FakeUser,
    callId: string,
    actionId: string,
    choice: { values?: string[] } = {},
  ): Promise<{ payload: Json; delivery: Delivery }> {
    const message = this.messagesOf(callId).find((m) =>
      elementsOf(m.blocks).some((e) => e.element.action_id === actionId),
    )
    if (!message) throw new Error(`no live element ${actionId} for call ${callId}`)
    const payload = this.actionPayload(user, message, actionId, choice)
    return { payload, delivery: await this.deliver(payload) }
  }

  /** The newest open modal of a user. */
  openViewOf(userId: string): OpenView | undefined {
    return [...this.views.values()].filter((v) => v.user === userId && v.open).at(-1)
  }

  /** Submit an open modal with text typed into its inputs (`{block_id: {action_id: value}}`). */
  async submitView(
    userId: string,
    viewId: string,
    values: Record<string, Record<string, string>>,
  ): Promise<Delivery> {
    const open = this.views.get(viewId)
    if (!open?.open || open.user !== userId) throw new Error(`view ${viewId} is not open for ${userId}`)
    const stateValues: Json = {}
    for (const [blockId, actions] of Object.entries(values)) {
      stateValues[blockId] = Object.fromEntries(
        Object.entries(actions).map(([actionId, value]) => [actionId, { type: 'plain_text_input', value }]),
      )
    }
    const payload: Json = {
      type: 'view_submission',
      team: TEAM,
      user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: TEAM.id },
      api_app_id: APP_ID,
      token: 'fakeVerificationToken',
      trigger_id: this.#newTrigger(userId),
      view: this.#viewPayload(open, stateValues),
      response_urls: [],
      is_enterprise_install: false,
      enterprise: null,
    }
    const delivery = await this.deliver(payload)
    const ack = delivery.ack as Json | undefined
    if (!(ack && ack.response_action === 'errors')) open.open = false
    return delivery
  }

  /** Close an open modal with Cancel; Slack sends view_closed only when notify_on_close was set. */
  async closeView(userId: string, viewId: string): Promise<Delivery | undefined> {
    const open = this.views.get(viewId)
    if (!open?.open) throw new Error(`view ${viewId} is not open`)
    open.open = false
    if (open.view.notify_on_close !== true) return undefined
    return this.deliver({
      type: 'view_closed',
      team: TEAM,
      user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: TEAM.id },
      api_app_id: APP_ID,
      token: 'fakeVerificationToken',
      view: this.#viewPayload(open, {}),
      is_cleared: false,
      is_enterprise_install: false,
      enterprise: null,
    })
  }

  #viewPayload(open: OpenView, values: Json): Json {
    return {
      id: open.id,
      team_id: TEAM.id,
      type: 'modal',
      blocks: open.view.blocks,
      private_metadata: open.view.private_metadata ?? '',
      callback_id: open.view.callback_id ?? '',
      state: { values },
      hash: open.hash,
      title: open.view.title,
      clear_on_close: false,
      notify_on_close: open.view.notify_on_close === true,
      close: open.view.close ?? null,
      submit: open.view.submit ?? null,
      previous_view_id: null,
      root_view_id: open.id,
      app_id: APP_ID,
      external_id: '',
      app_installed_team_id: TEAM.id,
      bot_id: 'B0FAKEBOT',
    }
  }

  // ---- HTTP routing ----

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url)
    const raw = await readAll(req)
    if (req.method === 'POST' && url.pathname.startsWith('/api/')) {
      return this.#api(url.pathname.slice('/api/'.length), req, raw, res)
    }
    if (req.method === 'POST' && url.pathname.startsWith('/actions/')) {
      await this.#holds.get('response_url')
      return this.#responseUrl(url.pathname.slice('/actions/'.length), raw, res)
    }
    res.writeHead(404).end()
  }

  #responseUrl(id: string, raw: string, res: ServerResponse): void {
    const entry = this.#responseUrls.get(id)
    // Slack allows five uses of a response_url.
    if (!entry || entry.uses >= 5) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('used_url')
      return
    }
    entry.uses++
    const body = JSON.parse(raw || '{}') as Json
    const text = typeof body.text === 'string' ? body.text : ''
    this.#collectMentions(body)
    if (body.response_type === 'ephemeral' || body.replace_original === false) {
      this.ephemerals.push({
        ...(entry.channel ? { channel: entry.channel } : {}),
        user: entry.user,
        text,
        via: 'response_url',
      })
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
  }

  async #api(method: string, req: IncomingMessage, raw: string, res: ServerResponse): Promise<void> {
    const args = parseArgs(raw, String(req.headers['content-type'] ?? ''))
    const auth = String(req.headers.authorization ?? '')
    const token = auth.startsWith('Bearer ')
      ? auth.slice(7)
      : typeof args.token === 'string'
        ? args.token
        : ''
    const record = (status: number, body: Json) => {
      this.calls.push({
        method,
        args,
        ok: body.ok === true,
        ...(typeof body.error === 'string' ? { error: body.error } : {}),
        status,
      })
    }
    const reply = (body: Json, status = 200, headers: Record<string, string> = {}) => {
      record(status, body)
      res
        .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
        .end(JSON.stringify(body))
    }
    const delay = this.#delays.get(method)
    if (delay) await new Promise((r) => setTimeout(r, delay))
    await this.#holds.get(method)

    const fault = this.#faults.find((f) => f.remaining > 0 && (f.method === method || f.method === '*'))
    if (fault) {
      fault.remaining--
      if (fault.status === 429) {
        return reply({ ok: false, error: 'ratelimited' }, 429, {
          'retry-after': String(fault.retryAfter ?? 1),
        })
      }
      return reply({ ok: false, error: fault.error ?? 'internal_error' })
    }

    const wantToken = method === 'apps.connections.open' ? this.options.appToken : this.options.botToken
    if (!token) return reply({ ok: false, error: 'not_authed' })
    if (token !== wantToken) return reply({ ok: false, error: 'invalid_auth' })
    const retryAfter = this.#limits?.check(method, args)
    if (retryAfter !== undefined) {
      this.limited++
      return reply({ ok: false, error: 'ratelimited' }, 429, { 'retry-after': String(retryAfter) })
    }

    const problem = (p: Problem) =>
      reply({
        ok: false,
        error: p.error,
        ...(p.messages.length ? { response_metadata: { messages: p.messages } } : {}),
      })

    switch (method) {
      case 'auth.test':
        return reply({
          ok: true,
          url: `https://${TEAM.domain}.slack.com/`,
          team: 'Fake Workspace',
          user: 'askbridge',
          team_id: TEAM.id,
          user_id: BOT_USER,
          bot_id: 'B0FAKEBOT',
          is_enterprise_install: false,
        })
      case 'apps.connections.open':
        return reply({
          ok: true,
          url: `ws://127.0.0.1:${this.#port}/socket?ticket=${randomBytes(4).toString('hex')}`,
        })
      case 'chat.postMessage': {
        const channel = String(args.channel ?? '')
        if (!channel) return reply({ ok: false, error: 'channel_not_found' })
        const p = checkMessage(args)
        if (p) return problem(p)
        const ts = this.#newTs()
        const blocks = withBlockIds(args.blocks)
        const text = typeof args.text === 'string' ? args.text : ''
        const callId = callIdIn(blocks)
        const metadata = messageMetadata(args.metadata)
        if (metadata === null) return reply({ ok: false, error: 'invalid_metadata_format' })
        const stored: StoredMessage = {
          channel,
          ts,
          text,
          blocks,
          ...(callId ? { callId } : {}),
          ...(metadata ? { metadata } : {}),
          history: [{ text, blocks }],
        }
        this.messages.set(`${channel}:${ts}`, stored)
        this.#collectMentions(args)
        if (channel.startsWith('D')) {
          this.ephemerals.push({ channel, user: channel.slice(1), text, via: 'dm' })
        }
        return reply({
          ok: true,
          channel,
          ts,
          message: { type: 'message', user: BOT_USER, ts, text, blocks, ...(metadata ? { metadata } : {}) },
        })
      }
      case 'conversations.history': {
        // Newest first, `oldest`/`latest` exclusive, cursor pagination; metadata only when
        // include_all_metadata is true (as the real method does).
        const channel = String(args.channel ?? '')
        if (!channel) return reply({ ok: false, error: 'channel_not_found' })
        const limit = Math.min(999, Math.max(1, Number(args.limit ?? 100) || 100))
        const oldest = Number.parseFloat(String(args.oldest ?? '0')) || 0
        const latest =
          args.latest === undefined ? Number.POSITIVE_INFINITY : Number.parseFloat(String(args.latest))
        const withMeta = args.include_all_metadata === true || args.include_all_metadata === 'true'
        const all = [...this.messages.values()]
          .filter((m) => m.channel === channel)
          .filter((m) => Number.parseFloat(m.ts) > oldest && Number.parseFloat(m.ts) < latest)
          .sort((a, b) => Number.parseFloat(b.ts) - Number.parseFloat(a.ts))
        const offset = args.cursor
          ? Number(Buffer.from(String(args.cursor), 'base64').toString().slice(7))
          : 0
        const page = all.slice(offset, offset + limit)
        const more = offset + limit < all.length
        return reply({
          ok: true,
          messages: page.map((m) => ({
            type: 'message',
            user: BOT_USER,
            bot_id: 'B0FAKEBOT',
            ts: m.ts,
            text: m.text,
            blocks: m.blocks,
            ...(withMeta && m.metadata ? { metadata: m.metadata } : {}),
          })),
          has_more: more,
          pin_count: 0,
          response_metadata: {
            next_cursor: more ? Buffer.from(`offset:${offset + limit}`).toString('base64') : '',
          },
        })
      }
      case 'chat.update': {
        const key = `${String(args.channel)}:${String(args.ts)}`
        const stored = this.messages.get(key)
        if (!stored) return reply({ ok: false, error: 'message_not_found' })
        const p = checkMessage(args)
        if (p) return problem(p)
        stored.blocks = withBlockIds(args.blocks)
        stored.text = typeof args.text === 'string' ? args.text : stored.text
        stored.history.push({ text: stored.text, blocks: stored.blocks })
        const callId = stored.callId ?? callIdIn(stored.blocks)
        if (callId) stored.callId = callId
        this.#collectMentions(args)
        return reply({ ok: true, channel: stored.channel, ts: stored.ts, text: stored.text })
      }
      case 'chat.postEphemeral': {
        const p = checkMessage(args)
        if (p) return problem(p)
        if (typeof args.user !== 'string' || !args.user) return reply({ ok: false, error: 'user_not_found' })
        this.#collectMentions(args)
        this.ephemerals.push({
          channel: String(args.channel),
          user: args.user,
          text: typeof args.text === 'string' ? args.text : '',
          via: 'chat.postEphemeral',
        })
        return reply({ ok: true, message_ts: this.#newTs() })
      }
      case 'chat.delete': {
        this.messages.delete(`${String(args.channel)}:${String(args.ts)}`)
        return reply({ ok: true, channel: args.channel, ts: args.ts })
      }
      case 'conversations.open': {
        const users = String(args.users ?? '')
        if (!/^[UW][A-Z0-9]+$/.test(users)) return reply({ ok: false, error: 'user_not_found' })
        return reply({ ok: true, channel: { id: `D${users}` } })
      }
      case 'users.info': {
        const id = String(args.user ?? '')
        const user = this.users.get(id)
        if (!user) return reply({ ok: false, error: 'user_not_found' })
        return reply({
          ok: true,
          user: {
            id,
            name: user.name,
            team_id: TEAM.id,
            ...(args.include_locale === true && user.locale ? { locale: user.locale } : {}),
          },
        })
      }
      case 'users.lookupByEmail': {
        // Slack matches the address case-insensitively and never returns deleted or bot users.
        const email = String(args.email ?? '').toLowerCase()
        if (!email) return reply({ ok: false, error: 'invalid_arguments' })
        const found = [...this.users.entries()].find(([, u]) => u.email?.toLowerCase() === email)
        if (!found) return reply({ ok: false, error: 'users_not_found' })
        const [id, user] = found
        return reply({
          ok: true,
          user: {
            id,
            team_id: TEAM.id,
            name: user.name,
            real_name: user.name,
            deleted: false,
            is_bot: false,
            profile: { email: user.email, real_name: user.name, display_name: user.name },
          },
        })
      }
      case 'usergroups.users.list': {
        const users = this.usergroups.get(String(args.usergroup ?? ''))
        if (!users) return reply({ ok: false, error: 'no_such_subteam' })
        return reply({ ok: true, users })
      }
      case 'views.open': {
        const trigger = this.#triggers.get(String(args.trigger_id ?? ''))
        if (!trigger) return reply({ ok: false, error: 'invalid_trigger_id' })
        if (trigger.used) return reply({ ok: false, error: 'exchanged_trigger_id' })
        if (Date.now() > trigger.expires) return reply({ ok: false, error: 'expired_trigger_id' })
        const p = checkView(args.view)
        if (p) return problem(p)
        trigger.used = true
        const id = `V${String(++this.#seq).padStart(8, '0')}`
        const open: OpenView = {
          id,
          user: trigger.user,
          view: args.view as Json,
          hash: this.#newTs(),
          open: true,
        }
        this.views.set(id, open)
        this.#collectMentions(args.view)
        return reply({ ok: true, view: this.#viewPayload(open, {}) })
      }
      case 'views.update': {
        const open = this.views.get(String(args.view_id ?? ''))
        if (!open) return reply({ ok: false, error: 'not_found' })
        const p = checkView(args.view)
        if (p) return problem(p)
        open.view = args.view as Json
        open.hash = this.#newTs()
        return reply({ ok: true, view: this.#viewPayload(open, {}) })
      }
      default:
        return reply({ ok: false, error: 'unknown_method' })
    }
  }

  #collectMentions(value: unknown) {
    this.mentions.push(...mentionsIn(value))
  }

  #newTs(): string {
    const seconds = Math.floor(Date.now() / 1000)
    return `${seconds}.${String(++this.#seq).padStart(6, '0')}`
  }

  #newTrigger(user: string): string {
    const id = `${++this.#seq}.${TEAM.id}.${randomBytes(8).toString('hex')}`
    this.#triggers.set(id, { expires: Date.now() + this.options.triggerTtlMs, used: false, user })
    return id
  }
}

function cmpTs(a: string, b: string): number {
  const [as, an] = a.split('.').map(Number)
  const [bs, bn] = b.split('.').map(Number)
  return (as ?? 0) - (bs ?? 0) || (an ?? 0) - (bn ?? 0)
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}

/** @slack/web-api sends form-encoded fields, with objects as JSON strings. */
/** The `metadata` argument: absent, or an object with a string event_type and an object payload (null: invalid). */
function messageMetadata(value: unknown): Json | undefined | null {
  if (value === undefined || value === '') return undefined
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      return null
    }
  }
  if (typeof parsed !== 'object' || parsed === null) return null
  const m = parsed as Json
  if (typeof m.event_type !== 'string' || typeof m.event_payload !== 'object' || m.event_payload === null)
    return null
  return { event_type: m.event_type, event_payload: m.event_payload }
}

function parseArgs(raw: string, contentType: string): Json {
  if (contentType.startsWith('application/json')) return raw ? (JSON.parse(raw) as Json) : {}
  const args: Json = {}
  for (const [key, value] of new URLSearchParams(raw)) {
    if ((value.startsWith('[') || value.startsWith('{')) && key !== 'text') {
      try {
        args[key] = JSON.parse(value)
        continue
      } catch {
        // not JSON after all
      }
    }
    args[key] = value === 'true' ? true : value === 'false' ? false : value
  }
  return args
}

/** Slack fills in a block_id on every block that has none. */
function withBlockIds(blocks: unknown): Json[] {
  if (!Array.isArray(blocks)) return []
  return blocks.map((b: Json) =>
    b.block_id ? b : { ...b, block_id: randomBytes(3).toString('base64url').slice(0, 5) },
  )
}

function elementsOf(blocks: Json[]): { element: Json; blockId: string }[] {
  const out: { element: Json; blockId: string }[] = []
  for (const block of blocks) {
    const blockId = String(block.block_id ?? '')
    if (block.type === 'actions' && Array.isArray(block.elements)) {
      for (const el of block.elements as Json[]) out.push({ element: el, blockId })
    }
    if (block.type === 'section' && block.accessory && typeof block.accessory === 'object') {
      out.push({ element: block.accessory as Json, blockId })
    }
  }
  return out
}

/** A call's messages carry its id in block ids (continuations) or component ids. */
function callIdIn(blocks: Json[]): string | undefined {
  const callIdOf = (id: unknown) => {
    const parts = String(id ?? '').split('|')
    // `ab2|<agent tag>|<callId>|...`
    return parts[0] === 'ab2' ? parts[2] : undefined
  }
  for (const block of blocks) {
    const callId = callIdOf(block.block_id)
    if (callId) return callId
  }
  for (const { element } of elementsOf(blocks)) {
    const callId = callIdOf(element.action_id)
    if (callId) return callId
  }
  return undefined
}
