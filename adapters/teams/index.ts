/**
 * The Microsoft Teams adapter, on the Microsoft 365 Agents SDK (`@microsoft/agents-hosting`):
 * cards as Adaptive Cards posted to a channel from its conversation reference (service URL and
 * conversation id), later states with updateActivity, clicks as `adaptiveCard/action` invokes
 * (Universal Actions) answered with the refreshed card.
 *
 * - render.ts / decode.ts / notice.ts are pure;
 * - transport.ts: the SDK's ConnectorClient, paced per conversation, 429s waited out;
 * - people.ts: channel rosters and members, for mentions, e-mail look-ups and who may answer;
 * - inbound requests (`POST /teams/messages`) are verified by the SDK's JWT middleware
 *   (`authorizeJWT`) against Microsoft's published keys: a forged, expired or wrong-audience
 *   token gets 401 and nothing is applied (inbound.ts). Verification cannot be turned off.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type AuthConfiguration, authorizeJWT, getAuthConfigWithDefaults } from '@microsoft/agents-hosting'
import { z } from 'zod'
import type { CardState, Destination, Person } from '../../src/adapter-kit.js'
import {
  type CardHost,
  type ChatAdapter,
  type InteractionOutcome,
  type Logger,
  type Notice,
  notAppliedMessage,
  silentLogger,
  within,
} from '../../src/adapter-kit.js'
import { CARD_CONTENT_TYPE, type TeamsMention } from './card-schema.js'
import { onCard, type ParsedRefresh, parseInvoke, parseRefresh } from './decode.js'
import { channelOf, type InvokeBody, json as jsonTo, message, readVerified } from './inbound.js'
import { TEAMS_LIMITS as L } from './limits.js'
import { noticeToTeamsMessage } from './notice.js'
import { TeamsPeople } from './people.js'
import { cardToTeamsMessage } from './render.js'
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
  /** Entra object id -> Teams user id (`29:…`), learned from invokes, for one-to-one notices. */
  private readonly teamsIds = new Map<string, string>()
  private readonly chats = new Map<string, string>()
  private readonly pending = new Set<Promise<unknown>>()
  private readonly people: TeamsPeople

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
    this.transport = new TeamsTransport({
      serviceUrl: options.serviceUrl,
      tokens: new TokenSource({ ...options, authorityUrl }),
      log: this.log,
      ...(options.pace === undefined ? {} : { pace: options.pace }),
    })
    this.people = new TeamsPeople(this.transport, this.log, options.channels)
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

  /** The card as Teams shows it: to everyone, or (`actor`) to the person who clicked or refreshed. */
  private async shown(card: CardState, conversationId: string, actor?: string) {
    const ids = await this.people.refreshIds(card, conversationId)
    const destination = card.destinations?.find((d) => d.platform === 'teams' && d.channel === conversationId)
    const mentions = await this.people.mentionsOf(conversationId, destination?.mention ?? [])
    return this.render(
      card,
      mentions,
      ids && { userIds: ids, actionable: actor !== undefined && ids.includes(actor) },
    )
  }

  async post(card: CardState, destination: Destination): Promise<TeamsRef> {
    const conversationId = destination.channel
    if (!conversationId) throw new Error('Teams posts to a channel: the destination names none')
    this.people.channels.add(conversationId)
    const mentions = await this.people.mentionsOf(conversationId, destination.mention ?? [])
    const ids = await this.people.refreshIds(card, conversationId)
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
    const ids = await this.people.refreshIds(card, conversationId)
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

  /**
   * The Teams user (Microsoft Entra object id) with this e-mail address, for on-call people and
   * responders listed by e-mail: the rosters of the channels askbridge knows, matched on e-mail or
   * user principal name without regard to case; undefined when nobody there has it.
   */
  async lookupByEmail(email: string): Promise<string | undefined> {
    return this.people.lookupByEmail(email)
  }

  /**
   * Activities from Teams (`POST /teams/messages`). The bearer token is verified first; an
   * `adaptiveCard/action` invoke is answered with the card's new look (or a private message);
   * other activities (installs, messages to the bot) are acknowledged and ignored.
   */
  async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) => jsonTo(res, status, body)
    const activity = await readVerified(req, res, this.verify, this.log)
    if (!activity) return
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
    this.people.channels.add(channelOf(parsed.conversationId))
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
          this.people.member(channelOf(parsed.conversationId), parsed.teamsUserId),
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
