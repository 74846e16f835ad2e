/**
 * The Microsoft Teams adapter, on the Microsoft 365 Agents SDK (`@microsoft/agents-hosting`):
 * cards as Adaptive Cards posted to a channel from its conversation reference (service URL and
 * conversation id), later states with updateActivity, clicks as `adaptiveCard/action` invokes
 * (Universal Actions) answered with the refreshed card.
 *
 * - render.ts / decode.ts / notice.ts are pure;
 * - transport.ts: the SDK's ConnectorClient, paced per conversation, 429s waited out;
 * - inbound requests (`POST /teams/messages`) are verified by the SDK's JWT middleware
 *   (`authorizeJWT`) against Microsoft's published keys: a forged, expired or wrong-audience
 *   token gets 401 and nothing is applied. Verification cannot be turned off.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type AuthConfiguration, authorizeJWT, getAuthConfigWithDefaults } from '@microsoft/agents-hosting'
import { z } from 'zod'
import type { CardState, Destination, Mention, Person } from '../../src/adapter-kit.js'
import {
  type CardHost,
  type ChatAdapter,
  type InteractionOutcome,
  LIVE_STATUSES,
  type Logger,
  type Notice,
  notAppliedMessage,
  respondersOn,
  silentLogger,
  within,
} from '../../src/adapter-kit.js'
import { onCard, type ParsedRefresh, parseInvoke, parseRefresh, readActivity } from './decode.js'
import { TEAMS_LIMITS as L } from './limits.js'
import { noticeToTeamsMessage } from './notice.js'
import { CARD_CONTENT_TYPE, cardToTeamsMessage, type TeamsMention } from './render.js'
import { noMentions } from './text.js'
import { TeamsTransport, TokenSource } from './transport.js'

export { cardToTeamsMessage } from './render.js'

export interface TeamsAdapterOptions {
  /** The bot's Microsoft Entra application (client) id (TEAMS_APP_ID). */
  appId: string
  /** Its client secret (TEAMS_APP_PASSWORD). */
  appPassword: string
  /** The Microsoft Entra tenant the bot is registered in (TEAMS_TENANT_ID). */
  tenantId: string
  /** The Bot Framework service URL for the tenant's region (TEAMS_SERVICE_URL). */
  serviceUrl: string
  /**
   * Microsoft Entra: the token endpoint and the signing keys of inbound tokens live under it
   * (TEAMS_AUTHORITY_URL). @default 'https://login.microsoftonline.com'
   */
  authorityUrl?: string
  /** ASKBRIDGE_PUBLIC_URL: cards cut down to fit link to its inbox. */
  publicUrl?: string
  /** Answer an invoke by this long even if the work goes on. @default 4000 (Teams allows 5 s) */
  invokeAnswerMs?: number
  /**
   * Conversations whose rosters `lookupByEmail` searches (the default channel, TEAMS_CHANNEL);
   * every channel a card is posted to or clicked in is added.
   */
  channels?: readonly string[]
  /** Pace calls per conversation (turn off only against a fake without limits). @default true */
  pace?: boolean
  logger?: Logger
}

/** Where a card was posted: kept by the answerer, handed back to `update`. */
export interface TeamsRef {
  conversationId: string
  activityId: string
  mentions?: TeamsMention[]
}

const refSchema = z.object({
  conversationId: z.string().min(1),
  activityId: z.string().min(1),
  mentions: z.array(z.object({ id: z.string(), name: z.string() })).optional(),
})

/** A channel's roster: e-mail and UPN (lower case) -> Entra object id; Entra object id -> Teams user id. */
interface Roster {
  byAddress: Map<string, string>
  teamsIds: Map<string, string>
}

type InvokeBody = { statusCode: number; type: string; value: unknown }

/** Largest activity askbridge reads from Teams. */
const MAX_BODY = 256 * 1024
/** Member look-ups (e-mail, name) are cached this long. */
const MEMBER_TTL_MS = 3_600_000
/** How long a click waits for the member look-up before going on without the e-mail. */
const MEMBER_WAIT_MS = 1_500

