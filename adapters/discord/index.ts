/**
 * The Discord adapter: cards as messages with embeds and buttons/selects, interactions from the
 * gateway (or signed HTTP), answers through the card host.
 */

import { createHash, type KeyObject } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  type APIInteraction,
  type APIInteractionResponse,
  InteractionResponseType,
  InteractionType,
} from 'discord.js'
import {
  type CardHost,
  type ChatAdapter,
  type Notice,
  notAppliedMessage,
  within,
} from '../../src/answerer/adapter.js'
import { cardRef, decodeComponentId } from '../../src/card/codec.js'
import type { CardState, Destination, Person } from '../../src/card/types.js'
import { type Logger, silentLogger } from '../../src/log.js'
import type { LeaderHandlers, Leadership } from '../../src/store/pg-leader.js'
import { Acknowledger } from './ack.js'
import { type Decoded, onCard, type ParsedInteraction, parseInteraction, readInteraction } from './decode.js'
import { readInteractionRequest } from './http.js'
import { declineModal, otherModal, reasonModal } from './modal.js'
import { noticeMessage } from './notice.js'
import { cardToDiscordMessages, type DiscordMessage } from './render.js'
import { noticeText } from './text.js'
import { DiscordTransport } from './transport.js'
import { importPublicKey, ReplayGuard } from './verify.js'

/** How long the may-this-person-answer check may take before a form opens anyway. */
const FORM_CHECK_MS = 1000

export { decodeInteraction, onCard, parseInteraction, readInteraction } from './decode.js'
export { declineModal, otherModal } from './modal.js'
export { cardToDiscordMessages, type DiscordMessage, type RenderOptions } from './render.js'
export { importPublicKey, ReplayGuard, SIGNATURE_MAX_AGE_S, verifyDiscordSignature } from './verify.js'

export interface DiscordAdapterOptions {
  /** Bot token (DISCORD_BOT_TOKEN). */
  token: string
  /**
   * REST base (DISCORD_API_URL); the gateway URL comes from `GET /gateway/bot`.
   * @default 'https://discord.com/api'
   */
  apiUrl?: string
  /** Application public key (DISCORD_PUBLIC_KEY): enables `handleHttp` for HTTP interactions. */
  publicKey?: string
  /** Application id; only informational, interactions carry their own. */
  applicationId?: string
  /**
   * Connect to the gateway on `start`. Turn off only when every interaction arrives over HTTP.
   * @default true
   */
  gateway?: boolean
  /**
   * Several bridges on one database: every one connects the gateway, but only the holder of
   * this leadership handles its interactions, so each interaction gets exactly one response.
   * When the holder dies another takes over within seconds. Unset: this bridge handles them all.
   */
  gatewayLeader?: (handlers: LeaderHandlers) => Leadership
  /**
   * How long an interaction may run before it is acknowledged with DEFERRED_UPDATE_MESSAGE.
   * Discord invalidates the token after 3 s without a response.
   * @default 2000
   */
  ackAfterMs?: number
  logger?: Logger
  /** How long the start-up check waits for the REST API to answer (DISCORD_API_URL). @default 5000 */
  startCheckMs?: number
  /** Clock for the HTTP interaction timestamp check (tests). @default Date.now */
  now?: () => number
}

/** What `post` returns and `update` receives (stored as JSON by the answerer). */
export interface DiscordRef {
  channelId: string
  /** The card's messages, first to last (continuation messages when it does not fit one). */
  messageIds: string[]
  mention?: string[]
  locale?: string
}

function isRef(value: unknown): value is DiscordRef {
  const ref = value as DiscordRef | null
  return (
    typeof ref?.channelId === 'string' &&
    Array.isArray(ref.messageIds) &&
    ref.messageIds.every((id) => typeof id === 'string')
  )
}

/** What a left-over continuation message shows once a card needs fewer messages. */
const EMPTY_CONTINUATION: DiscordMessage = {
  content: '-# (continued above)',
  embeds: [],
  components: [],
  allowed_mentions: { parse: [] },
}

