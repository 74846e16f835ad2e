/**
 * Discord I/O: the discord.js Client (gateway, Guilds intent only) and its REST client, with one
 * ordered queue per channel. discord.js REST keeps within the per-route buckets and retries 429s;
 * the queue keeps a card's edits in the order they were made.
 */
import {
  type APIChannel,
  type APIInteraction,
  type APIInteractionResponse,
  type APIMessage,
  Client,
  Events,
  GatewayDispatchEvents,
  type GatewayDispatchPayload,
  GatewayIntentBits,
  MessageFlags,
  Routes,
} from 'discord.js'
import PQueue from 'p-queue'
import { checkReachable } from '../../src/answerer/reachable.js'
import { type Logger, silentLogger } from '../../src/log.js'
import type { DiscordMessage } from './render.js'

export interface DiscordTransportOptions {
  /** Bot token. */
  token: string
  /**
   * REST base; the gateway URL then comes from `GET /gateway/bot`.
   * @default 'https://discord.com/api'
   */
  apiUrl?: string
  logger?: Logger
  /** How long to wait for the gateway to become ready. @default 30_000 */
  readyTimeoutMs?: number
  /** How long the start-up check waits for the REST API to answer. @default 5000 */
  startCheckMs?: number
}

const DEFAULT_API = 'https://discord.com/api'