export class TeamsAdapter implements ChatAdapter {
  readonly platform = 'teams' as const
  readonly transport: TeamsTransport
  private host: CardHost | undefined
  private readonly log: Logger
  private readonly auth: AuthConfiguration
  private readonly verify: ReturnType<typeof authorizeJWT>
  private readonly options: TeamsAdapterOptions
  /** By Entra object id and by Teams user id: their Teams user id, e-mail and name. */
  private readonly members = new Map<string, { id?: string; email?: string; name?: string; at: number }>()
  /** Entra object id -> Teams user id (`29:…`), learned from invokes, for one-to-one notices. */
  private readonly teamsIds = new Map<string, string>()
  private readonly chats = new Map<string, string>()
  private readonly pending = new Set<Promise<unknown>>()
  /** Channels whose rosters are searched by e-mail, in the order they became known. */
  private readonly channels = new Set<string>()
  /** Per channel, cached like members: its roster. */
  private readonly rosters = new Map<string, Roster & { at: number }>()
  private readonly rosterLoads = new Map<string, Promise<Roster | undefined>>()

  constructor(options: TeamsAdapterOptions) {
    // The SDK lets requests through unverified when no client id is configured: never here.
    if (!options.appId || !options.appPassword || !options.tenantId)
      throw new Error(
        'Teams needs its app id, app password and tenant id (TEAMS_APP_ID, TEAMS_APP_PASSWORD, TEAMS_TENANT_ID)',
      )
    this.options = options
    this.log = options.logger ?? silentLogger
    const authorityUrl = options.authorityUrl ?? 'https://login.microsoftonline.com'
    this.auth = getAuthConfigWithDefaults({
      clientId: options.appId,
      clientSecret: options.appPassword,
      tenantId: options.tenantId,
      authority: authorityUrl,
      validateIssuer: true,
    } as AuthConfiguration)
    this.verify = authorizeJWT(this.auth)
    for (const channel of options.channels ?? []) this.channels.add(channel)
    this.transport = new TeamsTransport({
      serviceUrl: options.serviceUrl,
      tokens: new TokenSource({ ...options, authorityUrl }),
      log: this.log,
      ...(options.pace === undefined ? {} : { pace: options.pace }),
    })
  }

  async start(host: CardHost): Promise<void> {
    this.host = host
  }

  async stop(): Promise<void> {
    this.transport.stop()
    await Promise.allSettled([...this.pending])
  }

  private inboxUrl(): string | undefined {
    return this.options.publicUrl ? `${this.options.publicUrl.replace(/\/+$/, '')}/inbox` : undefined
  }

  private render(
    card: CardState,
    mentions: TeamsMention[] | undefined,
    refresh?: { userIds: readonly string[]; actionable: boolean },
  ) {
    const inboxUrl = this.inboxUrl()
    return cardToTeamsMessage(card, {
      ...(mentions?.length ? { mentions } : {}),
      ...(inboxUrl ? { inboxUrl } : {}),
      ...(refresh?.userIds.length ? { refresh } : {}),
    })
  }

  /**
   * The Teams user ids (`29:…`) of the people who may answer this card in Teams, for
   * `refresh.userIds`: the route's Teams responders and those of its e-mail responders the
   * channel's roster knows. Undefined when the card names none (anyone may answer), when they
   * are over Teams' 60, or when Teams cannot say who they are: then every copy has the controls.
   */
  private async refreshIds(card: CardState, conversationId: string): Promise<string[] | undefined> {
    const users = respondersOn(card.responders, 'teams')?.users ?? []
    if (users.length === 0 || users.length > L.refreshUserIds || !LIVE_STATUSES.includes(card.status))
      return undefined
    try {
      const roster = await this.roster(conversationId)
      const people = new Set(users)
      for (const email of card.responders?.emails ?? []) {
        const id = roster?.byAddress.get(email.toLowerCase())
        if (id) people.add(id)
      }
      if (people.size > L.refreshUserIds) return undefined
      const ids: string[] = []
      for (const aad of people) {
        // Someone Teams does not know in this channel cannot see the card at all.
        const id = roster?.teamsIds.get(aad) ?? (await this.member(conversationId, aad)).id
        if (id) ids.push(id)
      }
      return ids.length ? ids : undefined
    } catch (error) {
      this.log.warn('Teams could not say who may answer: every copy of the card shows its buttons', {
        error,
      })
      return undefined
    }
  }

