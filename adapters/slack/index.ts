/**
 * The Slack adapter: posts cards as Block Kit messages, keeps every copy updated, and turns
 * clicks, menus and modals into card interactions. Rendering, decoding and verification are pure
 * functions in their own files; this file is only I/O and ordering:
 *
 * - every interaction is acknowledged first and processed afterwards (Slack's 3 s deadline);
 * - a modal opens at once with the payload's trigger_id, before anything slow;
 * - Web API writes go through per-channel queues that honour Retry-After (see queue.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type App, webApi } from '@slack/bolt'
import {
  type CardHost,
  type ChatAdapter,
  type Destination,
  type InteractionOutcome,
  within,
} from '../../src/answerer/adapter.js'
import type { CardState, Person } from '../../src/card/types.js'
import { type Logger, silentLogger } from '../../src/log.js'
import type { MessageBlock, SlackMessage } from './blocks.js'
import {
  type ActionContext,
  type BlockActionsPayload,
  callIdOf,
  type DecodeResult,
  decodeBlockActions,
  decodeView,
  resolveAction,
  type ViewPayload,
} from './decode.js'
import { declineModal, noticeModal, otherModal } from './modal.js'
import { escapeMrkdwn } from './mrkdwn.js'
import { ChannelQueues, type LaneCall, type RateLimitOptions } from './queue.js'
import { cardToMessages } from './render.js'
import { boltLogger, createBoltApp, type SlackHttpReceiver } from './transport.js'

/** Acknowledge a click by then at the latest, whatever is still running. */
const ACK_BUDGET_MS = 2000
/** How long the may-this-person-answer check may take before a form opens anyway. */
const FORM_CHECK_MS = 1000

export { decodePayload } from './decode.js'
export { declineModal, otherModal } from './modal.js'
export { escapeMrkdwn, markdownToMrkdwn } from './mrkdwn.js'
export type { RateLimitOptions } from './queue.js'
export { cardToMessages, notificationText, type RenderOptions } from './render.js'
export { signSlackRequest, verifySlackSignature } from './verify.js'

export interface SlackAdapterOptions {
  /** Bot token (`xoxb-…`), SLACK_BOT_TOKEN. */
  botToken?: string
  /** Same as `botToken` (the name the server's composition root uses). */
  token?: string
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
   * comes from `apiUrl`; rate-limited calls are always rejected to the per-channel queue.
   */
  clientOptions?: webApi.WebClientOptions
  /** Socket Mode: reconnect when Slack sends no ping for this long. @default 30000 */
  serverPingTimeoutMs?: number
  /** Socket Mode: how long a pong may take, and the base delay before reconnecting. @default 5000 */
  clientPingTimeoutMs?: number
  /**
   * How long a click may take to be applied before it is acknowledged anyway (Slack allows 3 s).
   * @default 2000
   */
  ackBudgetMs?: number
  /** Clock (tests). @default Date.now */
  now?: () => number
}

/** What `post` returns and `update` receives: where the card's messages are. JSON-serializable. */
export interface SlackRef {
  channel: string
  /** The card's messages in order; the first is the main one. */
  ts: string[]
  /** The destination's mentions, so updates render the same header. */
  mention?: string[]
  /** The reader's locale, for a direct message. */
  locale?: string
}

export function isSlackRef(ref: unknown): ref is SlackRef {
  if (typeof ref !== 'object' || ref === null) return false
  const r = ref as Record<string, unknown>
  return typeof r.channel === 'string' && Array.isArray(r.ts) && r.ts.every((t) => typeof t === 'string')
}

/** Recent cards kept in memory (a card can hold a 200k-character plan, so not too many). */
const CARD_CACHE = 200
/** Last-shown message renders kept to skip no-op updates. */
const SHOWN_CACHE = 5000
const STOP_GRACE_MS = 5000

export class SlackAdapter implements ChatAdapter {
  readonly platform = 'slack' as const
  /** `socket` with an app token, else `http`. */
  readonly mode: 'socket' | 'http'
  readonly #options: SlackAdapterOptions
  readonly #logger: Logger
  readonly #app: App
  readonly #http: SlackHttpReceiver | undefined
  readonly #client: webApi.WebClient
  readonly #queues: ChannelQueues
  readonly #now: () => number
  #host: CardHost | undefined
  #started = false
  /** Questions never change for a call, so a recent card resolves indexes without the store. */
  readonly #cards = new Map<string, CardState>()
  /** What each message last showed, to skip no-op updates. Keyed `channel:ts`. */
  readonly #shown = new Map<string, string>()
  /** Messages added after `post` (a card that grew), keyed `channel:firstTs`. Lost on restart. */
  readonly #extra = new Map<string, string[]>()
  /** Coalesced updates not started yet, keyed `channel:firstTs`. */
  readonly #pendingUpdates = new Map<string, { card: CardState; promise: Promise<SlackRef | undefined> }>()
  readonly #inflight = new Set<Promise<unknown>>()

