/**
 * Outbound: post a card as one or more messages, update every message of a copy (growing or
 * shrinking it), take a half-posted card back down. All Web API writes go through the
 * queues (queue.ts): posts in per-channel lanes, updates paced apart and superseded, Retry-After.
 *
 * Which copies exist and which reference is current is the answerer's (it stores the reference
 * `update` returns); this file keeps only what each message last showed, to skip no-op edits.
 */
import type { webApi } from '@slack/bolt'
import {
  type CardState,
  type Destination,
  type Logger,
  type Mention,
  setBounded,
} from '../../src/adapter-kit.js'
import type { MessageBlock, SlackMessage } from './blocks.js'
import { slackError } from './errors.js'
import type { ChannelQueues, LaneCall } from './queue.js'
import { cardToMessages, type RenderOptions } from './render.js'

/** What `post` returns and `update` receives: where the card's messages are. JSON-serializable. */
export interface SlackRef {
  channel: string
  /** The card's messages in order; the first is the main one. */
  ts: string[]
  /** The destination's mentions, so updates render the same header. */
  mention?: Mention[]
  /** The reader's locale, for a direct message. */
  locale?: string
}

export function isSlackRef(ref: unknown): ref is SlackRef {
  if (typeof ref !== 'object' || ref === null) return false
  const r = ref as Record<string, unknown>
  return typeof r.channel === 'string' && Array.isArray(r.ts) && r.ts.every((t) => typeof t === 'string')
}

/** The metadata event type that marks a card's messages. */
const CARD_EVENT = 'askbridge_card'
/** How many pages of channel history `find` reads at most. */
const FIND_PAGES = 10

interface CardMetadata {
  event_type: typeof CARD_EVENT
  event_payload: { key: string; part: number; parts: number }
}

function cardMetadata(key: string, part: number, parts: number): CardMetadata {
  return { event_type: CARD_EVENT, event_payload: { key, part, parts } }
}

/** Last-shown message renders kept to skip no-op updates. */
const SHOWN_CACHE = 5000

export interface OutboundDeps {
  client: webApi.WebClient
  queues: ChannelQueues
  logger: Logger
  /** Locale for channel messages (everyone in a channel sees one text). */
  locale?: string
}

export class SlackOutbound {
  readonly #deps: OutboundDeps
  /** What each message last showed, to skip no-op updates. Keyed `channel:ts`. */
  readonly #shown = new Map<string, string>()

  constructor(deps: OutboundDeps) {
    this.#deps = deps
  }

