/**
 * The Slack adapter: posts cards as Block Kit messages, keeps every copy updated, and turns
 * clicks, menus and modals into card interactions. This file only wires the parts together:
 *
 * - outbound.ts: post, update, delete, grow and shrink a card (per-channel queues, Retry-After);
 * - inbound.ts: listeners, the acknowledgement deadline, dispatch, forms;
 * - notices.ts: private notices to one person;
 * - transport.ts: Socket Mode or HTTP interactivity; fetch.ts: the Web API client's transport;
 *   render/decode/modal/verify are pure.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type App, webApi } from '@slack/bolt'
import type { CardHost, CardState, ChatAdapter, Destination, Notice, Person } from '../../src/adapter-kit.js'
import { checkReachable, type Logger, silentLogger } from '../../src/adapter-kit.js'
import { slackError, tokenError } from './errors.js'
import { slackFetch } from './fetch.js'
import { SlackInbound } from './inbound.js'
import { postNoticeMessage } from './notice.js'
import { SlackNotices } from './notices.js'
import { isSlackRef, SlackOutbound, type SlackRef } from './outbound.js'
import { ChannelQueues, type RateLimitOptions } from './queue.js'
import { boltLogger, createBoltApp, type SlackHttpReceiver } from './transport.js'

export { decodePayload } from './decode.js'
export { markdownToMrkdwn } from './markdown.js'
export { declineModal, otherModal } from './modal.js'
export { isSlackRef, type SlackRef } from './outbound.js'
export type { RateLimitOptions } from './queue.js'
export { cardToMessages, notificationText, type RenderOptions } from './render.js'
export { escapeMrkdwn } from './text.js'
export { signSlackRequest, verifySlackSignature } from './verify.js'

export interface SlackAdapterOptions {
  /** Bot token (`xoxb-…`), SLACK_BOT_TOKEN. */
  botToken?: string
  /** App-level token (`xapp-…`), SLACK_APP_TOKEN: selects Socket Mode (no public URL needed). */
  appToken?: string
  /** SLACK_SIGNING_SECRET: HTTP interactivity, served by {@link SlackAdapter.handleHttp}. */
  signingSecret?: string
  /**
   * Web API base, SLACK_API_URL (tests, proxies, GovSlack). Bolt's `clientOptions.slackApiUrl`.
   * @default 'https://slack.com/api/'
   */
  apiUrl?: string
  /** askbridge's structured logger; Bolt's own logging goes through it too. @default silent */
  logger?: Logger
  /**
   * Locale for approval `display` texts on channel messages (everyone in a channel sees one text).
   * @default 'en'
   */
  locale?: string
  /** Per-channel pacing and 429 handling. */
  rateLimit?: RateLimitOptions
  /**
   * Extra @slack/web-api client options (for example `retryConfig`, `timeout`). `slackApiUrl`
   * comes from `apiUrl`; rate-limited calls are always rejected to the per-channel queue. A
   * `fetch` here replaces the undici transport of fetch.ts.
   */
  clientOptions?: webApi.WebClientOptions
  /** Socket Mode: reconnect when Slack sends no ping for this long. @default 30000 */
  serverPingTimeoutMs?: number
  /** Socket Mode: how long a pong may take, and the base delay before reconnecting. @default 5000 */
  clientPingTimeoutMs?: number
  /**
   * How long a click may take to be applied before it is acknowledged anyway (Slack allows 3 s).
   * The only acknowledgement deadline, for both transports.
   * @default 2000
   */
  ackBudgetMs?: number
  /** Clock (tests). @default Date.now */
  now?: () => number
  /** How long the start-up check waits for the Web API to answer (SLACK_API_URL). @default 5000 */
  startCheckMs?: number
}

const STOP_GRACE_MS = 5000

export class SlackAdapter implements ChatAdapter {
  readonly platform = 'slack' as const
  /** `socket` with an app token, else `http`. */
  readonly mode: 'socket' | 'http'
  readonly #app: App
  readonly #http: SlackHttpReceiver | undefined
  readonly #client: webApi.WebClient
  readonly #queues: ChannelQueues
  readonly #outbound: SlackOutbound
  readonly #notices: SlackNotices
  readonly #inbound: SlackInbound
  readonly #log: Logger
  readonly #startCheckMs: number | undefined
  #host: CardHost | undefined
  #started = false

