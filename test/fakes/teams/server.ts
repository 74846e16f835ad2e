/**
 * A fake Microsoft Teams: the Bot Framework connector and the Microsoft Entra endpoints a bot
 * talks to, on 127.0.0.1, close enough to the wire protocol that the real Agents SDK runs against it.
 *
 * - Entra: `POST /{tenant}/oauth2/v2.0/token` (client credentials -> an access token),
 *   `GET /{tenant}/discovery/v2.0/keys` (the JWKS inbound tokens are checked against) and the
 *   OpenID metadata beside it.
 * - Connector (v3, under `serviceUrl`): send an activity, update an activity, get a member, read
 *   a channel's roster (`members`, and `pagedmembers` with `pageSize` 50–500 and a
 *   continuation token, as Teams pages it), create a one-to-one conversation. Every call needs a token the fake issued; every message is
 *   checked (validate.ts: shape, Adaptive Card 1.5, ~28 KB: 413 past it) and recorded.
 * - Rate limits per conversation as Teams documents them (7/1 s, 8/2 s, 60/30 s): 429 with
 *   Retry-After past them, and injected 429s for tests.
 * - People: `execute` builds a real `adaptiveCard/action` invoke from a button on the card as the
 *   person sees it, signs it with the fake's RSA key (a JWT the way the Bot Framework signs them)
 *   and POSTs it to the bot; the invoke response is recorded, and a message in it is a private
 *   notice. `view` is what a person sees: a card whose `refresh.userIds` lists them is first
 *   refreshed (an `adaptiveCard/action` invoke with the refresh action, as Teams sends it when
 *   the card is shown) and the card in the answer is checked and shown; anyone else sees the
 *   posted card.
 */
import {
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
  sign,
} from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { validateActivity } from './validate.js'

type Json = Record<string, unknown>

export interface FakeTeamsUser {
  /** Microsoft Entra object id. */
  aadObjectId: string
  name: string
  email?: string
  /** User principal name, when it differs from the e-mail address. */
  upn?: string
}

export interface StoredActivity {
  id: string
  conversationId: string
  activity: Json
  /** Every version, oldest first. */
  versions: Json[]
}

export interface InvokeRecord {
  status: number
  body: Json | undefined
}

export interface TeamsRequestLog {
  method: string
  path: string
  status: number
}

export interface FakeTeamsOptions {
  appId?: string
  appPassword?: string
  tenantId?: string
  /** Enforce the per-conversation rate limits. @default true */
  rateLimits?: boolean
}

const WINDOWS = [
  { ops: 7, ms: 1_000 },
  { ops: 8, ms: 2_000 },
  { ops: 60, ms: 30_000 },
]

const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url')

export class FakeTeams {
  readonly appId: string
  readonly appPassword: string
  readonly tenantId: string
  readonly channelId = '19:askbridge-test@thread.tacv2'
  /** Messages the bot sent, by activity id. */
  readonly activities = new Map<string, StoredActivity>()
  /** Private notices per Entra object id: invoke response messages and one-to-one chat messages. */
  readonly notices = new Map<string, string[]>()
  /** Payloads refused (shape or size), with why. */
  readonly rejected: Array<{ path: string; problems: string[] }> = []
  readonly requests: TeamsRequestLog[] = []
  /** Refresh invokes sent to the bot: who asked, and whether the answer had controls. */
  readonly refreshes: Array<{ aadObjectId: string; activityId: string; controls: boolean }> = []
  /** Members the connector knows, by Entra object id (every channel's roster has them all). */
  readonly members = new Map<string, FakeTeamsUser>()
  /** Channels the bot is in (others' rosters answer 404). */
  readonly channels = new Set<string>([this.channelId])
  /** Where invokes go (`http://127.0.0.1:PORT/teams/messages`); set by the test. */
  botUrl = ''
  private server: Server | undefined
  private base = ''
  private readonly key: KeyObject
  private readonly kid = 'fake-teams-key'
  private readonly jwk: Json
  private readonly tokens = new Map<string, number>()
  private readonly ops = new Map<string, number[]>()
  private readonly forced: number[] = []
  private readonly delays: Array<{ part: string; ms: number }> = []
  private readonly oneToOne = new Map<string, string>()
  private readonly rateLimits: boolean
  private seq = 0