  async post(card: CardState, destination: Destination, key?: string): Promise<SlackRef> {
    let channel = destination.channel ?? (destination.user ? await this.openDm(destination.user) : undefined)
    if (!channel) throw new Error('A Slack destination needs a channel or a user')
    const mention = destination.mention?.length ? [...destination.mention] : undefined
    // A direct message has one reader: word approvals in their locale (needs users:read).
    const locale =
      !destination.channel && destination.user ? await this.#userLocale(destination.user) : undefined
    const messages = cardToMessages(card, this.#renderOptions(mention, locale))
    const ts: string[] = []
    try {
      await this.#deps.queues.run(channel, async (call) => {
        for (const [part, message] of messages.entries()) {
          // Message metadata is kept by Slack and read back by conversations.history: after a
          // crash, `find` recognises this copy by it instead of posting a second one.
          const marked: SlackMessage & { metadata?: CardMetadata } = key
            ? { ...message, metadata: cardMetadata(key, part, messages.length) }
            : message
          const posted = await this.#postMessage(channel as string, marked, call)
          channel = posted.channel
          ts.push(posted.ts)
        }
      })
    } catch (error) {
      // A card half posted would leave live buttons nobody updates: take the parts back down.
      await this.#deleteAll(channel, ts)
      throw error
    }
    return { channel, ts, ...(mention ? { mention } : {}), ...(locale ? { locale } : {}) }
  }

  /**
   * Look for a copy posted with `key` (see {@link post}) in the destination's channel since
   * `since`: conversations.history with the messages' metadata. The oldest complete copy is
   * adopted; any other copy, and the parts of a copy cut short, are deleted so no second set of
   * live buttons stays behind.
   */
  async find(
    _card: CardState,
    destination: Destination,
    key: string,
    since: number,
  ): Promise<SlackRef | undefined> {
    const channel =
      destination.channel ?? (destination.user ? await this.openDm(destination.user) : undefined)
    if (!channel) return undefined
    const parts: Array<{ ts: string; part: number; parts: number }> = []
    let cursor: string | undefined
    // Posted after the intent was stored; a minute of slack for clocks.
    const oldest = String(Math.max(0, Math.floor(since / 1000) - 60))
    for (let page = 0; page < FIND_PAGES; page++) {
      const result = await this.#deps.queues.now('conversations.history', () =>
        this.#deps.client.conversations.history({
          channel,
          oldest,
          limit: 200,
          include_all_metadata: true,
          ...(cursor ? { cursor } : {}),
        }),
      )
      for (const m of result.messages ?? []) {
        const meta = m.metadata as
          | { event_type?: string; event_payload?: Record<string, unknown> }
          | undefined
        const payload = meta?.event_payload
        if (meta?.event_type !== CARD_EVENT || payload?.key !== key || !m.ts) continue
        parts.push({ ts: m.ts, part: Number(payload.part), parts: Number(payload.parts) })
      }
      cursor = result.response_metadata?.next_cursor || undefined
      if (!result.has_more || !cursor) break
    }
    // Oldest first; each copy starts with its part 0.
    parts.sort((a, b) => Number.parseFloat(a.ts) - Number.parseFloat(b.ts))
    const copies: Array<typeof parts> = []
    for (const p of parts) {
      if (p.part === 0 || copies.length === 0) copies.push([])
      copies.at(-1)?.push(p)
    }
    const keep = copies.find(
      (c) => c.length > 0 && c.length === c[0]?.parts && c.every((p, i) => p.part === i),
    )
    const extra = copies.filter((c) => c !== keep).flat()
    if (extra.length > 0) {
      this.#deps.logger.warn('retiring extra copies of a card', { channel, count: extra.length })
      await this.#deleteAll(
        channel,
        extra.map((p) => p.ts),
      )
    }
    if (!keep) return undefined
    const mention = destination.mention?.length ? [...destination.mention] : undefined
    const locale =
      !destination.channel && destination.user ? await this.#userLocale(destination.user) : undefined
    return {
      channel,
      ts: keep.map((p) => p.ts),
      ...(mention ? { mention } : {}),
      ...(locale ? { locale } : {}),
    }
  }

  /**
   * Update every message of a card copy. Resolves to a new reference when the copy grew a
   * message (the answerer stores it, so an update after a restart edits that message instead of
   * posting another); undefined keeps the old one.
   */
  async update(card: CardState, ref: unknown): Promise<SlackRef | undefined> {
    if (!isSlackRef(ref) || ref.ts.length === 0) throw new Error('not a Slack card reference')
    const { channel } = ref
    const messages = cardToMessages(card, this.#renderOptions(ref.mention, ref.locale))
    // Edits are paced apart from the channel's posts (queue.ts): an answered card's buttons go
    // dead even while hundreds of new cards wait to be posted in the same channel.
    const edits = ref.ts.map((ts, i) => this.#updateMessage(channel, ts, messages[i] ?? continuedAbove()))
    // The card grew (long answers in the result): its new messages are posts, in the channel's lane.
    const added: string[] = []
    const grow = messages.slice(ref.ts.length)
    const growing =
      grow.length === 0
        ? Promise.resolve()
        : this.#deps.queues.run(channel, async (call) => {
            for (const message of grow) added.push((await this.#postMessage(channel, message, call)).ts)
          })
    const results = await Promise.allSettled([growing, ...edits])
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    const grown = added.length > 0 ? { ...ref, ts: [...ref.ts, ...added] } : undefined
    if (failed) {
      // Messages that did go out are part of the copy: hand them back rather than lose them.
      if (!grown) throw failed.reason
      this.#deps.logger.error('a card update partly failed', { channel, error: failed.reason })
    }
    return grown
  }

  async #postMessage(
    channel: string,
    message: SlackMessage,
    call: LaneCall,
  ): Promise<{ channel: string; ts: string }> {
    const result = await call('chat.postMessage', () =>
      this.#deps.client.chat.postMessage({ channel, ...message, unfurl_links: false, unfurl_media: false }),
    )
    if (!result.ts) throw new Error('chat.postMessage returned no ts')
    const where = result.channel ?? channel
    this.#show(`${where}:${result.ts}`, JSON.stringify(message))
    return { channel: where, ts: result.ts }
  }

  /**
   * Show `message` in one message. Queued per message: a newer update replaces one still waiting,
   * and what is already shown is not sent again (checked when its turn comes).
   */
  #updateMessage(channel: string, ts: string, message: SlackMessage): Promise<void> {
    const key = `${channel}:${ts}`
    const json = JSON.stringify(message)
    return this.#deps.queues.update(key, 'chat.update', async () => {
      if (this.#shown.get(key) === json) return
      try {
        await this.#deps.client.chat.update({ channel, ts, ...message })
        this.#show(key, json)
      } catch (error) {
        // A message someone deleted cannot be updated; the other copies still can.
        if (slackError(error) === 'message_not_found') {
          this.#deps.logger.warn(`Slack message ${channel}/${ts} is gone; not updating it`)
          return
        }
        throw error
      }
    })
  }

  async #deleteAll(channel: string, ts: string[]): Promise<void> {
    for (const t of ts) {
      try {
        await this.#deps.queues.now('chat.delete', () => this.#deps.client.chat.delete({ channel, ts: t }))
      } catch (error) {
        this.#deps.logger.warn('could not remove part of a card that failed to post', { channel, error })
      }
    }
  }

  async openDm(userId: string): Promise<string> {
    const result = await this.#deps.queues.now('conversations.open', () =>
      this.#deps.client.conversations.open({ users: userId }),
    )
    const id = result.channel?.id
    if (!id) throw new Error(`could not open a direct message with ${userId}`)
    return id
  }

  /** Remember what a message shows, dropping the oldest entries past the cap. */
  #show(key: string, json: string): void {
    setBounded(this.#shown, key, json, SHOWN_CACHE)
  }

  #renderOptions(mention: Mention[] | undefined, personLocale?: string): RenderOptions {
    const locale = personLocale ?? this.#deps.locale
    return { ...(mention ? { mentions: mention } : {}), ...(locale ? { locale } : {}) }
  }

  /** A user's Slack locale (`users.info` with `include_locale`), or undefined when unavailable. */
  async #userLocale(userId: string): Promise<string | undefined> {
    try {
      const result = await this.#deps.queues.now('users.info', () =>
        this.#deps.client.users.info({ user: userId, include_locale: true }),
      )
      return result.user?.locale || undefined
    } catch (error) {
      this.#deps.logger.debug('users.info failed; using the default locale', { error: slackError(error) })
      return undefined
    }
  }
}

function continuedAbove(): SlackMessage {
  const blocks: MessageBlock[] = [
    { type: 'context', elements: [{ type: 'mrkdwn', text: '(see the message above)' }] },
  ]
  return { text: '(see the message above)', blocks }
}
