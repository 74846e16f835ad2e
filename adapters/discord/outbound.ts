/**
 * Outbound: post a card as one or more messages (a nonce per part, so Discord refuses a second
 * copy), find a copy posted before a crash, keep every message of a copy up to date, post notices.
 * Posts go through the channel's ordered queue, edits through their own queue by message
 * (transport.ts), so an answered card changes even while many posts wait in its channel.
 */
import { createHash } from 'node:crypto'
import type { CardState, Destination, Logger, Mention, Notice } from '../../src/adapter-kit.js'
import { decodeComponentId, setBounded } from '../../src/adapter-kit.js'
import type { Clicks } from './inbound.js'
import { noticeMessage } from './notice.js'
import { cardToDiscordMessages, type DiscordMessage } from './render.js'
import type { DiscordTransport } from './transport.js'

/** What `post` returns and `update` receives (stored as JSON by the answerer). */
export interface DiscordRef {
  channelId: string
  /** The card's messages, first to last (continuation messages when it does not fit one). */
  messageIds: string[]
  mention?: Mention[]
  locale?: string
}

export function isRef(value: unknown): value is DiscordRef {
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

const DISCORD_EPOCH_MS = 1420070400000

/** A message nonce (at most 25 characters) for one part of one copy of a card. */
function cardNonce(key: string, part: number): string {
  return `ab${createHash('sha256').update(`${key}#${part}`).digest('hex').slice(0, 23)}`
}

export interface OutboundDeps {
  transport: DiscordTransport
  log: Logger
  /** Clicks waiting for their response: a message's new look can be that response. */
  clicks: Clicks
}

export class DiscordOutbound {
  private readonly transport: DiscordTransport
  private readonly log: Logger
  private readonly clicks: Clicks
  /** What each message last showed, so unchanged messages are not edited again. */
  private readonly shown = new Map<string, string>()

  constructor(deps: OutboundDeps) {
    this.transport = deps.transport
    this.log = deps.log
    this.clicks = deps.clicks
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

  private remember(messageId: string, message: DiscordMessage): void {
    // Bounded: forgetting only costs one redundant edit.
    setBounded(this.shown, messageId, JSON.stringify(message), 10_000)
  }

  private async editIfChanged(channelId: string, messageId: string, message: DiscordMessage): Promise<void> {
    const clicks = this.clicks.on(messageId)
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
}