  /** The card as Teams shows it: to everyone, or (`actor`) to the person who clicked or refreshed. */
  private async shown(card: CardState, conversationId: string, actor?: string) {
    const ids = await this.refreshIds(card, conversationId)
    const destination = card.destinations?.find((d) => d.platform === 'teams' && d.channel === conversationId)
    const mentions = await this.mentionsOf(conversationId, destination?.mention ?? [])
    return this.render(
      card,
      mentions,
      ids && { userIds: ids, actionable: actor !== undefined && ids.includes(actor) },
    )
  }

  async post(card: CardState, destination: Destination): Promise<TeamsRef> {
    const conversationId = destination.channel
    if (!conversationId) throw new Error('Teams posts to a channel: the destination names none')
    this.channels.add(conversationId)
    const mentions = await this.mentionsOf(conversationId, destination.mention ?? [])
    const ids = await this.refreshIds(card, conversationId)
    const activityId = await this.transport.send(
      conversationId,
      this.render(card, mentions, ids && { userIds: ids, actionable: false }),
    )
    return { conversationId, activityId, ...(mentions.length ? { mentions } : {}) }
  }

  async update(card: CardState, ref: unknown): Promise<undefined> {
    const parsed = refSchema.safeParse(ref)
    if (!parsed.success) throw new Error('not a Teams card reference')
    const { conversationId, activityId, mentions } = parsed.data
    const ids = await this.refreshIds(card, conversationId)
    await this.transport.update(
      conversationId,
      activityId,
      this.render(card, mentions, ids && { userIds: ids, actionable: false }),
    )
    return undefined
  }

  async postNotice(notice: Notice, destination: Destination): Promise<TeamsRef> {
    const conversationId = destination.channel
    if (!conversationId) throw new Error('Teams posts to a channel: the destination names none')
    const activityId = await this.transport.send(conversationId, noticeToTeamsMessage(notice))
    return { conversationId, activityId }
  }

  /** A private message: the person's one-to-one chat with the bot. */
  async notify(person: Person, text: string): Promise<void> {
    const userId = this.teamsIds.get(person.userId) ?? person.userId
    let chat = this.chats.get(userId)
    if (!chat) {
      chat = await this.transport.oneToOne(userId, this.options.tenantId, `28:${this.options.appId}`)
      this.chats.set(userId, chat)
    }
    await this.transport.send(chat, {
      type: 'message',
      text: noMentions(text).slice(0, 4000),
      textFormat: 'plain',
    })
  }

  /** The destination's Teams users, with the names Teams knows (unknown people are not mentioned). */
  private async mentionsOf(conversationId: string, entries: readonly Mention[]): Promise<TeamsMention[]> {
    const out: TeamsMention[] = []
    for (const { platform, kind, id } of entries) {
      if (platform !== 'teams' || kind !== 'user' || !/^[0-9a-f-]{36}$/i.test(id)) continue
      const member = await this.member(conversationId, id).catch(() => undefined)
      if (member?.name) out.push({ id, name: member.name })
      else this.log.warn('a Teams mention names someone Teams does not know in this channel', { id })
    }
    return out
  }

  /**
   * The Teams user (Microsoft Entra object id) with this e-mail address, for on-call people and
   * responders listed by e-mail: the rosters of the channels askbridge knows, matched on e-mail or
   * user principal name without regard to case; undefined when nobody there has it.
   */
  async lookupByEmail(email: string): Promise<string | undefined> {
    const wanted = email.trim().toLowerCase()
    for (const conversationId of [...this.channels]) {
      const found = (await this.roster(conversationId))?.byAddress.get(wanted)
      if (found) return found
    }
    return undefined
  }