  constructor(options: SlackAdapterOptions) {
    const botToken = options.botToken ?? options.token
    if (!botToken) throw new Error('SlackAdapter needs a bot token (SLACK_BOT_TOKEN)')
    this.#options = options
    this.#logger = options.logger ?? silentLogger
    const logger = boltLogger(this.#logger)
    this.#now = options.now ?? Date.now
    this.mode = options.appToken ? 'socket' : 'http'
    const built = createBoltApp({
      botToken,
      logger,
      ...(options.appToken ? { appToken: options.appToken } : {}),
      ...(options.signingSecret ? { signingSecret: options.signingSecret } : {}),
      ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}),
      ...(options.clientOptions ? { clientOptions: options.clientOptions } : {}),
      ...(options.serverPingTimeoutMs ? { serverPingTimeoutMs: options.serverPingTimeoutMs } : {}),
      ...(options.clientPingTimeoutMs ? { clientPingTimeoutMs: options.clientPingTimeoutMs } : {}),
      ...(options.now ? { now: options.now } : {}),
    })
    this.#app = built.app
    this.#http = built.http
    this.#client = new webApi.WebClient(botToken, {
      ...options.clientOptions,
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      logger,
      rejectRateLimitedCalls: true,
    })
    this.#queues = new ChannelQueues(options.rateLimit)
    this.#listen()
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
    const probe = new webApi.WebClient(undefined, {
      slackApiUrl: url,
      retryConfig: { retries: 2, factor: 1, minTimeout: 200, maxTimeout: 500 },
      timeout: 10_000,
      logger: boltLogger(silentLogger),
    })
    try {
      await probe.api.test()
    } catch (error) {
      if (slackError(error) !== undefined) return // Slack answered (with an error): it is reachable
      const reason = error instanceof Error ? error.message : String(error)
      throw new Error(`cannot reach the Slack Web API at ${url} (SLACK_API_URL): ${reason}`, { cause: error })
    }
  }

  async stop(): Promise<void> {
    if (!this.#started) return
    this.#started = false
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())])
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
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
    await this.#queues.idle()
    if (this.#inflight.size > 0) await this.idle()
  }

  async post(card: CardState, destination: Destination): Promise<SlackRef> {
    this.#remember(card)
    let channel = destination.channel ?? (destination.user ? await this.#openDm(destination.user) : undefined)
    if (!channel) throw new Error('A Slack destination needs a channel or a user')
    const mention = destination.mention?.length ? [...destination.mention] : undefined
    // A direct message has one reader: word approvals in their locale (needs users:read).
    const locale =
      !destination.channel && destination.user ? await this.#userLocale(destination.user) : undefined
    const messages = cardToMessages(card, this.#renderOptions(mention, locale))
    const ts: string[] = []
    try {
      await this.#postAll(channel, messages, ts, (c) => {
        channel = c
      })
    } catch (error) {
      // A card half posted would leave live buttons nobody updates: take the parts back down.
      await this.#deleteAll(channel, ts)
      throw error
    }
    return { channel, ts, ...(mention ? { mention } : {}), ...(locale ? { locale } : {}) }
  }

  async #postAll(
    first: string,
    messages: ReturnType<typeof cardToMessages>,
    ts: string[],
    moved: (channel: string) => void,
  ): Promise<void> {
    let channel = first
    await this.#queues.run(channel, async (call) => {
      for (const message of messages) {
        const target = channel as string
        const result = await call('chat.postMessage', () =>
          this.#client.chat.postMessage({
            channel: target,
            ...message,
            unfurl_links: false,
            unfurl_media: false,
          }),
        )
        if (!result.ts) throw new Error('chat.postMessage returned no ts')
        if (result.channel) {
          channel = result.channel
          moved(channel)
        }
        ts.push(result.ts)
        this.#show(`${channel}:${result.ts}`, JSON.stringify(message))
      }
    })
  }

  async #deleteAll(channel: string, ts: string[]): Promise<void> {
    for (const t of ts) {
      try {
        await this.#queues.now('chat.delete', () => this.#client.chat.delete({ channel, ts: t }))
      } catch (error) {
        this.#logger.warn('could not remove part of a card that failed to post', { channel, error })
      }
    }
  }

  /**
   * Update every message of a card copy. Updates queued for the same copy collapse to the latest.
   * Resolves to a new reference when the copy grew a message (stored by the answerer, so an
   * update after a restart edits that message instead of posting another).
   */
  update(card: CardState, ref: unknown): Promise<SlackRef | undefined> {
    if (!isSlackRef(ref) || ref.ts.length === 0)
      return Promise.reject(new Error('not a Slack card reference'))
    this.#remember(card)
    const key = `${ref.channel}:${ref.ts[0]}`
    const pending = this.#pendingUpdates.get(key)
    if (pending) {
      pending.card = card
      return pending.promise
    }
    const entry: { card: CardState; promise: Promise<SlackRef | undefined> } = {
      card,
      promise: Promise.resolve(undefined),
    }
    this.#pendingUpdates.set(key, entry)
    entry.promise = this.#queues.run(ref.channel, async (call) => {
      if (this.#pendingUpdates.get(key) === entry) this.#pendingUpdates.delete(key)
      return this.#applyUpdate(entry.card, ref, call)
    })
    return entry.promise
  }

  async #applyUpdate(card: CardState, ref: SlackRef, call: LaneCall): Promise<SlackRef | undefined> {
    const key = `${ref.channel}:${ref.ts[0]}`
    const messages = cardToMessages(card, this.#renderOptions(ref.mention, ref.locale))
    // The stored ref may already list messages this process added (or not yet, mid-update).
    const all = [...new Set([...ref.ts, ...(this.#extra.get(key) ?? [])])]
    for (const [i, message] of messages.entries()) {
      const ts = all[i]
      if (ts === undefined) {
        // The card grew (long answers in the result): add a message after the others.
        const result = await call('chat.postMessage', () =>
          this.#client.chat.postMessage({
            channel: ref.channel,
            ...message,
            unfurl_links: false,
            unfurl_media: false,
          }),
        )
        if (result.ts) {
          all.push(result.ts)
          this.#extra.set(key, [...(this.#extra.get(key) ?? []), result.ts])
          this.#show(`${ref.channel}:${result.ts}`, JSON.stringify(message))
        }
        continue
      }
      await this.#updateMessage(ref.channel, ts, message, call)
    }
    // The card shrank: leave a pointer instead of stale buttons.
    for (const ts of all.slice(messages.length)) {
      await this.#updateMessage(ref.channel, ts, continuedAbove(), call)
    }
    return all.length > ref.ts.length ? { ...ref, ts: all } : undefined
  }

  async #updateMessage(channel: string, ts: string, message: SlackMessage, call: LaneCall): Promise<void> {
    const json = JSON.stringify(message)
    if (this.#shown.get(`${channel}:${ts}`) === json) return
    try {
      await call('chat.update', () => this.#client.chat.update({ channel, ts, ...message }))
      this.#show(`${channel}:${ts}`, json)
    } catch (error) {
      // A message someone deleted cannot be updated; the other copies still can.
      if (slackError(error) === 'message_not_found') {
        this.#logger.warn(`Slack message ${channel}/${ts} is gone; not updating it`)
        return
      }
      throw error
    }
  }

  async notify(person: Person, text: string, ref?: unknown): Promise<void> {
    if (person.platform !== 'slack') return
    await this.#privateNotice(person.userId, text, isSlackRef(ref) ? { channel: ref.channel } : {})
  }

  /** Members of a user group. Not cached here: the responder policy caches with one expiry. */
  async groupMembers(groupId: string): Promise<string[]> {
    const result = await this.#queues.now('usergroups.users.list', () =>
      this.#client.usergroups.users.list({ usergroup: groupId }),
    )
    return result.users ?? []
  }

  // ---- inbound ----

  #listen(): void {
    const ours = /^ab1\|/
    this.#app.action(ours, async ({ ack, body }) => {
      await this.#ackAfter(ack, this.#onBlockActions(body as unknown as BlockActionsPayload))
    })
    this.#app.view({ callback_id: ours, type: 'view_submission' }, async ({ ack, body }) => {
      await this.#ackAfter(ack, this.#onView(body as unknown as ViewPayload))
    })
    this.#app.view({ callback_id: ours, type: 'view_closed' }, async ({ ack, body }) => {
      await this.#ackAfter(ack, this.#onView(body as unknown as ViewPayload))
    })
    this.#app.error(async (error) => {
      this.#logger.error('Slack listener failed', { error })
    })
  }

  /**
   * Acknowledge once the interaction is applied (so what Slack was told is received is already
   * in the store), but never later than the ack budget: a slow store or Web API finishes after
   * the ack, within Slack's 3 seconds either way.
   */
  async #ackAfter(ack: () => Promise<void>, work: Promise<unknown>): Promise<void> {
    const tracked = this.#track(work)
    let timer: ReturnType<typeof setTimeout> | undefined
    const budget = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#options.ackBudgetMs ?? ACK_BUDGET_MS)
    })
    await Promise.race([tracked, budget])
    clearTimeout(timer)
    await ack()
  }

  #track(work: Promise<unknown>): Promise<void> {
    const guarded = work
      .then(() => undefined)
      .catch((error: unknown) => this.#logger.error('Slack interaction failed', { error }))
    this.#inflight.add(guarded)
    void guarded.finally(() => this.#inflight.delete(guarded))
    return guarded
  }

  async #onBlockActions(payload: BlockActionsPayload): Promise<void> {
    const host = this.#requireHost()
    for (const action of decodeBlockActions(payload, this.#now())) {
      const card = await this.#card(action.ref.callId)
      if (!card) {
        await this.#notice(action.actor.userId, 'This question is no longer known to askbridge.', action)
        continue
      }
      const result = resolveAction(action, card.questions)
      await this.#dispatch(host, result, action.actor)
    }
  }

  async #onView(payload: ViewPayload): Promise<void> {
    const host = this.#requireHost()
    const callId = callIdOf(payload)
    if (callId === undefined) return
    const card = await this.#card(callId)
    if (!card) return
    const result = decodeView(payload, card.questions, this.#now())
    if (!result) return
    await this.#dispatch(host, result, { platform: 'slack', userId: payload.user.id })
  }

  async #dispatch(host: CardHost, result: DecodeResult, actor: Person): Promise<void> {
    switch (result.kind) {
      case 'invalid':
        await this.#notice(actor.userId, result.message, result.context)
        return
      case 'modal':
        await this.#openModal(host, result, actor)
        return
      case 'interaction': {
        const outcome = await host.handle(result.inbound)
        this.#afterOutcome(outcome)
        if (outcome.message) await this.#notice(actor.userId, outcome.message, result.context)
        return
      }
    }
  }

  async #openModal(
    host: CardHost,
    result: Extract<DecodeResult, { kind: 'modal' }>,
    actor: Person,
  ): Promise<void> {
    const card = await this.#card(result.callId)
    const { triggerId, channel } = result.context
    if (!card || (card.status !== 'open' && card.status !== 'continued')) {
      const outcome = await host.handle(result.hold) // the host words the refusal for a finished card
      await this.#notice(actor.userId, outcome.message ?? 'This question is closed.', result.context)
      return
    }
    if (!triggerId) return
    // Someone who may not answer is told now, not after typing a whole answer. The trigger_id
    // lasts 3 seconds: when the check is slow, the form opens and the submission decides.
    const allowed = host.mayAnswer
      ? await within(host.mayAnswer(card.callId, actor), FORM_CHECK_MS, { ok: true })
      : { ok: true }
    if (!allowed.ok) {
      await this.#notice(actor.userId, allowed.message ?? 'You cannot answer this question.', result.context)
      return
    }
    const view =
      result.modal === 'decline'
        ? declineModal(card, channel)
        : otherModal(card, result.q, channel, actor.locale ?? this.#options.locale)
    let opened: Awaited<ReturnType<webApi.WebClient['views']['open']>>
    try {
      opened = await this.#queues.now('views.open', () =>
        this.#client.views.open({ trigger_id: triggerId, view }),
      )
    } catch (error) {
      // Usually expired_trigger_id: the click reached us too late to open a form from it.
      const reason = slackError(error) ?? 'error'
      this.#logger.warn('could not open a Slack form', { callId: card.callId, reason })
      await this.#notice(
        actor.userId,
        `The form could not be opened (${reason}). Please click again.`,
        result.context,
      )
      return
    }
    // Typing an answer claims a timed wait, so the deadline does not pass mid-sentence.
    if (card.status === 'open' && card.deadline !== undefined) {
      const outcome = await host.handle(result.hold)
      this.#afterOutcome(outcome)
      const viewId = opened.view?.id
      if (!outcome.ok && outcome.message && viewId) {
        await this.#queues.now('views.update', () =>
          this.#client.views.update({
            view_id: viewId,
            view: noticeModal(card.callId, outcome.message ?? ''),
          }),
        )
      }
    }
  }

  #afterOutcome(outcome: InteractionOutcome): void {
    if (outcome.card) this.#remember(outcome.card)
  }

  /** A private message to one person: the response_url when there is one, else an ephemeral message, else a DM. */
  async #privateNotice(userId: string, text: string, context: ActionContext): Promise<void> {
    const safe = escapeMrkdwn(text)
    if (context.responseUrl && this.#trustedResponseUrl(context.responseUrl)) {
      try {
        const res = await fetch(context.responseUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text: safe }),
        })
        if (res.ok) return
        this.#logger.warn(`response_url refused a notice (${res.status}); falling back to chat.postEphemeral`)
      } catch (error) {
        this.#logger.warn('response_url failed; falling back to chat.postEphemeral', { error })
      }
    }
    if (context.channel) {
      const channel = context.channel
      try {
        await this.#queues.run(`ephemeral:${channel}`, (call) =>
          call('chat.postEphemeral', () =>
            this.#client.chat.postEphemeral({ channel, user: userId, text: safe }),
          ),
        )
        return
      } catch (error) {
        this.#logger.warn(`chat.postEphemeral failed (${slackError(error) ?? 'error'}); sending a DM instead`)
      }
    }
    const dm = await this.#openDm(userId)
    await this.#queues.run(dm, (call) =>
      call('chat.postMessage', () => this.#client.chat.postMessage({ channel: dm, text: safe })),
    )
  }

  #notice(userId: string, text: string, context: ActionContext): Promise<void> {
    return this.#privateNotice(userId, text, context)
  }

  /** response_url comes from a verified payload; still, only post to Slack's hosts or the configured API host. */
  #trustedResponseUrl(url: string): boolean {
    try {
      const u = new URL(url)
      if (this.#options.apiUrl && u.origin === new URL(this.#options.apiUrl).origin) return true
      return u.protocol === 'https:' && /(^|\.)slack(-gov)?\.com$/.test(u.hostname)
    } catch {
      return false
    }
  }

  async #openDm(userId: string): Promise<string> {
    const result = await this.#queues.now('conversations.open', () =>
      this.#client.conversations.open({ users: userId }),
    )
    const id = result.channel?.id
    if (!id) throw new Error(`could not open a direct message with ${userId}`)
    return id
  }

  async #card(callId: string): Promise<CardState | undefined> {
    const cached = this.#cards.get(callId)
    if (cached) return cached
    const card = await this.#requireHost().getCard(callId)
    if (card) this.#remember(card)
    return card
  }

  /** Remember what a message shows, dropping the oldest entries past the cap. */
  #show(key: string, json: string): void {
    this.#shown.delete(key)
    this.#shown.set(key, json)
    if (this.#shown.size > SHOWN_CACHE) {
      const oldest = this.#shown.keys().next().value
      if (oldest !== undefined) this.#shown.delete(oldest)
    }
  }

  #remember(card: CardState): void {
    this.#cards.delete(card.callId)
    this.#cards.set(card.callId, card)
    if (this.#cards.size > CARD_CACHE) {
      const oldest = this.#cards.keys().next().value
      if (oldest !== undefined) this.#cards.delete(oldest)
    }
  }

  #renderOptions(mention: string[] | undefined, personLocale?: string) {
    const locale = personLocale ?? this.#options.locale
    return { ...(mention ? { mentions: mention } : {}), ...(locale ? { locale } : {}) }
  }

  /** A user's Slack locale (`users.info` with `include_locale`), or undefined when unavailable. */
  async #userLocale(userId: string): Promise<string | undefined> {
    try {
      const result = await this.#queues.now('users.info', () =>
        this.#client.users.info({ user: userId, include_locale: true }),
      )
      return result.user?.locale || undefined
    } catch (error) {
      this.#logger.debug('users.info failed; using the default locale', { error: slackError(error) })
      return undefined
    }
  }

  #requireHost(): CardHost {
    if (!this.#host) throw new Error('SlackAdapter.start(host) has not been called')
    return this.#host
  }
}

function continuedAbove(): SlackMessage {
  const blocks: MessageBlock[] = [
    { type: 'context', elements: [{ type: 'mrkdwn', text: '(see the message above)' }] },
  ]
  return { text: '(see the message above)', blocks }
}

/** Errors by which Slack refuses a token (as opposed to a network failure or an outage). */
const TOKEN_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
  'missing_scope',
])

/** A start failure that says which token Slack refused, so the fix is obvious; never the token itself. */
function tokenError(error: unknown, which: string, hint: string): Error {
  const code = slackError(error)
  if (code && TOKEN_ERRORS.has(code)) {
    return new Error(`Slack refused the ${which}: ${code}; ${hint}`, { cause: error })
  }
  return error instanceof Error ? error : new Error(String(error))
}

/** The `error` string of a Slack platform error (`{ok:false, error}`), if that is what this is. */
export function slackError(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const data = (error as { data?: { error?: unknown } }).data
  return typeof data?.error === 'string' ? data.error : undefined
}
