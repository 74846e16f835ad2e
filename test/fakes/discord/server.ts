/**
 * A fake Discord: REST API v10 and a gateway on 127.0.0.1, close enough to the real wire protocol
 * that the real discord.js Client runs against it unchanged (`rest: { api: fake.apiUrl }`).
 *
 * - REST: GET /gateway/bot, GET /users/@me, POST /users/@me/channels, channel messages
 *   POST/PATCH/GET/DELETE, POST /interactions/{id}/{token}/callback, webhooks (follow-ups, @original).
 * - Gateway: HELLO, IDENTIFY, READY (guilds unavailable) then GUILD_CREATE, heartbeats and ACKs,
 *   INTERACTION_CREATE dispatch.
 * - Every payload is checked against the documented limits: 400 with Discord's error shape.
 * - Rate limits (limits.ts): per-route buckets with the X-RateLimit-* headers and the global
 *   50 a second, 429 with retry_after past them (unless turned off).
 * - Faults: injected 429s with retry_after, expired interaction tokens, a 3-second response deadline.
 * - People: `click`, `select`, `submitModal` build real INTERACTION_CREATE payloads from the stored
 *   message and deliver them over the gateway or as signed HTTP requests.
 */
import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebSocket, WebSocketServer } from 'ws'
import { DiscordLimits } from './limits.js'
import { formBodyError, type Violation, validateMessage, validateModal } from './validate.js'

type Json = Record<string, unknown>

const DISCORD_EPOCH = 1420070400000n

export interface FakeUser {
  id: string
  username: string
  global_name?: string
  /** Guild member nickname. */
  nick?: string
  /** Guild role ids. */
  roles?: string[]
  /** The user's client locale. @default 'en-US' */
  locale?: string
}

export interface FakeDiscordOptions {
  /** The only bot token the fake accepts. @default 'discord-test-token' */
  token?: string
  guildId?: string
  channelId?: string
  guildLocale?: string
  /** How interactions reach the bot. @default 'gateway' */
  delivery?: 'gateway' | 'http'
  /** Initial-response deadline; Discord's is 3 s. @default 3000 */
  responseDeadlineMs?: number
  /** Test policy: refuse messages without `allowed_mentions.parse: []`. @default true */
  strictMentions?: boolean
  /** HELLO's heartbeat_interval. @default 41250 (Discord's) */
  heartbeatIntervalMs?: number
  /**
   * Enforce Discord's rate limits (limits.ts). Turn off only in tests about something else.
   * @default true
   */
  rateLimits?: boolean
  /** Run the rate limits' windows this many times faster (benchmarks). @default 1 */
  limitSpeed?: number
}

export interface StoredMessage {
  id: string
  channel_id: string
  content: string
  embeds: Json[]
  components: Json[]
  flags: number
  allowed_mentions?: Json
  author: Json
  timestamp: string
  edited_timestamp: string | null
  /** Every body this message was created or edited with. */
  history: Json[]
  /** The nonce it was created with (kept for enforce_nonce; not returned by GET). */
  nonce?: string
}

export interface InteractionRecord {
  id: string
  token: string
  type: number
  payload: Json
  /** The initial response (callback body, or the HTTP reply body). */
  response?: Json
  followUps: Json[]
  /** Resolves with the initial response. */
  responded: Promise<Json>
  /** Errors the fake returned for this interaction's responses. */
  errors: Json[]
  /** Who acted. */
  userId: string
  /** When it was delivered (epoch ms), for the response deadline. */
  deliveredAt: number
}

export interface RateLimitRule {
  method?: string
  /** Substring of the path. */
  path?: string
  /** How many requests get 429. */
  count: number
  /** Seconds. @default 0.05 */
  retryAfter?: number
}

export interface FailureRule {
  method?: string
  /** Substring of the path. */
  path?: string
  /** Skip this many matching requests first. @default 0 */
  after?: number
  count: number
  /** @default 403 (Missing Permissions) */
  status?: number
  code?: number
  message?: string
}

export interface RequestLog {
  method: string
  path: string
  status: number
  body?: unknown
}