  /** A channel's roster by address, from the cache while it is fresh; one load at a time. */
  private async roster(conversationId: string): Promise<Roster | undefined> {
    const cached = this.rosters.get(conversationId)
    if (cached && Date.now() - cached.at < MEMBER_TTL_MS) return cached
    let loading = this.rosterLoads.get(conversationId)
    if (!loading) {
      loading = this.loadRoster(conversationId).finally(() => this.rosterLoads.delete(conversationId))
      this.rosterLoads.set(conversationId, loading)
    }
    return loading
  }

  private async loadRoster(conversationId: string): Promise<Roster | undefined> {
    const members = await this.transport.roster(conversationId)
    if (!members) {
      this.log.warn('askbridge is not in this Teams channel: its members cannot be looked up', {
        conversationId,
      })
      return undefined
    }
    const byAddress = new Map<string, string>()
    const teamsIds = new Map<string, string>()
    const at = Date.now()
    for (const m of members) {
      if (!m.aadObjectId) continue
      teamsIds.set(m.aadObjectId, m.id)
      for (const address of [m.email, m.userPrincipalName])
        if (address) byAddress.set(address.toLowerCase(), m.aadObjectId)
      // What the roster says also serves mentions and clicks without another look-up.
      const entry = {
        id: m.id,
        ...(m.email ? { email: m.email } : {}),
        ...(m.name ? { name: m.name } : {}),
        at,
      }
      this.members.set(m.aadObjectId, entry)
      this.members.set(m.id, entry)
    }
    const roster = { byAddress, teamsIds }
    this.rosters.set(conversationId, { ...roster, at })
    return roster
  }

  private async member(conversationId: string, userId: string) {
    const cached = this.members.get(userId)
    if (cached && Date.now() - cached.at < MEMBER_TTL_MS) return cached
    const found = await this.transport.member(conversationId, userId)
    const entry = { ...found, at: Date.now() }
    this.members.set(userId, entry)
    return entry
  }