/** What the first messages of a card that could not be posted in full show. */
const NOT_POSTED: DiscordMessage = {
  content: '-# This question could not be posted in full; it is answerable elsewhere.',
  embeds: [],
  components: [],
  allowed_mentions: { parse: [] },
}

/** A component interaction on a card message that is still being handled. */
interface Click {
  ack: Acknowledger
  /** Resolves once an update reached the clicked message (shown, edited, or found unchanged). */
  seen: Promise<void>
  see: () => void
}

const DISCORD_EPOCH_MS = 1420070400000

/** A message nonce (at most 25 characters) for one part of one copy of a card. */
function cardNonce(key: string, part: number): string {
  return `ab${createHash('sha256').update(`${key}#${part}`).digest('hex').slice(0, 23)}`
}

/** Interaction tokens stay valid 15 minutes; use them a little less. */
const TOKEN_TTL_MS = 14 * 60_000

export class DiscordAdapter implements ChatAdapter {
  readonly platform = 'discord' as const
  readonly transport: DiscordTransport
  private host: CardHost | undefined
  private readonly log: Logger
  private readonly key: KeyObject | undefined
  private readonly replays: ReplayGuard
  private readonly gateway: boolean
  private readonly gatewayLeader: DiscordAdapterOptions['gatewayLeader']
  private leadership: Leadership | undefined
  private readonly ackAfterMs: number
  /** Continuation messages posted by `update` beyond those in the stored ref, by first message id. */
  /** What each message last showed, so unchanged messages are not edited again. */
  private readonly shown = new Map<string, string>()
  /** Each person's latest interaction token, for private notices. */
  private readonly tokens = new Map<string, { applicationId: string; token: string; until: number }>()
  private readonly pending = new Set<Promise<unknown>>()
  /** Interactions in flight, by the message they came from: its next look can be their response. */
  private readonly clicks = new Map<string, Click[]>()

