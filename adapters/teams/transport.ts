/**
 * The Bot Framework connector through the Agents SDK's ConnectorClient, within Teams' documented
 * rate limits (limits.ts): calls to one conversation are paced before Teams has to refuse them,
 * a 429 is waited out for its Retry-After and retried, and card updates go newest-wins per
 * message (src/answerer/supersede.ts), so a burst of clicks costs one edit, not one per click.
 *
 * Access tokens come from Microsoft Entra by the client-credentials grant the Bot Framework
 * documents (scope `https://api.botframework.com/.default`), cached until shortly before expiry.
 * The secret is sent only to the token endpoint and never logged.
 */
import { ConnectorClient, HttpError } from '@microsoft/agents-hosting'
import { z } from 'zod'
import type { Logger } from '../../src/adapter-kit.js'
import { AskbridgeError, Superseding } from '../../src/adapter-kit.js'
import { TEAMS_LIMITS as L } from './limits.js'

type ConnectorActivity = Parameters<ConnectorClient['sendToConversation']>[1]

export interface TeamsCredentials {
  appId: string
  appPassword: string
  tenantId: string
  /** Microsoft Entra (TEAMS_AUTHORITY_URL). @default 'https://login.microsoftonline.com' */
  authorityUrl: string
}

/** A Connector or Entra call that failed, or the adapter stopped; `status` is the HTTP status Teams answered. */
export class TeamsTransportError extends AskbridgeError {
  override readonly name = 'TeamsTransportError'
  readonly code = 'TEAMS_TRANSPORT'
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message)
  }
}

/** Client-credentials tokens for the connector, cached. */
export class TokenSource {
  private cached: { token: string; until: number } | undefined
  private pending: Promise<string> | undefined

  constructor(private readonly credentials: TeamsCredentials) {}

  get(): Promise<string> {
    if (this.cached && this.cached.until > Date.now()) return Promise.resolve(this.cached.token)
    this.pending ??= this.fetch().finally(() => {
      this.pending = undefined
    })
    return this.pending
  }

  private async fetch(): Promise<string> {
    const { appId, appPassword, tenantId, authorityUrl } = this.credentials
    const res = await fetch(
      `${authorityUrl.replace(/\/+$/, '')}/${encodeURIComponent(tenantId)}/oauth2/v2.0/token`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: appId,
          client_secret: appPassword,
          scope: 'https://api.botframework.com/.default',
        }).toString(),
        signal: AbortSignal.timeout(10_000),
      },
    )
    const body = (await res.json().catch(() => ({}))) as {
      access_token?: unknown
      expires_in?: unknown
      error?: unknown
    }
    if (!res.ok || typeof body.access_token !== 'string') {
      // The error code only (AADSTS text may quote the app id, never the secret).
      throw new TeamsTransportError(
        `Microsoft Entra refused the bot's credentials (HTTP ${res.status}${typeof body.error === 'string' ? `, ${body.error}` : ''}): check TEAMS_APP_ID, TEAMS_APP_PASSWORD and TEAMS_TENANT_ID`,
        res.status,
      )
    }
    const seconds = typeof body.expires_in === 'number' ? body.expires_in : 3600
    this.cached = { token: body.access_token, until: Date.now() + Math.max(60, seconds - 300) * 1000 }
    return body.access_token
  }
}

export interface TransportOptions {
  serviceUrl: string
  tokens: TokenSource
  log: Logger
  /** Pace calls per conversation before Teams refuses them. @default true */
  pace?: boolean
  /** How often one call may be rate-limited before it fails. @default 20 */
  maxRetries?: number
}

/** One person in a conversation's roster (TeamsChannelAccount). */
export interface RosterMember {
  /** Teams user id (`29:…`). */
  id: string
  /** Microsoft Entra object id. */
  aadObjectId?: string
  name?: string
  email?: string
  userPrincipalName?: string
}

/** Members per roster page: Teams reads 50 to 500. */
const ROSTER_PAGE_SIZE = 500
/** Pages read at most (100 000 members). */
const ROSTER_PAGES = 200