  constructor(options: SlackAdapterOptions) {
    const botToken = options.botToken
    if (!botToken) throw new Error('SlackAdapter needs a bot token (SLACK_BOT_TOKEN)')
    const log = options.logger ?? silentLogger
    this.#log = log
    this.#startCheckMs = options.startCheckMs
    const logger = boltLogger(log)
    this.mode = options.appToken ? 'socket' : 'http'
    // One lean transport for both Web API clients (Bolt's and ours); a caller's own fetch wins.
    const clientOptions: webApi.WebClientOptions = { fetch: slackFetch(), ...options.clientOptions }
    const built = createBoltApp({
      botToken,
      logger,
      ...(options.appToken ? { appToken: options.appToken } : {}),
      ...(options.signingSecret ? { signingSecret: options.signingSecret } : {}),
      ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}),
      clientOptions,
      ...(options.serverPingTimeoutMs ? { serverPingTimeoutMs: options.serverPingTimeoutMs } : {}),
      ...(options.clientPingTimeoutMs ? { clientPingTimeoutMs: options.clientPingTimeoutMs } : {}),
      ...(options.now ? { now: options.now } : {}),
    })
    this.#app = built.app
    this.#http = built.http
    const client = new webApi.WebClient(botToken, {
      ...clientOptions,
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      logger,
      rejectRateLimitedCalls: true,
    })
    this.#client = client
    const queues = new ChannelQueues(options.rateLimit)
    this.#queues = queues
    const locale = options.locale ? { locale: options.locale } : {}
    this.#outbound = new SlackOutbound({ client, queues, logger: log, ...locale })
    this.#notices = new SlackNotices({
      client,
      queues,
      logger: log,
      ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}),
      openDm: (userId) => this.#outbound.openDm(userId),
    })
    this.#inbound = new SlackInbound({
      app: this.#app,
      client,
      queues,
      notices: this.#notices,
      logger: log,
      host: () => this.#requireHost(),
      now: options.now ?? Date.now,
      ...locale,
      ...(options.ackBudgetMs === undefined ? {} : { ackDeadlineMs: options.ackBudgetMs }),
    })
  }

  /** How many 429s the adapter has waited out. */
  get rateLimited(): number {
    return this.#queues.rateLimited
  }

  async start(host: CardHost): Promise<void> {
    this.#host = host
    await this.#reachable()
    try {
      await this.#app.init() // auth.test: a bad token fails here, at start, not at the first click
    } catch (error) {
      throw tokenError(error, 'bot token (SLACK_BOT_TOKEN)', 'copy the Bot User OAuth Token (xoxb-…) again')
    }
    if (this.mode === 'socket') {
      try {
        await this.#app.start() // apps.connections.open with the app-level token
      } catch (error) {
        throw tokenError(
          error,
          'app-level token (SLACK_APP_TOKEN)',
          'it must be an xapp-… token with the connections:write scope',
        )
      }
    }
    this.#started = true
  }

  /**
   * Fail fast when the Web API cannot be reached at all (a wrong SLACK_API_URL, no network):
   * Bolt's own start-up check would retry for about half an hour before saying anything.
   */
  async #reachable(): Promise<void> {
    const url = this.#client.slackApiUrl
    await checkReachable({
      url: `${url}api.test`,
      shownUrl: url,
      what: 'the Slack Web API',
      variable: 'SLACK_API_URL',
      logger: this.#log,
      ...(this.#startCheckMs === undefined ? {} : { timeoutMs: this.#startCheckMs }),
    })
  }

  async stop(): Promise<void> {
    if (!this.#started) return
    this.#started = false
    // Interactions, notices and queued Web API calls finish first, within a bound.
    let timer: ReturnType<typeof setTimeout> | undefined
    const bound = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), STOP_GRACE_MS)
    })
    const drained = await Promise.race([this.idle().then(() => true as const), bound])
    clearTimeout(timer)
    if (!drained)
      this.#log.warn(`Slack adapter stopping with work still queued after ${STOP_GRACE_MS} ms; it is dropped`)
    if (this.mode === 'socket') await this.#app.stop()
    this.#queues.stop()
  }

  /**
   * HTTP interactivity: mount at `POST /slack/events` on the askbridge server. Verifies the
   * signature (401 on failure) and acks within Slack's 3 s.
   */
  async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.#http) {
      res.writeHead(404).end()
      return
    }
    await this.#http.handle(req, res)
  }

  /** Resolves when every interaction in progress and every queued Web API call is done. */
  async idle(): Promise<void> {
    await this.#inbound.idle()
    await this.#notices.idle()
    await this.#queues.idle()
    if (this.#inbound.busy || this.#notices.busy) await this.idle()
  }

  post(card: CardState, destination: Destination, key?: string): Promise<SlackRef> {
    return this.#outbound.post(card, destination, key)
  }

  find(card: CardState, destination: Destination, key: string, since: number): Promise<SlackRef | undefined> {
    return this.#outbound.find(card, destination, key, since)
  }

  update(card: CardState, ref: unknown): Promise<SlackRef | undefined> {
    return this.#outbound.update(card, ref)
  }

  /** A notice without buttons (see notice.ts), paced with the channel's cards. */
  postNotice(notice: Notice, destination: Destination): Promise<{ channel: string; ts: string }> {
    const deps = {
      client: this.#client,
      queues: this.#queues,
      openDm: (u: string) => this.#outbound.openDm(u),
    }
    return postNoticeMessage(deps, notice, destination)
  }

  async notify(person: Person, text: string, ref?: unknown): Promise<void> {
    if (person.platform !== 'slack') return
    await this.#notices.send(person.userId, text, isSlackRef(ref) ? { channel: ref.channel } : {})
  }

  /** Members of a user group. Not cached here: the responder policy caches with one expiry. */
  async groupMembers(groupId: string): Promise<string[]> {
    const result = await this.#queues.now('usergroups.users.list', () =>
      this.#client.usergroups.users.list({ usergroup: groupId }),
    )
    return result.users ?? []
  }

  /**
   * The Slack user with this e-mail address (`users.lookupByEmail`, scope `users:read.email`), for
   * on-call people and responders listed by e-mail; undefined when the workspace has nobody with it.
   */
  async lookupByEmail(email: string): Promise<string | undefined> {
    try {
      const result = await this.#queues.now('users.lookupByEmail', () =>
        this.#client.users.lookupByEmail({ email }),
      )
      return result.user?.id
    } catch (error) {
      if (slackError(error) === 'users_not_found') return undefined
      throw error
    }
  }

  #requireHost(): CardHost {
    if (!this.#host) throw new Error('SlackAdapter.start(host) has not been called')
    return this.#host
  }
}