  constructor(options: DiscordAdapterOptions) {
    this.log = options.logger ?? silentLogger
    this.transport = new DiscordTransport({
      token: options.token,
      ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}),
      ...(options.startCheckMs === undefined ? {} : { startCheckMs: options.startCheckMs }),
      logger: this.log,
    })
    this.key = options.publicKey ? importPublicKey(options.publicKey) : undefined
    this.replays = new ReplayGuard(options.now)
    this.gateway = options.gateway ?? true
    this.gatewayLeader = options.gatewayLeader
    this.ackAfterMs = options.ackAfterMs ?? 2000
  }

  async start(host: CardHost): Promise<void> {
    this.host = host
    if (this.gateway) {
      this.leadership = this.gatewayLeader?.({
        lead: async () => this.log.info('this bridge now handles Discord gateway interactions'),
        resign: async () => this.log.info('this bridge no longer handles Discord gateway interactions'),
      })
      await this.transport.connect((raw) => {
        // Another bridge on the same database answers it.
        if (this.leadership && !this.leadership.leading) return
        // The gateway has no status to refuse with: a malformed interaction is logged and dropped.
        const checked = readInteraction(raw)
        if (!checked.ok) {
          this.log.warn('Refused a Discord interaction from the gateway', { reason: checked.reason })
          return
        }
        const payload = checked.payload
        this.track(
          this.onInteraction(payload, (body) => this.transport.callback(payload.id, payload.token, body)),
        )
      })
    }
  }

  async stop(): Promise<void> {
    await this.leadership?.stop()
    await Promise.allSettled([...this.pending])
    await this.transport.close()
  }

  /**
   * After a crash between posting and storing the reference: the card's messages posted since
   * `since` are found by their components (the custom ids carry the call). One whole copy is
   * adopted; extra copies are deleted, and a copy cut short is taken down to be posted whole.
   */
  async find(
    card: CardState,
    destination: Destination,
    _key: string,
    since: number,
  ): Promise<DiscordRef | undefined> {
    const channelId =
      destination.channel ?? (destination.user && (await this.transport.dmChannel(destination.user)))
    if (!channelId) return undefined
    const after = String((BigInt(Math.max(0, since - 5000 - DISCORD_EPOCH_MS)) << 22n).toString())
    const ours = (await this.transport.messagesAfter(channelId, after)).filter((m) =>
      (m.components ?? []).some((row) =>
        ('components' in row ? row.components : []).some(
          (c) => 'custom_id' in c && decodeComponentId(c.custom_id)?.callId === card.callId,
        ),
      ),
    )
    const ref: DiscordRef = { channelId, messageIds: [] }
    if (destination.mention?.length) ref.mention = [...destination.mention]
    const locale = this.transport.channelLocale(channelId)
    if (locale) ref.locale = locale
    const expected = cardToDiscordMessages(card, ref)
    const withComponents = expected.filter((m) => m.components.length > 0).length
    // A one-message card is recognisable whole; for longer cards only parts with components are.
    const keep = expected.length === 1 && withComponents === 1 ? ours.slice(0, 1) : []
    for (const extra of ours.filter((m) => !keep.includes(m))) {
      this.log.warn('retiring an extra copy of a card', { channel: channelId, message: extra.id })
      await this.transport
        .remove(channelId, extra.id)
        .catch((error: unknown) => this.log.warn('could not delete an extra copy', { error }))
    }
    if (keep.length === 0) return undefined
    ref.messageIds = keep.map((m) => m.id)
    return ref
  }

  async post(card: CardState, destination: Destination, key?: string): Promise<DiscordRef> {
    const channelId =
      destination.channel ?? (destination.user && (await this.transport.dmChannel(destination.user)))
    if (!channelId) throw new Error('a Discord destination needs a channel or a user')
    const locale = this.transport.channelLocale(channelId)
    const ref: DiscordRef = { channelId, messageIds: [] }
    if (destination.mention?.length) ref.mention = [...destination.mention]
    if (locale) ref.locale = locale
    try {
      for (const [part, message] of cardToDiscordMessages(card, ref).entries()) {
        // The nonce makes Discord itself refuse a second copy of this part for a few minutes.
        const sent = await this.transport.send(channelId, message, key ? cardNonce(key, part) : undefined)
        ref.messageIds.push(sent.id)
        this.remember(sent.id, message)
      }
    } catch (error) {
      // A card half posted must not leave live-looking buttons behind.
      for (const id of ref.messageIds)
        await this.transport.edit(channelId, id, NOT_POSTED).catch(() => undefined)
      throw error
    }
    return ref
  }

  /** Edits every message of the copy; a copy that grows returns its new reference (stored by the answerer). */
  async update(card: CardState, ref: unknown): Promise<DiscordRef | undefined> {
    if (!isRef(ref)) throw new Error('not a Discord card reference')
    if (!ref.messageIds[0]) return undefined
    const messages = cardToDiscordMessages(card, ref)
    const ids = [...ref.messageIds]
    const added: string[] = []
    // One message someone deleted must not keep the others stale: try them all, report the first error.
    const errors: unknown[] = []
    const attempt = (task: Promise<void>) => task.catch((error: unknown) => void errors.push(error))
    for (const [i, message] of messages.entries()) {
      const id = ids[i]
      if (id) await attempt(this.editIfChanged(ref.channelId, id, message))
      else {
        await attempt(
          this.transport.send(ref.channelId, message).then((sent) => {
            added.push(sent.id)
            this.remember(sent.id, message)
          }),
        )
      }
    }
    for (const id of ids.slice(messages.length))
      await attempt(this.editIfChanged(ref.channelId, id, EMPTY_CONTINUATION))
    const grown = added.length > 0 ? { ...ref, messageIds: [...ids, ...added] } : undefined
    if (errors.length) {
      // Messages that did go out are part of the copy: hand them back rather than lose them.
      if (!grown) throw errors[0]
      this.log.error('a card update partly failed', { channel: ref.channelId, error: errors[0] })
    }
    return grown
  }

  /** A notice without buttons (see notice.ts), through the channel's queue like the cards. */
  async postNotice(
    notice: Notice,
    destination: Destination,
  ): Promise<{ channelId: string; messageId: string }> {
    const channelId =
      destination.channel ?? (destination.user && (await this.transport.dmChannel(destination.user)))
    if (!channelId) throw new Error('a Discord destination needs a channel or a user')
    const sent = await this.transport.send(channelId, noticeMessage(notice))
    return { channelId, messageId: sent.id }
  }

  async notify(person: Person, text: string): Promise<void> {
    const recent = this.tokens.get(person.userId)
    if (recent && recent.until > Date.now()) {
      try {
        await this.transport.followUp(recent.applicationId, recent.token, noticeText(text))
        return
      } catch (error) {
        this.log.debug('ephemeral notice failed, sending a DM', { error })
      }
    }
    const channelId = await this.transport.dmChannel(person.userId)
    await this.transport.send(channelId, {
      content: noticeText(text),
      embeds: [],
      components: [],
      allowed_mentions: { parse: [] },
    })
  }

  /**
   * HTTP interactions (`POST /discord/interactions`): Ed25519-verified, 401 on a bad or missing
   * signature and on a stale or replayed request, PING answered with PONG. The initial response is the HTTP reply.
   */
  async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.key) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"message":"HTTP interactions are off"}')
      return
    }
    const payload = await readInteractionRequest(req, res, this.key, this.replays, this.log)
    if (!payload) return
    let replied = false
    const reply = async (body: APIInteractionResponse) => {
      if (replied) throw new Error('already replied over HTTP')
      replied = true
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    }
    await this.track(this.onInteraction(payload, reply))
    if (!res.writableEnded) res.writeHead(202).end()
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise)
    void promise.finally(() => this.pending.delete(promise)).catch(() => {})
    return promise
  }

  private remember(messageId: string, message: DiscordMessage): void {
    this.shown.set(messageId, JSON.stringify(message))
    // Bounded: forgetting only costs one redundant edit.
    if (this.shown.size > 10_000) {
      const oldest = this.shown.keys().next().value
      if (oldest !== undefined) this.shown.delete(oldest)
    }
  }

  private async editIfChanged(channelId: string, messageId: string, message: DiscordMessage): Promise<void> {
    const clicks = this.clicks.get(messageId) ?? []
    try {
      if (this.shown.get(messageId) === JSON.stringify(message)) return
      // Someone's click on this very message is still waiting for its response: the new look is
      // that response (UPDATE_MESSAGE), one API call instead of an acknowledgement and an edit.
      // Updates of one card never overlap (CardCopies), so no older edit of it is still queued.
      for (const click of clicks) {
        if (click.ack.replied) continue
        if (await click.ack.updateMessage(message)) {
          this.remember(messageId, message)
          return
        }
      }
      await this.transport.edit(channelId, messageId, message)
      this.remember(messageId, message)
    } finally {
      for (const click of clicks) click.see()
    }
  }

  /** Note a component interaction on a message until it is answered; returns the forget function. */
  private trackClick(messageId: string, ack: Acknowledger): { click: Click; forget: () => void } {
    let see = () => {}
    const seen = new Promise<void>((resolve) => {
      see = resolve
    })
    const click: Click = { ack, seen, see }
    const list = this.clicks.get(messageId) ?? []
    list.push(click)
    this.clicks.set(messageId, list)
    const forget = () => {
      const current = (this.clicks.get(messageId) ?? []).filter((c) => c !== click)
      if (current.length) this.clicks.set(messageId, current)
      else this.clicks.delete(messageId)
    }
    return { click, forget }
  }

  /**
   * One interaction, answered within the deadline: refusals become ephemeral replies, modals
   * open at once, a click that changed the card is answered with the clicked message's new look
   * (UPDATE_MESSAGE, from `update`) when that is ready in time, and everything else is
   * acknowledged with DEFERRED_UPDATE_MESSAGE (the card is then edited through the channel).
   */
  private async onInteraction(
    payload: APIInteraction,
    reply: (body: APIInteractionResponse) => Promise<void>,
  ): Promise<void> {
    if (payload.type === InteractionType.Ping) {
      await reply({ type: InteractionResponseType.Pong })
      return
    }
    const ack = new Acknowledger({
      reply,
      followUp: (content) => this.transport.followUp(payload.application_id, payload.token, content),
      ackAfterMs: this.ackAfterMs,
      logger: this.log,
    })
    let tracked: { click: Click; forget: () => void } | undefined
    try {
      const parsed = parseInteraction(payload)
      if (!parsed) {
        await ack.tell('askbridge does not know this control.')
        return
      }
      tracked = parsed.messageId ? this.trackClick(parsed.messageId, ack) : undefined
      this.tokens.set(parsed.actor.userId, {
        applicationId: parsed.applicationId,
        token: parsed.token,
        until: Date.now() + TOKEN_TTL_MS,
      })
      const host = this.host
      if (!host) {
        await ack.tell('askbridge is starting; please try again in a moment.')
        return
      }
      const card = await host.getCard(parsed.ref)
      const decoded = onCard(parsed, card)
      await this.act(decoded, parsed, card, host, ack, tracked?.click)
    } catch (error) {
      this.log.error('discord interaction failed', { error, interaction: payload.id })
      // Not stored, so not applied: say so, and the person can click again.
      await ack.tell(notAppliedMessage(error)).catch(() => {})
    } finally {
      tracked?.forget()
      await ack.finish()
    }
  }

  private async act(
    decoded: Decoded,
    parsed: ParsedInteraction,
    card: CardState | undefined,
    host: CardHost,
    ack: Acknowledger,
    click: Click | undefined,
  ): Promise<void> {
    switch (decoded.kind) {
      case 'refuse':
        await ack.tell(decoded.message)
        return
      case 'modal': {
        if (!card || ack.replied) {
          await ack.tell('Please press the button again.')
          return
        }
        // Someone who may not answer is told now, not after typing a whole answer. The check must
        // not cost the 3-second window: when it is slow, the form opens and submit decides.
        const allowed = host.mayAnswer
          ? await within(host.mayAnswer(cardRef(card), decoded.inbound.interaction.actor), FORM_CHECK_MS, {
              ok: true,
            })
          : { ok: true }
        if (!allowed.ok) {
          await ack.tell(allowed.message ?? 'You cannot answer this question.')
          return
        }
        const data =
          decoded.modal === 'decline'
            ? declineModal(card, decoded.q)
            : decoded.modal === 'approve' || decoded.modal === 'reject'
              ? reasonModal(card, decoded.modal)
              : otherModal(card, decoded.q)
        await ack.send({ type: InteractionResponseType.Modal, data })
        // Typing in the form holds a timed wait open; a refusal shows when the form is submitted.
        // Without a deadline there is nothing to hold, and Discord never says when a form is
        // dismissed, so a hold would show the person "taking their time" for good.
        if (card.deadline === undefined) return
        const outcome = await host.handle(decoded.inbound)
        if (!outcome.ok)
          this.log.debug('hold refused', { callId: parsed.ref.callId, message: outcome.message })
        return
      }
      case 'apply': {
        const outcome = await host.handle(decoded.inbound)
        // The card changed: wait for this message's update to become the response, or for the
        // deadline (the acknowledger defers then, and the update edits through the channel).
        if (outcome.ok && outcome.updating && click) await Promise.race([click.seen, ack.repliedNow])
        if (!outcome.ok) await ack.tell(outcome.message ?? 'That did not work; please try again.')
        else if (outcome.message) await ack.tell(outcome.message)
        return
      }
    }
  }
}