  /**
   * Activities from Teams (`POST /teams/messages`). The bearer token is verified first; an
   * `adaptiveCard/action` invoke is answered with the card's new look (or a private message);
   * other activities (installs, messages to the bot) are acknowledged and ignored.
   */
  async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    const refused = await this.authenticate(req)
    if (refused) {
      this.log.warn('Refused a Teams request: its token did not verify', { reason: refused })
      json(401, {
        error: { name: 'Unauthorized', code: 'UNAUTHORIZED', message: 'The bearer token did not verify.' },
      })
      return
    }
    const raw = await readBody(req, MAX_BODY)
    if (raw === undefined) {
      json(413, {
        error: { name: 'PayloadTooLarge', code: 'PAYLOAD_TOO_LARGE', message: 'The activity is too large.' },
      })
      return
    }
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch {
      json(400, { error: { name: 'BadRequest', code: 'INVALID_JSON', message: 'The body is not JSON.' } })
      return
    }
    const checked = readActivity(value)
    if (!checked.ok) {
      this.log.warn('Refused a Teams activity', { reason: checked.reason })
      json(400, { error: { name: 'BadRequest', code: 'INVALID_ACTIVITY', message: checked.reason } })
      return
    }
    const activity = checked.activity
    if (activity.type !== 'invoke') {
      res.writeHead(200).end()
      return
    }
    const refresh = parseRefresh(activity)
    if (refresh) {
      const answer = await within(
        this.track(this.refresh(refresh)),
        this.options.invokeAnswerMs ?? L.invokeMs - 1000,
        undefined,
      )
      // Too slow: Teams keeps showing the card everyone sees, and asks again later.
      json(200, answer ?? message('The card is loading; please try again in a moment.'))
      return
    }
    const parsed = parseInvoke(activity)
    if (!parsed) {
      json(200, message('askbridge does not know this control.'))
      return
    }
    this.teamsIds.set(parsed.actor.userId, parsed.teamsUserId)
    this.channels.add(channelOf(parsed.conversationId))
    const work = this.track(this.invoke(parsed))
    const answer = await within(work, this.options.invokeAnswerMs ?? L.invokeMs - 1000, undefined)
    if (answer) {
      json(200, answer)
      return
    }
    json(200, message('Received; the card updates in a moment.'))
    // Anything the person must still be told goes to their chat with the bot.
    void work.then(async (late) => {
      if (late?.type === 'application/vnd.microsoft.activity.message')
        await this.notify(parsed.actor, String(late.value)).catch((error: unknown) =>
          this.log.warn('Teams notice failed', { error }),
        )
    })
  }

  /** Why the request's token is refused, or undefined when the SDK verified it. */
  private async authenticate(req: IncomingMessage): Promise<string | undefined> {
    let status = 200
    let reason: string | undefined
    let passed = false
    const shim = {
      status(code: number) {
        status = code
        return shim
      },
      send(body: unknown) {
        const r = (body as { 'jwt-auth-error'?: unknown } | undefined)?.['jwt-auth-error']
        reason = typeof r === 'string' ? r : 'unauthorized'
        return shim
      },
      setHeader() {
        return shim
      },
      end() {
        return shim
      },
    }
    const request = { method: req.method, headers: req.headers } as unknown as Parameters<
      typeof this.verify
    >[0]
    await this.verify(request, shim as unknown as Parameters<typeof this.verify>[1], () => {
      passed = true
    })
    if (passed && status === 200) return undefined
    return reason ?? `HTTP ${status}`
  }

  /** A refresh: the card with its controls for one of the people who may answer, else everyone's card. */
  private async refresh(parsed: ParsedRefresh): Promise<InvokeBody> {
    const host = this.host
    if (!host) return message('askbridge is starting; please try again in a moment.')
    try {
      this.teamsIds.set(parsed.actor.userId, parsed.teamsUserId)
      const card = await host.getCard(parsed.ref)
      if (!card) return message('This question is no longer available.')
      const shown = await this.shown(card, channelOf(parsed.conversationId), parsed.teamsUserId)
      return { statusCode: 200, type: CARD_CONTENT_TYPE, value: shown.attachments[0].content }
    } catch (error) {
      this.log.error('teams refresh failed', { error })
      return message(notAppliedMessage(error))
    }
  }

  private async invoke(parsed: NonNullable<ReturnType<typeof parseInvoke>>): Promise<InvokeBody> {
    const host = this.host
    if (!host) return message('askbridge is starting; please try again in a moment.')
    try {
      const card = await host.getCard(parsed.ref)
      // The person's e-mail from Teams (Microsoft Entra), so the people map, e-mail responders,
      // quorum and requester exclusion know them; a card that asks none of that costs no look-up.
      if (card && (card.responders || card.quorum > 1 || card.excluded)) {
        const member = await within(
          this.member(channelOf(parsed.conversationId), parsed.teamsUserId),
          MEMBER_WAIT_MS,
          undefined,
        )
        if (member?.email) parsed.actor.email = member.email.toLowerCase()
      }
      const decoded = onCard(parsed, card)
      if (decoded.kind === 'refuse') return message(decoded.message)
      let outcome: InteractionOutcome | undefined
      for (const [i, step] of decoded.steps.entries()) {
        outcome = await host.handle(step, i === 0 ? card : undefined)
        if (!outcome.ok) break
      }
      if (!outcome) return message('Nothing to do.')
      if (!outcome.ok) return message(outcome.message ?? 'That did not work; please try again.')
      if (outcome.message) void this.notify(parsed.actor, outcome.message).catch(() => {})
      if (!outcome.card) return message(outcome.message ?? 'Done.')
      const shown = await this.shown(outcome.card, channelOf(parsed.conversationId), parsed.teamsUserId)
      return { statusCode: 200, type: CARD_CONTENT_TYPE, value: shown.attachments[0].content }
    } catch (error) {
      this.log.error('teams invoke failed', { error, invoke: parsed.id })
      return message(notAppliedMessage(error))
    }
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise)
    void promise.finally(() => this.pending.delete(promise)).catch(() => {})
    return promise
  }
}

/** The channel of a conversation id that names a message in it (`19:…@thread.tacv2;messageid=…`). */
function channelOf(conversationId: string): string {
  return conversationId.split(';')[0] || conversationId
}

/** An invoke response that shows the person a message (and leaves the card as it is). */
function message(text: string): InvokeBody {
  return { statusCode: 200, type: 'application/vnd.microsoft.activity.message', value: noMentions(text) }
}

async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > max) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}
