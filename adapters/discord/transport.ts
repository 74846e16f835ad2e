/**
 * Discord I/O: the discord.js Client (gateway, Guilds intent only) and its REST client.
 *
 * discord.js REST already paces every request: it queues requests per route bucket and channel,
 * reads `X-RateLimit-Remaining` / `-Reset-After` / `-Bucket` to wait before Discord has to refuse,
 * retries a 429 after its `retry_after` holding only that bucket (or everything, for a global
 * 429), and keeps to the global 50 requests a second. So askbridge adds no rate limiter of its own
 * (that would only throttle twice); it decides order and what is worth sending:
 *
 * - posts go through one ordered queue per channel, so cards appear in the order they were asked;
 * - edits do not wait behind those posts (an edit is its own route bucket at Discord too): an
 *   answered card changes even while many new cards wait to be posted in its channel. A message's
 *   edits go one at a time, and a newer edit replaces one still waiting: only the newest is sent.
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
import { checkReachable, type Logger, Superseding, silentLogger } from '../../src/adapter-kit.js'
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

interface PendingEdit {
  channelId: string
  message: DiscordMessage
}

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
  /** Per message: the edit on its way, and the newest one waiting for it. */
  private readonly edits = new Superseding<PendingEdit>()
  private readonly editing = new Set<Promise<void>>()
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

  /**
   * Edit through the bot's channel endpoint: works long after any interaction token expired.
   * Not queued behind the channel's posts. While an edit of this message is on its way, this one
   * waits for it, replacing any older one waiting (its caller settles with this one).
   */
  edit(channelId: string, messageId: string, message: DiscordMessage): Promise<void> {
    const done = this.edits.offer(messageId, { channelId, message })
    this.sendEdit(messageId)
    return done
  }

  /** How many waiting edits a newer edit of the same message replaced. */
  get superseded(): number {
    return this.edits.superseded
  }

  /** Send the edit waiting for `messageId` unless one is on its way; then the next, if any. */
  private sendEdit(messageId: string): void {
    const sent = this.edits.send(messageId, ({ channelId, message }) =>
      this.client.rest.patch(Routes.channelMessage(channelId, messageId), { body: message }),
    )
    if (!sent) return
    const done = sent.then(() => this.sendEdit(messageId))
    this.editing.add(done)
    void done.finally(() => this.editing.delete(done))
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
    while (this.editing.size > 0) await Promise.allSettled([...this.editing])
    await this.client.destroy()
  }
}