const pagedMembersSchema = z.looseObject({
  continuationToken: z.string().nullish(),
  members: z.array(
    z.looseObject({
      id: z.string().min(1).max(512),
      aadObjectId: z.string().max(64).nullish(),
      name: z.string().max(512).nullish(),
      email: z.string().max(320).nullish(),
      userPrincipalName: z.string().max(320).nullish(),
    }),
  ),
})

interface Update {
  conversationId: string
  activityId: string
  activity: unknown
}

export class TeamsTransport {
  private readonly serviceUrl: string
  private readonly tokens: TokenSource
  private readonly log: Logger
  private readonly pace: boolean
  private readonly maxRetries: number
  private readonly ops = new Map<string, number[]>()
  private readonly updates = new Superseding<Update>()
  private client: { token: string; client: ConnectorClient } | undefined
  private stopped = false
  /** Calls made, by kind (benchmarks). */
  readonly calls = { send: 0, update: 0, member: 0, roster: 0, conversation: 0 }

  constructor(options: TransportOptions) {
    this.serviceUrl = options.serviceUrl
    this.tokens = options.tokens
    this.log = options.log
    this.pace = options.pace ?? true
    this.maxRetries = options.maxRetries ?? 20
  }

  stop(): void {
    this.stopped = true
    this.updates.rejectWaiting(new TeamsTransportError('the Teams adapter stopped'))
  }

  /** POST a message to a conversation; the new activity's id. */
  async send(conversationId: string, activity: unknown): Promise<string> {
    const res = await this.call(conversationId, (c) => {
      this.calls.send++
      return c.sendToConversation(conversationId, activity as ConnectorActivity)
    })
    if (!res?.id) throw new TeamsTransportError('Teams accepted the message but returned no id')
    return res.id
  }

  /** Replace a message, newest wins: a waiting older update of the same message is dropped. */
  update(conversationId: string, activityId: string, activity: unknown): Promise<void> {
    const key = `${conversationId}|${activityId}`
    const done = this.updates.offer(key, { conversationId, activityId, activity })
    void this.updates.send(key, (u) => this.sendUpdate(u))?.then(() => this.drain(key))
    return done
  }

  private drain(key: string): void {
    if (this.updates.peek(key) === undefined) return
    void this.updates.send(key, (u) => this.sendUpdate(u))?.then(() => this.drain(key))
  }

  private sendUpdate(u: Update): Promise<unknown> {
    return this.call(u.conversationId, (c) => {
      this.calls.update++
      return c.updateActivity(u.conversationId, u.activityId, {
        ...(u.activity as object),
        id: u.activityId,
      } as unknown as ConnectorActivity)
    })
  }

  /** A conversation member (e-mail, Entra object id), or undefined when Teams does not know them. */
  async member(
    conversationId: string,
    userId: string,
  ): Promise<{ id?: string; email?: string; name?: string } | undefined> {
    try {
      const m = (await this.call(conversationId, (c) => {
        this.calls.member++
        return c.getConversationMember(userId, conversationId)
      })) as { id?: unknown; email?: unknown; userPrincipalName?: unknown; name?: unknown }
      const email = typeof m.email === 'string' ? m.email : undefined
      return {
        ...(typeof m.id === 'string' && m.id ? { id: m.id } : {}),
        ...(email ? { email } : {}),
        ...(typeof m.name === 'string' ? { name: m.name } : {}),
      }
    } catch (error) {
      if (error instanceof TeamsTransportError && error.status === 404) return undefined
      throw error
    }
  }