export class FakeDiscord {
  readonly token: string
  readonly applicationId: string
  readonly bot: Json
  readonly guildId: string
  readonly channelId: string
  readonly guildLocale: string
  delivery: 'gateway' | 'http'
  /** Where HTTP interactions go (the adapter's `POST /discord/interactions`). */
  interactionsUrl: string | undefined
  readonly publicKeyHex: string
  readonly messages = new Map<string, StoredMessage>()
  readonly interactions = new Map<string, InteractionRecord>()
  /** Private messages by user id: ephemeral replies and follow-ups, and DMs. */
  readonly notices = new Map<string, string[]>()
  readonly requests: RequestLog[] = []
  readonly rejected: { path: string; violations: Violation[] }[] = []
  readonly identifies: Json[] = []
  /** Injected 429s sent (`rateLimit`). */
  rateLimited = 0
  /** 429s the enforced rate limits sent (route buckets and the global limit). */
  limited = 0
  heartbeats = 0
  resumes = 0

  private readonly http: Server
  private readonly wss: WebSocketServer
  private readonly sockets = new Set<WebSocket>()
  private readonly sessions = new Set<WebSocket>()
  private readonly sessionIds = new Set<string>()
  private readonly dispatched: { s: number; frame: string }[] = []
  private readonly privateKey: KeyObject
  private readonly rules: RateLimitRule[] = []
  private readonly failures: FailureRule[] = []
  private readonly expired = new Set<string>()
  private readonly dms = new Map<string, string>()
  private readonly channels = new Map<
    string,
    { id: string; type: number; guild?: string; recipient?: string }
  >()
  private readonly responseDeadlineMs: number
  private readonly strictMentions: boolean
  private readonly heartbeatIntervalMs: number
  private readonly limits: DiscordLimits | undefined
  private seq = 0
  private counter = 0
  private port = 0
  private readonly waiters = new Set<() => void>()
  private readonly resolvers = new Map<string, (body: Json) => void>()

  /** Another text channel in the guild (before the client connects, so GUILD_CREATE carries it). */
  addChannel(id: string): void {
    this.channels.set(id, { id, type: 0, guild: this.guildId })
  }

  constructor(options: FakeDiscordOptions = {}) {
    this.token = options.token ?? 'discord-test-token'
    this.applicationId = this.snowflake()
    this.bot = {
      id: this.applicationId,
      username: 'askbridge-test',
      discriminator: '0',
      global_name: null,
      bot: true,
    }
    this.guildId = options.guildId ?? '110000000000000001'
    this.channelId = options.channelId ?? '110000000000000003'
    this.guildLocale = options.guildLocale ?? 'en-US'
    this.delivery = options.delivery ?? 'gateway'
    this.responseDeadlineMs = options.responseDeadlineMs ?? 3000
    this.strictMentions = options.strictMentions ?? true
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 41250
    this.limits =
      (options.rateLimits ?? true) ? new DiscordLimits({ speed: options.limitSpeed ?? 1 }) : undefined
    this.channels.set(this.channelId, { id: this.channelId, type: 0, guild: this.guildId })
    const { publicKey, privateKey } = generateKeyPairSync('ed25519')
    this.privateKey = privateKey
    this.publicKeyHex = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex')
    this.http = createServer((req, res) => {
      this.route(req, res).catch((error) => {
        res.writeHead(500).end(JSON.stringify({ message: String(error), code: 0 }))
      })
    })
    this.wss = new WebSocketServer({ server: this.http, path: '/gateway' })
    this.wss.on('connection', (socket) => this.onSocket(socket))
  }

  /** Listen on 127.0.0.1 at a random port. */
  async start(): Promise<this> {
    this.http.listen(0, '127.0.0.1')
    await once(this.http, 'listening')
    this.port = (this.http.address() as AddressInfo).port
    return this
  }

  /** The REST base to give discord.js (`rest.api`) or the adapter (`apiUrl`). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}`
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate()
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
    this.http.closeAllConnections()
    await new Promise<void>((resolve) => this.http.close(() => resolve()))
  }

  // ---- controls ----

  /** The next `count` matching requests get 429 with `retry_after`. */
  rateLimit(rule: RateLimitRule): void {
    this.rules.push({ ...rule })
  }

  /** Fail matching requests with a Discord error (default 403 Missing Permissions, code 50013). */
  fail(rule: FailureRule): void {
    this.failures.push({ ...rule })
  }

  /** Expire interaction tokens (all so far, or one): callbacks 404, webhooks 401. */
  expireTokens(token?: string): void {
    if (token) this.expired.add(token)
    else for (const record of this.interactions.values()) this.expired.add(record.token)
  }

  /** Messages in a channel, oldest first. */
  channelMessages(channelId = this.channelId): StoredMessage[] {
    return [...this.messages.values()].filter((m) => m.channel_id === channelId)
  }