  constructor(options: FakeTeamsOptions = {}) {
    this.appId = options.appId ?? '00000000-0000-4000-8000-00000000a11d'
    this.appPassword = options.appPassword ?? 'fake-teams-password'
    this.tenantId = options.tenantId ?? '00000000-0000-4000-8000-0000000007e4'
    this.rateLimits = options.rateLimits ?? true
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
    this.key = pair.privateKey
    this.jwk = {
      ...(pair.publicKey.export({ format: 'jwk' }) as Json),
      kid: this.kid,
      use: 'sig',
      alg: 'RS256',
    }
  }

  /** The authority (TEAMS_AUTHORITY_URL): token and key endpoints live under it. */
  get authorityUrl(): string {
    return this.base
  }

  /** The connector's service URL (TEAMS_SERVICE_URL). */
  get serviceUrl(): string {
    return `${this.base}/amer/`
  }

  /** The issuer of the tokens the fake signs for the bot. */
  get issuer(): string {
    return `${this.base}/${this.tenantId}/v2.0`
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.route(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { code: 'FakeError', message: String(error) } }))
      })
    })
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
  }

  /** Connector calls whose path contains `part` wait this long before they are answered (slow Teams). */
  delay(part: string, ms: number): void {
    this.delays.push({ part, ms })
  }

  /** The next `count` connector calls answer 429 with this Retry-After (seconds). */
  rateLimitNext(count: number, retryAfterS: number): void {
    for (let i = 0; i < count; i++) this.forced.push(retryAfterS)
  }

  addMember(user: FakeTeamsUser): void {
    this.members.set(user.aadObjectId, user)
  }

  /** The activities sent to a conversation, oldest first. */
  conversation(conversationId = this.channelId): StoredActivity[] {
    return [...this.activities.values()].filter((a) => a.conversationId === conversationId)
  }

  /** A JWT as the Bot Framework signs them; `claims` override (tests forge, expire, retarget). */
  signToken(claims: Json = {}, key: KeyObject = this.key): string {
    const now = Math.floor(Date.now() / 1000)
    const header = { alg: 'RS256', typ: 'JWT', kid: this.kid }
    const payload = {
      iss: this.issuer,
      aud: this.appId,
      tid: this.tenantId,
      serviceurl: this.serviceUrl,
      nbf: now - 5,
      iat: now - 5,
      exp: now + 3600,
      ...claims,
    }
    const data = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`
    return `${data}.${b64url(sign('sha256', Buffer.from(data), key))}`
  }

  /** A key that is not the fake's: tokens signed with it are forgeries. */
  static otherKey(): KeyObject {
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    })
    return createPrivateKey(pem)
  }

  /** An `adaptiveCard/action` invoke for a button, as Teams builds it (or for a card's refresh). */
  invokeActivity(
    activityId: string,
    data: Json,
    user: FakeTeamsUser,
    action: { verb: string; trigger: 'manual' | 'automatic' } = { verb: 'askbridge', trigger: 'manual' },
  ): Json {
    const stored = this.activities.get(activityId)
    return {
      type: 'invoke',
      name: 'adaptiveCard/action',
      id: `f:${++this.seq}${randomBytes(4).toString('hex')}`,
      timestamp: new Date().toISOString(),
      serviceUrl: this.serviceUrl,
      channelId: 'msteams',
      from: { id: `29:${user.aadObjectId}`, name: user.name, aadObjectId: user.aadObjectId },
      recipient: { id: `28:${this.appId}`, name: 'askbridge' },
      conversation: {
        id: `${stored?.conversationId ?? this.channelId};messageid=${activityId}`,
        conversationType: 'channel',
        isGroup: true,
        tenantId: this.tenantId,
      },
      replyToId: activityId,
      channelData: {
        tenant: { id: this.tenantId },
        channel: { id: stored?.conversationId ?? this.channelId },
      },
      locale: 'en-US',
      value: { action: { type: 'Action.Execute', verb: action.verb, data }, trigger: action.trigger },
    }
  }

  /** POST an activity to the bot with a bearer token; the HTTP status and JSON body. */
  async deliver(activity: Json, token = this.signToken()): Promise<InvokeRecord> {
    const res = await fetch(this.botUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(activity),
    })
    const text = await res.text()
    let body: Json | undefined
    try {
      body = text ? (JSON.parse(text) as Json) : undefined
    } catch {
      body = { raw: text }
    }
    return { status: res.status, body }
  }

  /**
   * A person uses a button on a stored card: `data` is the button's own data, `inputs` what they
   * entered in the card's inputs (by input id). A message in the invoke response is their notice.
   */
  async execute(
    activityId: string,
    action: Json,
    inputs: Json,
    user: FakeTeamsUser,
    seen?: Json,
  ): Promise<InvokeRecord> {
    this.addMember(user)
    // Teams sends every input of the card with the action: their shown values, then what was typed.
    const shown: Json = {}
    const visit = (x: unknown) => {
      if (Array.isArray(x)) x.forEach(visit)
      else if (x && typeof x === 'object') {
        const el = x as Json
        if (typeof el.type === 'string' && el.type.startsWith('Input.') && typeof el.id === 'string')
          shown[el.id] = typeof el.value === 'string' ? el.value : ''
        for (const v of Object.values(el)) visit(v)
      }
    }
    visit(seen ?? this.activities.get(activityId)?.activity.attachments)
    const data = { ...shown, ...inputs, ...(action.data as Json) }
    const record = await this.deliver(this.invokeActivity(activityId, data, user))
    const body = record.body
    if (record.status === 200 && body?.type === 'application/vnd.microsoft.activity.message')
      this.notice(user.aadObjectId, String(body.value))
    return record
  }

  /** The posted card (its Adaptive Card). */
  card(activityId: string): Json | undefined {
    const attachments = this.activities.get(activityId)?.activity.attachments as Json[] | undefined
    return attachments?.[0]?.content as Json | undefined
  }

  /**
   * The card as this person sees it: refreshed for them when its `refresh.userIds` lists them
   * (the bot's answer must be an Adaptive Card, checked like a message), else the posted card.
   */
  async view(activityId: string, user: FakeTeamsUser): Promise<Json | undefined> {
    const card = this.card(activityId)
    const refresh = card?.refresh as { action?: Json; userIds?: unknown } | undefined
    const listed = Array.isArray(refresh?.userIds) && refresh.userIds.includes(`29:${user.aadObjectId}`)
    if (!card || !refresh?.action || !listed) return card
    const record = await this.deliver(
      this.invokeActivity(activityId, refresh.action.data as Json, user, {
        verb: String(refresh.action.verb),
        trigger: 'automatic',
      }),
    )
    const body = record.body
    if (record.status !== 200 || body?.type !== 'application/vnd.microsoft.card.adaptive')
      throw new Error(`the bot answered a refresh with ${record.status} ${JSON.stringify(body)}`)
    const problems = validateActivity({
      type: 'message',
      attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: body.value }],
    })
    if (problems.length) {
      this.rejected.push({ path: 'refresh invoke response', problems })
      throw new Error(`the refreshed card is malformed: ${problems.join('; ')}`)
    }
    const shown = body.value as Json
    this.refreshes.push({
      aadObjectId: user.aadObjectId,
      activityId,
      controls: JSON.stringify([shown.body, shown.actions]).includes('"Action.Execute"'),
    })
    return shown
  }

  private notice(aadObjectId: string, text: string): void {
    const list = this.notices.get(aadObjectId) ?? []
    list.push(text)
    this.notices.set(aadObjectId, list)
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base)
    const path = url.pathname
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ method: req.method ?? '', path, status })
      res.writeHead(status, { 'content-type': 'application/json', ...headers })
      res.end(body === undefined ? '' : JSON.stringify(body))
    }
    const tenant = `/${this.tenantId}`
    if (req.method === 'GET' && path === `${tenant}/discovery/v2.0/keys`)
      return send(200, { keys: [this.jwk] })
    if (req.method === 'GET' && path === `${tenant}/v2.0/.well-known/openid-configuration`)
      return send(200, {
        issuer: this.issuer,
        jwks_uri: `${this.base}${tenant}/discovery/v2.0/keys`,
        token_endpoint: `${this.base}${tenant}/oauth2/v2.0/token`,
        id_token_signing_alg_values_supported: ['RS256'],
      })
    if (req.method === 'POST' && path === `${tenant}/oauth2/v2.0/token`) {
      const form = new URLSearchParams(await readBody(req))
      if (form.get('grant_type') !== 'client_credentials')
        return send(400, { error: 'unsupported_grant_type', error_description: 'client_credentials only' })
      if (form.get('client_id') !== this.appId || form.get('client_secret') !== this.appPassword)
        return send(401, {
          error: 'invalid_client',
          error_description: 'AADSTS7000215: Invalid client secret provided.',
        })
      if (form.get('scope') !== 'https://api.botframework.com/.default')
        return send(400, {
          error: 'invalid_scope',
          error_description: `unexpected scope ${form.get('scope')}`,
        })
      const token = randomBytes(24).toString('base64url')
      this.tokens.set(token, Date.now() + 3600_000)
      return send(200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token })
    }
    if (!path.startsWith('/amer/v3/')) return send(404, { error: { code: 'NotFound', message: path } })

    // The connector: a token the fake issued, unexpired.
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
    const until = bearer ? this.tokens.get(bearer) : undefined
    if (!until || until < Date.now())
      return send(401, {
        error: { code: 'Unauthorized', message: 'Authorization has been denied for this request.' },
      })
    const slow = this.delays.find((d) => path.includes(d.part))
    if (slow) await new Promise((resolve) => setTimeout(resolve, slow.ms))
    const parts = path.slice('/amer/v3/'.length).split('/').map(decodeURIComponent)
    if (parts[0] !== 'conversations') return send(404, { error: { code: 'NotFound', message: path } })
    const conversationId = parts[1]
    const forced = this.forced.shift()
    if (forced !== undefined)
      return send(
        429,
        { error: { code: 'TooManyRequests', message: 'Too many requests' } },
        { 'retry-after': String(forced) },
      )
    if (conversationId && this.rateLimits) {
      const wait = this.take(conversationId)
      if (wait > 0)
        return send(
          429,
          { error: { code: 'TooManyRequests', message: 'Too many requests' } },
          { 'retry-after': String(Math.ceil(wait / 1000)) },
        )
    }
    // POST /v3/conversations: a one-to-one chat with a member.
    if (req.method === 'POST' && parts.length === 1) {
      const body = JSON.parse(await readBody(req)) as Json
      const members = (body.members as Json[] | undefined) ?? []
      const member = members[0]
      if (members.length !== 1 || typeof member?.id !== 'string' || body.isGroup === true)
        return send(400, { error: { code: 'BadArgument', message: 'one member, isGroup false' } })
      const aad = member.id.replace(/^29:/, '')
      const id = this.oneToOne.get(aad) ?? `a:${randomUUID()}`
      this.oneToOne.set(aad, id)
      return send(201, { id })
    }
    if (!conversationId) return send(404, { error: { code: 'NotFound', message: path } })
    // GET /v3/conversations/{id}/members and /pagedmembers: the channel's roster.
    if (
      req.method === 'GET' &&
      parts.length === 3 &&
      (parts[2] === 'members' || parts[2] === 'pagedmembers')
    ) {
      if (!this.channels.has(conversationId))
        return send(404, { error: { code: 'ConversationNotFound', message: 'the bot is not in it' } })
      const all = [...this.members.values()].map((m) => this.account(m))
      if (parts[2] === 'members') return send(200, all)
      const rawSize = url.searchParams.get('pageSize')
      const size = rawSize === null ? 200 : Number(rawSize)
      const token = url.searchParams.get('continuationToken')
      const from = token === null ? 0 : Number(Buffer.from(token, 'base64url').toString('utf8'))
      if (!Number.isInteger(size) || size < 1 || !Number.isInteger(from) || from < 0 || from > all.length)
        return send(400, { error: { code: 'BadArgument', message: 'pageSize or continuationToken' } })
      // Teams reads a page size under 50 as 50 and caps it at 500.
      const take = Math.min(500, Math.max(50, size))
      const members = all.slice(from, from + take)
      const next =
        from + take < all.length ? Buffer.from(String(from + take)).toString('base64url') : undefined
      return send(200, { members, ...(next ? { continuationToken: next } : {}) })
    }
    // GET /v3/conversations/{id}/members/{userId}
    if (req.method === 'GET' && parts[2] === 'members' && parts[3]) {
      const aad = parts[3].replace(/^29:/, '')
      const m = this.members.get(aad)
      if (!m) return send(404, { error: { code: 'MemberNotFoundInConversation', message: 'not a member' } })
      return send(200, this.account(m))
    }
    if (parts[2] !== 'activities') return send(404, { error: { code: 'NotFound', message: path } })
    const raw = await readBody(req)
    const activity = JSON.parse(raw) as Json
    const problems = validateActivity(activity)
    if (problems.length) {
      this.rejected.push({ path, problems })
      const tooLarge = problems.some((p) => p.includes('bytes, over'))
      return send(tooLarge ? 413 : 400, {
        error: { code: tooLarge ? 'MessageSizeTooBig' : 'BadArgument', message: problems.join('; ') },
      })
    }
    // A message to a one-to-one chat is a private notice.
    const person = [...this.oneToOne.entries()].find(([, id]) => id === conversationId)?.[0]
    if (req.method === 'POST' && parts.length === 3) {
      if (person) this.notice(person, String(activity.text ?? ''))
      const id = `${Date.now()}${++this.seq}`
      this.activities.set(id, { id, conversationId, activity, versions: [activity] })
      return send(201, { id })
    }
    if (req.method === 'PUT' && parts.length === 4 && parts[3]) {
      const stored = this.activities.get(parts[3])
      if (!stored || stored.conversationId !== conversationId)
        return send(404, { error: { code: 'ActivityNotFoundInConversation', message: 'no such activity' } })
      stored.activity = activity
      stored.versions.push(activity)
      return send(200, { id: stored.id })
    }
    return send(405, { error: { code: 'MethodNotAllowed', message: `${req.method} ${path}` } })
  }

  /** A member as Teams reports them (TeamsChannelAccount). */
  private account(m: FakeTeamsUser): Json {
    return {
      id: `29:${m.aadObjectId}`,
      name: m.name,
      aadObjectId: m.aadObjectId,
      ...(m.email ? { email: m.email, userPrincipalName: m.upn ?? m.email } : {}),
      tenantId: this.tenantId,
      userRole: 'user',
    }
  }

  /** Take one operation in a conversation's windows; ms to wait when over. */
  private take(conversationId: string): number {
    const now = Date.now()
    const list = (this.ops.get(conversationId) ?? []).filter((t) => now - t < 30_000)
    for (const w of WINDOWS) {
      const inWindow = list.filter((t) => now - t < w.ms)
      if (inWindow.length >= w.ops) return (inWindow[0] ?? now) + w.ms - now
    }
    list.push(now)
    this.ops.set(conversationId, list)
    return 0
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