  /**
   * Everyone in a team or channel conversation (the roster), page by page through
   * `GET /v3/conversations/{id}/pagedmembers`: the paged call Teams asks bots to use (the SDK's
   * ConnectorClient has no method for it, so its authenticated HTTP client makes the call).
   * Undefined when the bot is not in that conversation (403/404).
   */
  async roster(conversationId: string): Promise<RosterMember[] | undefined> {
    const out: RosterMember[] = []
    let continuationToken: string | undefined
    for (let page = 0; page < ROSTER_PAGES; page++) {
      let res: unknown
      try {
        res = await this.call(conversationId, async (c) => {
          this.calls.roster++
          const r = await c.httpClient.get(
            `v3/conversations/${encodeURIComponent(conversationId)}/pagedmembers`,
            { params: { pageSize: String(ROSTER_PAGE_SIZE), continuationToken } },
          )
          return r.data
        })
      } catch (error) {
        if (error instanceof TeamsTransportError && (error.status === 403 || error.status === 404))
          return undefined
        throw error
      }
      const parsed = pagedMembersSchema.safeParse(res)
      if (!parsed.success) throw new TeamsTransportError('Teams answered the roster with an unexpected shape')
      for (const m of parsed.data.members) {
        const entry: RosterMember = { id: m.id }
        if (m.aadObjectId) entry.aadObjectId = m.aadObjectId
        if (m.name) entry.name = m.name
        if (m.email) entry.email = m.email
        if (m.userPrincipalName) entry.userPrincipalName = m.userPrincipalName
        out.push(entry)
      }
      continuationToken = parsed.data.continuationToken || undefined
      if (!continuationToken) return out
    }
    this.log.warn('a Teams roster has more pages than askbridge reads', {
      conversationId,
      members: out.length,
    })
    return out
  }

  /** The one-to-one conversation with a user (for private notices). */
  async oneToOne(userId: string, tenantId: string, botId: string): Promise<string> {
    const res = await this.call('', (c) => {
      this.calls.conversation++
      return c.createConversation({
        isGroup: false,
        bot: { id: botId, name: 'askbridge' },
        members: [{ id: userId, name: '' }],
        tenantId,
        channelData: { tenant: { id: tenantId } },
      } as unknown as Parameters<ConnectorClient['createConversation']>[0])
    })
    if (!res?.id) throw new TeamsTransportError('Teams created no conversation')
    return res.id
  }

  private async connector(): Promise<ConnectorClient> {
    const token = await this.tokens.get()
    if (this.client?.token !== token)
      this.client = { token, client: ConnectorClient.createClientWithToken(this.serviceUrl, token) }
    return this.client.client
  }

  /** One connector call: paced per conversation, retried after a 429's Retry-After. */
  private async call<T>(conversationId: string, op: (c: ConnectorClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) throw new TeamsTransportError('the Teams adapter stopped')
      if (this.pace && conversationId) await sleep(this.reserve(conversationId))
      try {
        return await op(await this.connector())
      } catch (error) {
        if (!(error instanceof HttpError)) throw error
        const status = error.response.status
        if (status === 429 && attempt < this.maxRetries) {
          const header = Number(error.response.headers.get('retry-after'))
          const waitMs = (Number.isFinite(header) && header >= 0 ? header : 1) * 1000
          this.log.warn('Teams rate limit: waiting', { conversationId, waitMs })
          await sleep(waitMs)
          continue
        }
        if (status === 401) this.client = undefined
        const data = error.response.data as { error?: { code?: unknown; message?: unknown } } | undefined
        const code = typeof data?.error?.code === 'string' ? data.error.code : ''
        throw new TeamsTransportError(
          `Teams refused the call (HTTP ${status}${code ? `, ${code}` : ''})`,
          status,
        )
      }
    }
  }

  /** Take a slot in the conversation's windows; ms until it is there. */
  private reserve(conversationId: string): number {
    const now = Date.now()
    const longest = Math.max(...L.perConversation.map((w) => w.windowMs))
    const list = (this.ops.get(conversationId) ?? []).filter((t) => now - t < longest)
    let at = now
    for (const w of L.perConversation) {
      const recent = list.filter((t) => at - t < w.windowMs)
      // Keep one below each limit: other bridges or Teams' own accounting may differ a little.
      const ops = Math.max(1, w.ops - 1)
      if (recent.length >= ops) at = Math.max(at, (recent[recent.length - ops] ?? at) + w.windowMs)
    }
    list.push(at)
    this.ops.set(conversationId, list)
    return at - now
  }
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()
}
