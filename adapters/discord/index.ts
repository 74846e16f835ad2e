/**
 * The Discord adapter: cards as messages with embeds and buttons/selects, interactions from the
 * gateway (or signed HTTP), answers through the card host. This file only wires the parts:
 *
 * - outbound.ts: post, find, update (grow and shrink) a card, notices;
 * - inbound.ts: interactions within the 3-second deadline, forms, private notices;
 * - transport.ts: the discord.js Client and REST (posts in order per channel, edits apart);
 *   render/decode/modal/verify are pure.
 */

import type { KeyObject } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { APIInteractionResponse } from 'discord.js'
import type {
  CardHost,
  CardState,
  ChatAdapter,
  Destination,
  LeaderHandlers,
  Leadership,
  Notice,
  Person,
} from '../../src/adapter-kit.js'
import { type Logger, silentLogger } from '../../src/adapter-kit.js'
import { readInteraction } from './decode.js'
import { readInteractionRequest } from './http.js'
import { Clicks, DiscordInbound } from './inbound.js'
import { DiscordOutbound, type DiscordRef } from './outbound.js'
import { DiscordTransport } from './transport.js'
import { importPublicKey, ReplayGuard, type SeenOnce } from './verify.js'

export { decodeInteraction, onCard, parseInteraction, readInteraction } from './decode.js'
export { declineModal, otherModal } from './modal.js'
export type { DiscordRef } from './outbound.js'
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
  /**
   * Several bridges on one database: HTTP interactions seen by any of them are refused as replays
   * by all (the store's `rememberOnce`). Unset: this process remembers them.
   */
  seenOnce?: SeenOnce
}

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
  private readonly outbound: DiscordOutbound
  private readonly inbound: DiscordInbound
  private readonly pending = new Set<Promise<unknown>>()

  constructor(options: DiscordAdapterOptions) {
    this.log = options.logger ?? silentLogger
    this.transport = new DiscordTransport({
      token: options.token,
      ...(options.apiUrl ? { apiUrl: options.apiUrl } : {}),
      ...(options.startCheckMs === undefined ? {} : { startCheckMs: options.startCheckMs }),
      logger: this.log,
    })
    this.key = options.publicKey ? importPublicKey(options.publicKey) : undefined
    this.replays = new ReplayGuard(options.now, undefined, options.seenOnce)
    this.gateway = options.gateway ?? true
    this.gatewayLeader = options.gatewayLeader
    const clicks = new Clicks()
    this.outbound = new DiscordOutbound({ transport: this.transport, log: this.log, clicks })
    this.inbound = new DiscordInbound({
      transport: this.transport,
      log: this.log,
      clicks,
      host: () => this.host,
      ackAfterMs: options.ackAfterMs ?? 2000,
    })
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
          this.inbound.handle(payload, (body) => this.transport.callback(payload.id, payload.token, body)),
        )
      })
    }
  }

  async stop(): Promise<void> {
    await this.leadership?.stop()
    await Promise.allSettled([...this.pending])
    await this.transport.close()
  }

  find(
    card: CardState,
    destination: Destination,
    key: string,
    since: number,
  ): Promise<DiscordRef | undefined> {
    return this.outbound.find(card, destination, key, since)
  }

  post(card: CardState, destination: Destination, key?: string): Promise<DiscordRef> {
    return this.outbound.post(card, destination, key)
  }

  /** Edits every message of the copy; a copy that grows returns its new reference (stored by the answerer). */
  update(card: CardState, ref: unknown): Promise<DiscordRef | undefined> {
    return this.outbound.update(card, ref)
  }

  /** A notice without buttons (see notice.ts), through the channel's queue like the cards. */
  postNotice(notice: Notice, destination: Destination): Promise<{ channelId: string; messageId: string }> {
    return this.outbound.postNotice(notice, destination)
  }

  notify(person: Person, text: string): Promise<void> {
    return this.inbound.notify(person, text)
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
    await this.track(this.inbound.handle(payload, reply))
    if (!res.writableEnded) res.writeHead(202).end()
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise)
    void promise.finally(() => this.pending.delete(promise)).catch(() => {})
    return promise
  }
}
