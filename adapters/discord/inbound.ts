/**
 * Inbound: one interaction from the gateway or HTTP, answered within Discord's 3 seconds.
 * Refusals are ephemeral replies, forms open at once, and a click that changed the card is
 * answered with the clicked message's new look (UPDATE_MESSAGE) when it is ready in time, else
 * acknowledged (DEFERRED_UPDATE_MESSAGE) and the card is edited through the channel. Private
 * notices go through the person's latest interaction token, else a direct message.
 */
import {
  type APIInteraction,
  type APIInteractionResponse,
  InteractionResponseType,
  InteractionType,
} from 'discord.js'
import type { CardState, Logger, Person } from '../../src/adapter-kit.js'
import { type CardHost, cardRef, notAppliedMessage, within } from '../../src/adapter-kit.js'
import { Acknowledger } from './ack.js'
import { type Decoded, onCard, type ParsedInteraction, parseInteraction } from './decode.js'
import { declineModal, otherModal, reasonModal } from './modal.js'
import { noticeText } from './text.js'
import type { DiscordTransport } from './transport.js'

/** How long the may-this-person-answer check may take before a form opens anyway. */
const FORM_CHECK_MS = 1000

/** A component interaction on a card message that is still being handled. */
export interface Click {
  ack: Acknowledger
  /** Resolves once an update reached the clicked message (shown, edited, or found unchanged). */
  seen: Promise<void>
  see: () => void
}

/** Interaction tokens stay valid 15 minutes; use them a little less. */
const TOKEN_TTL_MS = 14 * 60_000

/** Component interactions in flight, by the message they came from: its next look can be their response. */
export class Clicks {
  private readonly clicks = new Map<string, Click[]>()

  /** The clicks on a message still waiting for their response. */
  on(messageId: string): Click[] {
    return this.clicks.get(messageId) ?? []
  }

  /** Note a component interaction on a message until it is answered; returns the forget function. */
  track(messageId: string, ack: Acknowledger): { click: Click; forget: () => void } {
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
}

export interface InboundDeps {
  transport: DiscordTransport
  log: Logger
  clicks: Clicks
  /** The card host, once the adapter started. */
  host: () => CardHost | undefined
  /** How long an interaction may run before it is acknowledged. */
  ackAfterMs: number
}

export class DiscordInbound {
  private readonly transport: DiscordTransport
  private readonly log: Logger
  private readonly clicks: Clicks
  private readonly deps: InboundDeps
  /** Each person's latest interaction token, for private notices. */
  private readonly tokens = new Map<string, { applicationId: string; token: string; until: number }>()

  constructor(deps: InboundDeps) {
    this.deps = deps
    this.transport = deps.transport
    this.log = deps.log
    this.clicks = deps.clicks
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
   * One interaction, answered within the deadline: refusals become ephemeral replies, modals
   * open at once, a click that changed the card is answered with the clicked message's new look
   * (UPDATE_MESSAGE, from `update`) when that is ready in time, and everything else is
   * acknowledged with DEFERRED_UPDATE_MESSAGE (the card is then edited through the channel).
   */
  async handle(
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
      ackAfterMs: this.deps.ackAfterMs,
      logger: this.log,
    })
    let tracked: { click: Click; forget: () => void } | undefined
    try {
      const parsed = parseInteraction(payload)
      if (!parsed) {
        await ack.tell('askbridge does not know this control.')
        return
      }
      tracked = parsed.messageId ? this.clicks.track(parsed.messageId, ack) : undefined
      this.tokens.set(parsed.actor.userId, {
        applicationId: parsed.applicationId,
        token: parsed.token,
        until: Date.now() + TOKEN_TTL_MS,
      })
      const host = this.deps.host()
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
        const outcome = await host.handle(decoded.inbound, card)
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