/** Network failures: the URL is wrong or the host is down, not the token. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
])

export class DiscordTransport {
  readonly client: Client
  private readonly log: Logger
  private readonly queues = new Map<string, PQueue>()
  private readonly dmChannels = new Map<string, string>()
  private readonly readyTimeoutMs: number
  private readonly startCheckMs: number | undefined
  private readonly token: string
  private readonly apiUrl: string

  constructor(options: DiscordTransportOptions) {
    this.log = options.logger ?? silentLogger
    this.token = options.token
    this.readyTimeoutMs = options.readyTimeoutMs ?? 30_000
    this.startCheckMs = options.startCheckMs
    this.apiUrl = (options.apiUrl ?? DEFAULT_API).replace(/\/+$/, '')
    this.client = new Client({
      // Interactions arrive without message intents; Guilds gives the channel cache and guild locale.
      intents: [GatewayIntentBits.Guilds],
      // A client-wide default, on top of the explicit allowed_mentions on every message we send.
      allowedMentions: { parse: [] },
      rest: options.apiUrl ? { api: options.apiUrl.replace(/\/+$/, '') } : {},
    })
    this.client.rest.setToken(options.token)
  }

  /** Connect to the gateway; `onInteraction` receives raw INTERACTION_CREATE payloads. */
  async connect(onInteraction: (payload: APIInteraction) => void): Promise<void> {
    this.client.on(Events.Raw, (packet: GatewayDispatchPayload) => {
      if (packet.t === GatewayDispatchEvents.InteractionCreate) onInteraction(packet.d)
    })
    this.client.on(Events.Error, (error) => this.log.error('discord client error', { error }))
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `the Discord gateway did not become ready within ${this.readyTimeoutMs / 1000} s (its URL comes from GET /gateway/bot at DISCORD_API_URL)`,
            ),
          ),
        this.readyTimeoutMs,
      )
      this.client.once(Events.ClientReady, () => {
        clearTimeout(timer)
        resolve()
      })
    })
    ready.catch(() => {})
    await checkReachable({
      url: `${this.apiUrl}/v10/gateway`,
      shownUrl: this.apiUrl,
      what: 'the Discord API',
      variable: 'DISCORD_API_URL',
      logger: this.log,
      ...(this.startCheckMs === undefined ? {} : { timeoutMs: this.startCheckMs }),
    })
    try {
      await this.client.login(this.token)
    } catch (error) {
      throw this.loginError(error)
    }
    await ready
    this.log.info('discord gateway ready', { user: this.client.user?.id })
  }

  /** A login failure that names the variable to fix (the token is never echoed). */
  private loginError(error: unknown): Error {
    const e = error as { code?: unknown; message?: unknown; status?: unknown }
    const message = typeof e.message === 'string' ? e.message : String(error)
    if (e.code === 'TokenInvalid' || e.status === 401) {
      return new Error(
        `Discord refused the bot token (DISCORD_BOT_TOKEN): ${message} Copy it again from the Developer Portal (your application, Bot, Reset Token).`,
        { cause: error },
      )
    }
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) {
      return new Error(`cannot reach the Discord API at ${this.apiUrl} (DISCORD_API_URL): ${message}`, {
        cause: error,
      })
    }
    return new Error(`Discord login failed (DISCORD_BOT_TOKEN, DISCORD_API_URL): ${message}`, {
      cause: error,
    })
  }

  /** Run `task` after every earlier task for the same channel. */
  inChannel<T>(channelId: string, task: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(channelId)
    if (!queue) {
      queue = new PQueue({ concurrency: 1 })
      this.queues.set(channelId, queue)
    }
    return queue.add(task)
  }

  /**
   * Post a message. With a `nonce` Discord keeps the first message for that nonce: a repeat
   * within a few minutes returns it instead of posting again (`enforce_nonce`).
   */
  send(channelId: string, message: DiscordMessage, nonce?: string): Promise<APIMessage> {
    const body = nonce ? { ...message, nonce, enforce_nonce: true } : message
    return this.inChannel(
      channelId,
      async () => (await this.client.rest.post(Routes.channelMessages(channelId), { body })) as APIMessage,
    )
  }

  /** Messages posted in a channel after a snowflake, oldest first (at most `pages` x 100). */
  async messagesAfter(channelId: string, after: string, pages = 10): Promise<APIMessage[]> {
    const out: APIMessage[] = []
    let cursor = after
    for (let page = 0; page < pages; page++) {
      const batch = (await this.client.rest.get(Routes.channelMessages(channelId), {
        query: new URLSearchParams({ limit: '100', after: cursor }),
      })) as APIMessage[]
      const sorted = [...batch].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
      out.push(...sorted)
      const last = sorted.at(-1)
      if (batch.length < 100 || !last) break
      cursor = last.id
    }
    return out
  }

  remove(channelId: string, messageId: string): Promise<void> {
    return this.inChannel(channelId, async () => {
      await this.client.rest.delete(Routes.channelMessage(channelId, messageId))
    })
  }

  /** Edit through the bot's channel endpoint: works long after any interaction token expired. */
  edit(channelId: string, messageId: string, message: DiscordMessage): Promise<APIMessage> {
    return this.inChannel(
      channelId,
      async () =>
        (await this.client.rest.patch(Routes.channelMessage(channelId, messageId), {
          body: message,
        })) as APIMessage,
    )
  }

  /** The initial interaction response (`POST /interactions/{id}/{token}/callback`, no bot auth). */
  async callback(id: string, token: string, body: APIInteractionResponse): Promise<void> {
    await this.client.rest.post(Routes.interactionCallback(id, token), { body, auth: false })
  }

  /** An ephemeral follow-up on an interaction token (valid 15 minutes). */
  async followUp(applicationId: string, token: string, content: string): Promise<void> {
    await this.client.rest.post(Routes.webhook(applicationId, token), {
      body: { content, flags: MessageFlags.Ephemeral, allowed_mentions: { parse: [] } },
      auth: false,
    })
  }

  /** The DM channel with a user (created once, then cached). */
  async dmChannel(userId: string): Promise<string> {
    const cached = this.dmChannels.get(userId)
    if (cached) return cached
    const channel = (await this.client.rest.post(Routes.userChannels(), {
      body: { recipient_id: userId },
    })) as APIChannel
    this.dmChannels.set(userId, channel.id)
    return channel.id
  }

  /** The guild's preferred locale for a channel, when the gateway told us. */
  channelLocale(channelId: string): string | undefined {
    const channel = this.client.channels.cache.get(channelId)
    if (channel && 'guild' in channel && channel.guild) return channel.guild.preferredLocale
    return undefined
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.onIdle()))
    await this.client.destroy()
  }
}