  /** Wait until `check` holds (re-checked after every request); throws after `timeoutMs`. */
  async waitFor<T>(check: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
    const first = check()
    if (first) return first
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(probe)
        reject(new Error('fake Discord: condition not met in time'))
      }, timeoutMs)
      const probe = () => {
        const value = check()
        if (!value) return
        clearTimeout(timer)
        this.waiters.delete(probe)
        resolve(value)
      }
      this.waiters.add(probe)
    })
  }

  private changed(): void {
    for (const probe of [...this.waiters]) probe()
  }

  // ---- people ----

  /**
   * Press a button on a stored message, as `user`. `stale` finds it in an earlier version of the
   * message too, like a client that has not received the latest edit yet.
   */
  async click(
    messageId: string,
    customId: string,
    user: FakeUser,
    options: { stale?: boolean } = {},
  ): Promise<InteractionRecord> {
    return this.deliver(this.prepareClick(messageId, customId, user, options))
  }

  /** Build a button click without delivering it (for forged-request tests). */
  prepareClick(
    messageId: string,
    customId: string,
    user: FakeUser,
    options: { stale?: boolean } = {},
  ): InteractionRecord {
    const { message, component } = this.findComponent(messageId, customId, options.stale)
    if (component.type !== 2) throw new Error(`${customId} is not a button`)
    if (component.disabled) throw new Error(`${customId} is disabled`)
    return this.build(3, { custom_id: customId, component_type: 2 }, message, user)
  }

  /** Choose values (option `value`s) in a select menu on a stored message. */
  select(messageId: string, customId: string, values: string[], user: FakeUser): Promise<InteractionRecord> {
    const { message, component } = this.findComponent(messageId, customId)
    if (component.type !== 3) throw new Error(`${customId} is not a select menu`)
    const options = (component.options as Json[]).map((o) => String(o.value))
    const min = (component.min_values as number | undefined) ?? 1
    const max = (component.max_values as number | undefined) ?? 1
    if (values.length < min || values.length > max)
      throw new Error(`select ${customId}: ${values.length} values`)
    for (const value of values)
      if (!options.includes(value)) throw new Error(`select ${customId}: no option ${value}`)
    return this.deliver(this.build(3, { custom_id: customId, component_type: 3, values }, message, user))
  }

  /** Submit the modal an interaction was answered with, typing `text` into its text input. */
  submitModal(opened: InteractionRecord, text: string, user: FakeUser): Promise<InteractionRecord> {
    const response = opened.response
    if (response?.type !== 9) throw new Error('that interaction did not open a modal')
    const data = response.data as Json
    const components = (data.components as Json[]).flatMap((component): Json[] => {
      if (component.type === 18) {
        const input = component.component as Json
        return [{ type: 18, id: 2, component: { type: 4, id: 3, custom_id: input.custom_id, value: text } }]
      }
      if (component.type === 1) {
        const input = (component.components as Json[])[0] as Json
        return [{ type: 1, id: 2, components: [{ type: 4, id: 3, custom_id: input.custom_id, value: text }] }]
      }
      return []
    })
    const messageId = ((opened.payload.message as Json | undefined)?.id as string | undefined) ?? ''
    const message = this.messages.get(messageId)
    if (!message) throw new Error('the modal came from an unknown message')
    return this.deliver(this.build(5, { custom_id: data.custom_id, components }, message, user))
  }

  /** A message that holds a component with this custom_id (searching every channel). */
  messageWith(customId: string): StoredMessage | undefined {
    return [...this.messages.values()].find((m) => componentsOf(m).some((c) => c.custom_id === customId))
  }

  private findComponent(
    messageId: string,
    customId: string,
    stale = false,
  ): { message: StoredMessage; component: Json } {
    const message = this.messages.get(messageId)
    if (!message) throw new Error(`no message ${messageId}`)
    const versions = stale
      ? [message.components, ...message.history.map((b) => (b.components as Json[] | undefined) ?? [])]
      : [message.components]
    const component = versions
      .flatMap((rows) => rows.flatMap((row) => (row.components as Json[] | undefined) ?? []))
      .find((c) => c.custom_id === customId)
    if (!component) throw new Error(`message ${messageId} has no component ${customId}`)
    return { message, component }
  }

  /** Build an INTERACTION_CREATE payload shaped like the recorded fixtures. */
  private build(type: number, data: Json, message: StoredMessage, user: FakeUser): InteractionRecord {
    const id = this.snowflake()
    const token = `fake-interaction-token-${randomBytes(12).toString('hex')}`
    const channel = this.channels.get(message.channel_id)
    const inGuild = channel?.guild !== undefined
    const apiUser = {
      id: user.id,
      username: user.username,
      global_name: user.global_name ?? null,
      discriminator: '0',
      avatar: null,
      public_flags: 0,
    }
    const payload: Json = {
      app_permissions: '2248473465835073',
      application_id: this.applicationId,
      attachment_size_limit: 10485760,
      channel: inGuild
        ? { id: message.channel_id, guild_id: this.guildId, type: 0, name: 'agent-questions', flags: 0 }
        : { id: message.channel_id, type: 1, flags: 0 },
      channel_id: message.channel_id,
      context: inGuild ? 0 : 1,
      data,
      entitlement_sku_ids: [],
      entitlements: [],
      id,
      locale: user.locale ?? 'en-US',
      message: publicMessage(message),
      token,
      type,
      version: 1,
    }
    if (inGuild) {
      Object.assign(payload, {
        authorizing_integration_owners: { 0: this.guildId },
        guild: { id: this.guildId, locale: this.guildLocale, features: [] },
        guild_id: this.guildId,
        guild_locale: this.guildLocale,
        member: {
          user: apiUser,
          nick: user.nick ?? null,
          roles: user.roles ?? [],
          joined_at: '2026-01-04T20:21:10.139000+00:00',
          deaf: false,
          mute: false,
          flags: 0,
          pending: false,
          permissions: '2248473465835073',
          avatar: null,
        },
      })
    } else payload.user = apiUser

    let resolve: (body: Json) => void = () => {}
    const responded = new Promise<Json>((r) => {
      resolve = r
    })
    const record: InteractionRecord = {
      id,
      token,
      type,
      payload,
      followUps: [],
      responded,
      errors: [],
      userId: user.id,
      deliveredAt: Date.now(),
    }
    this.resolvers.set(id, resolve)
    this.interactions.set(id, record)
    return record
  }

  /** Deliver an interaction over the gateway or as a signed HTTP request. */
  async deliver(record: InteractionRecord): Promise<InteractionRecord> {
    record.deliveredAt = Date.now()
    if (this.delivery === 'gateway') this.dispatch('INTERACTION_CREATE', record.payload)
    else await this.postHttpInteraction(record)
    return record
  }

  /** Send a signed HTTP interaction; a JSON reply is the initial response (202: it came by callback). */
  async postHttpInteraction(record: InteractionRecord, forge = false): Promise<number> {
    if (!this.interactionsUrl) throw new Error('interactionsUrl is not set')
    const body = JSON.stringify(record.payload)
    const timestamp = String(Math.floor(Date.now() / 1000))
    let signature = sign(null, Buffer.from(timestamp + body), this.privateKey).toString('hex')
    if (forge) signature = `${signature.slice(0, -2)}${signature.endsWith('00') ? '01' : '00'}`
    const res = await fetch(this.interactionsUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-signature-ed25519': signature,
        'x-signature-timestamp': timestamp,
      },
      body,
    })
    if (res.status === 200) {
      const reply = (await res.json()) as Json
      this.acceptResponse(record, reply)
    } else await res.arrayBuffer()
    return res.status
  }

  /** Send any body to the HTTP interactions URL with a chosen signature (for forged-request tests). */
  async postRaw(body: string, signature: string, timestamp: string): Promise<number> {
    return (await this.postRawReply(body, signature, timestamp)).status
  }

  /** Like `postRaw`, leaving out a header when it is undefined, with the reply's body. */
  async postRawReply(
    body: string,
    signature: string | undefined,
    timestamp: string | undefined,
  ): Promise<{ status: number; body: string }> {
    if (!this.interactionsUrl) throw new Error('interactionsUrl is not set')
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (signature !== undefined) headers['x-signature-ed25519'] = signature
    if (timestamp !== undefined) headers['x-signature-timestamp'] = timestamp
    const res = await fetch(this.interactionsUrl, { method: 'POST', headers, body })
    return { status: res.status, body: await res.text() }
  }

  /** Sign a body with the application's key (as Discord does). */
  signBody(body: string, timestamp: string): string {
    return sign(null, Buffer.from(timestamp + body), this.privateKey).toString('hex')
  }

  // ---- REST ----

  private log(entry: RequestLog) {
    this.requests.push(entry)
  }

  private send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
    if (body === undefined) res.writeHead(status, headers).end()
    else res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const method = req.method ?? 'GET'
    const raw = await readAll(req)
    const body = raw.length ? (JSON.parse(raw.toString('utf8')) as unknown) : undefined
    const path = url.pathname.replace(/^\/api/, '')
    const reply = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      this.log({ method, path, status, body })
      this.send(res, status, payload, headers)
      this.changed()
    }
    const match = /^\/v10(\/.*)$/.exec(path)
    if (!match?.[1]) return reply(404, { message: '404: Not Found', code: 0 })
    const route = match[1]

    const rule = this.rules.find(
      (r) => r.count > 0 && (!r.method || r.method === method) && (!r.path || route.includes(r.path)),
    )
    if (rule) {
      rule.count--
      this.rateLimited++
      const retryAfter = rule.retryAfter ?? 0.05
      return reply(
        429,
        { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
        {
          'retry-after': String(retryAfter),
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset-after': String(retryAfter),
          'x-ratelimit-bucket': 'fake-bucket',
          'x-ratelimit-scope': 'user',
        },
      )
    }

    const failure = this.failures.find(
      (f) => f.count > 0 && (!f.method || f.method === method) && (!f.path || route.includes(f.path)),
    )
    if (failure) {
      if ((failure.after ?? 0) > 0) failure.after = (failure.after ?? 0) - 1
      else {
        failure.count--
        return reply(failure.status ?? 403, {
          message: failure.message ?? 'Missing Permissions',
          code: failure.code ?? 50013,
        })
      }
    }

    const verdict = this.limits?.check(method, route)
    if (verdict && !verdict.ok) {
      this.limited++
      return reply(verdict.status, verdict.body, verdict.headers)
    }
    const limitHeaders = verdict?.headers ?? {}
    const replyWithLimits = (status: number, payload?: unknown) => reply(status, payload, limitHeaders)

    // Interaction endpoints authenticate by token in the path, not the bot token.
    let m = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(route)
    if (m && method === 'POST') return this.interactionCallback(m[1] ?? '', m[2] ?? '', body, reply)
    m = /^\/webhooks\/(\d+)\/([^/]+)(\/messages\/@original)?$/.exec(route)
    if (m) return this.webhook(m[2] ?? '', m[3] !== undefined, method, body, reply)

    if (req.headers.authorization !== `Bot ${this.token}`)
      return reply(401, { message: '401: Unauthorized', code: 0 })

    if (route === '/gateway/bot' && method === 'GET')
      return reply(200, {
        url: `ws://127.0.0.1:${this.port}/gateway`,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      })
    if (route === '/users/@me' && method === 'GET') return reply(200, this.bot)
    if (route === '/users/@me/channels' && method === 'POST') {
      const recipient = String((body as Json | undefined)?.recipient_id ?? '')
      if (!/^\d+$/.test(recipient))
        return reply(
          400,
          formBodyError([
            { path: ['recipient_id'], code: 'NUMBER_TYPE_COERCE', message: 'Value is not snowflake.' },
          ]),
        )
      let id = this.dms.get(recipient)
      if (!id) {
        id = this.snowflake()
        this.dms.set(recipient, id)
        this.channels.set(id, { id, type: 1, recipient })
      }
      return reply(200, { id, type: 1, recipients: [{ id: recipient, username: 'someone' }] })
    }
    m = /^\/channels\/(\d+)\/messages(?:\/(\d+))?$/.exec(route)
    if (m) return this.channelMessage(m[1] ?? '', m[2], method, body, replyWithLimits, url.searchParams)
    return reply(404, { message: '404: Not Found', code: 0 })
  }

  private reject(path: string, violations: Violation[], reply: (s: number, b?: unknown) => void) {
    this.rejected.push({ path, violations })
    reply(400, formBodyError(violations))
  }

  private channelMessage(
    channelId: string,
    messageId: string | undefined,
    method: string,
    body: unknown,
    reply: (s: number, b?: unknown) => void,
    query: URLSearchParams = new URLSearchParams(),
  ) {
    if (!this.channels.has(channelId)) return reply(404, { message: 'Unknown Channel', code: 10003 })
    if (!messageId) {
      if (method === 'GET') return this.listMessages(channelId, query, reply)
      if (method !== 'POST') return reply(405, { message: '405: Method Not Allowed', code: 0 })
      const violations = validateMessage(body, { strictMentions: this.strictMentions })
      if (violations.length) return this.reject(`POST /channels/${channelId}/messages`, violations, reply)
      const data = body as Json
      const nonce = data.nonce
      if (
        nonce !== undefined &&
        (typeof nonce !== 'string' || nonce.length > 25) &&
        typeof nonce !== 'number'
      )
        return this.reject(
          `POST /channels/${channelId}/messages`,
          [{ path: ['nonce'], code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 25 or fewer in length.' }],
          reply,
        )
      // enforce_nonce: a message with the same nonce from the same author in the last few
      // minutes is returned instead of creating another (Discord's own duplicate guard).
      if (nonce !== undefined && data.enforce_nonce === true) {
        const same = [...this.messages.values()].find(
          (m) =>
            m.nonce === String(nonce) &&
            m.author.id === this.bot.id &&
            Date.now() - Date.parse(m.timestamp) < NONCE_WINDOW_MS,
        )
        if (same) return reply(200, publicMessage(same))
      }
      const message: StoredMessage = {
        id: this.snowflake(),
        channel_id: channelId,
        content: String(data.content ?? ''),
        embeds: (data.embeds as Json[] | undefined) ?? [],
        components: (data.components as Json[] | undefined) ?? [],
        flags: Number(data.flags ?? 0),
        author: this.bot,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        history: [data],
      }
      if (data.allowed_mentions) message.allowed_mentions = data.allowed_mentions as Json
      if (nonce !== undefined) message.nonce = String(nonce)
      this.messages.set(message.id, message)
      const recipient = this.channels.get(channelId)?.recipient
      if (recipient) this.notice(recipient, message.content)
      return reply(200, publicMessage(message))
    }
    const message = this.messages.get(messageId)
    if (!message || message.channel_id !== channelId)
      return reply(404, { message: 'Unknown Message', code: 10008 })
    if (method === 'GET') return reply(200, publicMessage(message))
    if (method === 'DELETE') {
      this.messages.delete(messageId)
      return reply(204)
    }
    if (method !== 'PATCH') return reply(405, { message: '405: Method Not Allowed', code: 0 })
    const violations = validateMessage(body, { partial: true, strictMentions: this.strictMentions })
    if (violations.length)
      return this.reject(`PATCH /channels/${channelId}/messages/${messageId}`, violations, reply)
    this.applyEdit(message, body as Json)
    return reply(200, publicMessage(message))
  }

  /**
   * GET /channels/{id}/messages: `limit` 1-100 (default 50), one of `before`, `after`, `around`;
   * newest first, as Discord returns them. The nonce is not part of a fetched message.
   */
  private listMessages(channelId: string, query: URLSearchParams, reply: (s: number, b?: unknown) => void) {
    const limitRaw = query.get('limit')
    const limit = limitRaw === null ? 50 : Number(limitRaw)
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return reply(
        400,
        formBodyError([
          { path: ['limit'], code: 'NUMBER_TYPE_MAX', message: 'int value should be <= 100 and >= 1.' },
        ]),
      )
    const after = query.get('after')
    const before = query.get('before')
    let list = this.channelMessages(channelId)
    if (after !== null) list = list.filter((m) => BigInt(m.id) > BigInt(after))
    if (before !== null) list = list.filter((m) => BigInt(m.id) < BigInt(before))
    // `after` pages forward from the oldest; otherwise the newest come first.
    const page = after !== null ? list.slice(0, limit) : list.slice(-limit)
    return reply(200, page.reverse().map(publicMessage))
  }

  private applyEdit(message: StoredMessage, data: Json) {
    if ('content' in data) message.content = String(data.content ?? '')
    if ('embeds' in data) message.embeds = (data.embeds as Json[] | null) ?? []
    if ('components' in data) message.components = (data.components as Json[] | null) ?? []
    if ('allowed_mentions' in data) message.allowed_mentions = data.allowed_mentions as Json
    message.edited_timestamp = new Date().toISOString()
    message.history.push(data)
  }

  private interactionCallback(
    id: string,
    token: string,
    body: unknown,
    reply: (s: number, b?: unknown) => void,
  ) {
    const record = this.interactions.get(id)
    if (!record || record.token !== token || this.expired.has(token)) {
      record?.errors.push({ code: 10062 })
      return reply(404, { message: 'Unknown interaction', code: 10062 })
    }
    if (Date.now() - record.deliveredAt > this.responseDeadlineMs) {
      record.errors.push({ code: 10062, late: true })
      return reply(404, { message: 'Unknown interaction', code: 10062 })
    }
    if (record.response) {
      record.errors.push({ code: 40060 })
      return reply(400, { message: 'Interaction has already been acknowledged.', code: 40060 })
    }
    const violations = this.checkResponse(record, body)
    if (violations.length) return this.reject(`POST /interactions/${id}/callback`, violations, reply)
    this.acceptResponse(record, body as Json)
    return reply(204)
  }

  private checkResponse(record: InteractionRecord, body: unknown): Violation[] {
    const data = (body as Json | undefined)?.data
    const type = (body as Json | undefined)?.type
    switch (type) {
      case 1:
        return record.type === 1
          ? []
          : [{ path: ['type'], code: 'INTERACTION_RESPONSE_TYPE_INVALID', message: 'PONG only answers PING' }]
      case 4:
        return validateMessage(data, { strictMentions: this.strictMentions })
      case 5:
      case 6:
        return []
      case 7:
        return validateMessage(data, { partial: true, strictMentions: this.strictMentions })
      case 9:
        if (record.type === 5)
          return [
            {
              path: ['type'],
              code: 'INTERACTION_RESPONSE_TYPE_INVALID',
              message: 'A modal cannot answer a modal submit',
            },
          ]
        return validateModal(data)
      default:
        return [
          {
            path: ['type'],
            code: 'BASE_TYPE_CHOICES',
            message: 'Value must be one of {1, 4, 5, 6, 7, 9, 10, 12}.',
          },
        ]
    }
  }

  /** Record an initial response and apply its effect (ephemeral notice, message update). */
  private acceptResponse(record: InteractionRecord, body: Json) {
    record.response = body
    const user = record.userId
    const data = body.data as Json | undefined
    if (body.type === 4 && data) {
      if ((Number(data.flags ?? 0) & 64) !== 0) this.notice(user, String(data.content ?? ''))
    }
    if (body.type === 7 && data) {
      const messageId = (record.payload.message as Json | undefined)?.id as string | undefined
      const message = messageId ? this.messages.get(messageId) : undefined
      if (message) this.applyEdit(message, data)
    }
    this.resolvers.get(record.id)?.(body)
    this.resolvers.delete(record.id)
    this.changed()
  }

  private webhook(
    token: string,
    original: boolean,
    method: string,
    body: unknown,
    reply: (s: number, b?: unknown) => void,
  ) {
    const record = [...this.interactions.values()].find((r) => r.token === token)
    if (!record || this.expired.has(token)) {
      record?.errors.push({ code: 50027 })
      return reply(401, { message: 'Invalid Webhook Token', code: 50027 })
    }
    if (!record.response) return reply(404, { message: 'Unknown Webhook', code: 10015 })
    const user = record.userId
    if (original) {
      if (method !== 'PATCH') return reply(405, { message: '405: Method Not Allowed', code: 0 })
      const violations = validateMessage(body, { partial: true, strictMentions: this.strictMentions })
      if (violations.length) return this.reject('PATCH /webhooks/@original', violations, reply)
      const messageId = (record.payload.message as Json | undefined)?.id as string | undefined
      const message = messageId ? this.messages.get(messageId) : undefined
      if (!message) return reply(404, { message: 'Unknown Message', code: 10008 })
      this.applyEdit(message, body as Json)
      return reply(200, publicMessage(message))
    }
    if (method !== 'POST') return reply(405, { message: '405: Method Not Allowed', code: 0 })
    const violations = validateMessage(body, { strictMentions: this.strictMentions })
    if (violations.length) return this.reject('POST /webhooks', violations, reply)
    const data = body as Json
    record.followUps.push(data)
    if ((Number(data.flags ?? 0) & 64) !== 0) this.notice(user, String(data.content ?? ''))
    return reply(200, { id: this.snowflake(), content: data.content, flags: data.flags ?? 0 })
  }

  private notice(userId: string, text: string) {
    const list = this.notices.get(userId) ?? []
    list.push(text)
    this.notices.set(userId, list)
  }

  // ---- gateway ----

  private onSocket(socket: WebSocket) {
    this.sockets.add(socket)
    socket.on('close', () => {
      this.sockets.delete(socket)
      this.sessions.delete(socket)
    })
    socket.send(
      JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatIntervalMs }, s: null, t: null }),
    )
    socket.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as { op: number; d: unknown }
      if (frame.op === 1) {
        this.heartbeats++
        socket.send(JSON.stringify({ op: 11, d: null, s: null, t: null }))
      } else if (frame.op === 2) this.identify(socket, frame.d as Json)
      else if (frame.op === 6) this.resume(socket, frame.d as Json)
    })
  }

  private newSession(): string {
    const id = randomBytes(16).toString('hex')
    this.sessionIds.add(id)
    return id
  }

  /** RESUME of a known session: replay what was missed since the client's last sequence, then RESUMED. */
  private resume(socket: WebSocket, d: Json) {
    this.resumes++
    if (d.token !== this.token || !this.sessionIds.has(String(d.session_id))) {
      socket.send(JSON.stringify({ op: 9, d: false, s: null, t: null }))
      return
    }
    const seen = Number(d.seq ?? 0)
    for (const entry of this.dispatched) if (entry.s > seen) socket.send(entry.frame)
    this.sessions.add(socket)
    socket.send(JSON.stringify({ op: 0, t: 'RESUMED', s: ++this.seq, d: {} }))
  }

  /** Gateway sessions that receive dispatches now. */
  get liveSessions(): number {
    return [...this.sessions].filter((s) => s.readyState === WebSocket.OPEN).length
  }

  /** Drop every gateway connection (as Discord does on a server restart); clients resume. */
  disconnectAll(code = 4000): void {
    for (const socket of this.sockets) socket.close(code, 'fake Discord dropped the connection')
  }

  private identify(socket: WebSocket, d: Json) {
    this.identifies.push(d)
    if (d.token !== this.token && d.token !== `Bot ${this.token}`) {
      socket.close(4004, 'Authentication failed.')
      return
    }
    this.sessions.add(socket)
    const frame = (t: string, data: unknown) => JSON.stringify({ op: 0, t, s: ++this.seq, d: data })
    socket.send(
      frame('READY', {
        v: 10,
        user: { ...this.bot, verified: true, mfa_enabled: false, flags: 0 },
        guilds: [{ id: this.guildId, unavailable: true }],
        session_id: this.newSession(),
        resume_gateway_url: `ws://127.0.0.1:${this.port}/gateway`,
        shard: [0, 1],
        application: { id: this.applicationId, flags: 0 },
        private_channels: [],
        user_settings: {},
        relationships: [],
        presences: [],
        guild_join_requests: [],
        geo_ordered_rtc_regions: [],
      }),
    )
    socket.send(
      frame('GUILD_CREATE', {
        id: this.guildId,
        name: 'askbridge test guild',
        icon: null,
        owner_id: '110000000000000099',
        preferred_locale: this.guildLocale,
        features: [],
        unavailable: false,
        member_count: 3,
        large: false,
        joined_at: '2026-01-04T20:39:45.451000+00:00',
        roles: [
          {
            id: this.guildId,
            name: '@everyone',
            permissions: '0',
            position: 0,
            color: 0,
            hoist: false,
            managed: false,
            mentionable: false,
            flags: 0,
          },
        ],
        channels: [
          {
            id: this.channelId,
            type: 0,
            name: 'agent-questions',
            position: 0,
            guild_id: this.guildId,
            permission_overwrites: [],
            flags: 0,
          },
        ],
        threads: [],
        members: [],
        presences: [],
        voice_states: [],
        emojis: [],
        stickers: [],
        stage_instances: [],
        guild_scheduled_events: [],
        soundboard_sounds: [],
      }),
    )
  }

  /** Send a dispatch to every identified session (kept for replay on RESUME, as Discord does). */
  dispatch(t: string, d: unknown): void {
    const s = ++this.seq
    const frame = JSON.stringify({ op: 0, t, s, d })
    this.dispatched.push({ s, frame })
    for (const socket of this.sessions) if (socket.readyState === WebSocket.OPEN) socket.send(frame)
  }

  /** A snowflake for now (timestamp in the high bits, a counter below). */
  snowflake(): string {
    const time = BigInt(Date.now()) - DISCORD_EPOCH
    return ((time << 22n) | BigInt(this.counter++ & 0xfff)).toString()
  }
}

function componentsOf(message: StoredMessage): Json[] {
  return message.components.flatMap((row) => (row.components as Json[] | undefined) ?? [])
}

/** How long Discord remembers a nonce for enforce_nonce ("a few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000

function publicMessage(message: StoredMessage): Json {
  return {
    id: message.id,
    channel_id: message.channel_id,
    type: 0,
    content: message.content,
    embeds: message.embeds,
    components: message.components,
    flags: message.flags,
    author: message.author,
    attachments: [],
    mentions: [],
    mention_roles: [],
    mention_everyone: false,
    pinned: false,
    tts: false,
    timestamp: message.timestamp,
    edited_timestamp: message.edited_timestamp,
  }
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
