/**
 * The 3-second rule in one place: an interaction gets exactly one initial response. When the
 * clicked card's new look is ready in time it is that response (UPDATE_MESSAGE, so a click costs
 * no extra edit); when the work is slow it is acknowledged with DEFERRED_UPDATE_MESSAGE (no
 * loading state; the card is edited through the channel endpoints), and anything left to say goes
 * out as an ephemeral follow-up.
 */
import {
  type APIInteractionResponse,
  type APIInteractionResponseCallbackData,
  InteractionResponseType,
  MessageFlags,
} from 'discord.js'
import { type Logger, silentLogger } from '../../src/adapter-kit.js'
import { noticeText } from './text.js'

export interface AcknowledgerOptions {
  /** Sends the initial response (interaction callback, or the HTTP reply). */
  reply: (body: APIInteractionResponse) => Promise<void>
  /** Sends an ephemeral follow-up on the interaction token. */
  followUp: (content: string) => Promise<void>
  /** Acknowledge after this long without a response. Discord's limit is 3000 ms. @default 2000 */
  ackAfterMs?: number
  logger?: Logger
}

export class Acknowledger {
  /** Whether the initial response was sent (or attempted). */
  replied = false
  private readonly timer: ReturnType<typeof setTimeout>
  private deferring: Promise<void> | undefined
  private readonly log: Logger
  private markReplied: () => void = () => {}
  /** Resolves once the initial response went out (or was attempted). */
  readonly repliedNow: Promise<void> = new Promise((resolve) => {
    this.markReplied = resolve
  })

  constructor(private readonly options: AcknowledgerOptions) {
    this.log = options.logger ?? silentLogger
    this.timer = setTimeout(() => {
      this.deferring = this.defer()
    }, options.ackAfterMs ?? 2000)
  }

  /**
   * Send the initial response (once). Failures (an expired token) are logged, not thrown; the
   * result says whether Discord took it.
   */
  async send(body: APIInteractionResponse): Promise<boolean> {
    clearTimeout(this.timer)
    if (this.replied) throw new Error('interaction already acknowledged')
    this.replied = true
    this.markReplied()
    try {
      await this.options.reply(body)
      return true
    } catch (error) {
      // An expired or already-used token: the card is still edited through the channel.
      this.log.warn('interaction response failed', { error })
      return false
    }
  }

  /**
   * Show the clicked message's new look as the initial response (UPDATE_MESSAGE). False when the
   * interaction was already answered (deferred at the deadline) or Discord refused the callback:
   * then the caller edits the message through the channel instead.
   */
  async updateMessage(data: APIInteractionResponseCallbackData): Promise<boolean> {
    if (this.replied) return false
    return this.send({ type: InteractionResponseType.UpdateMessage, data })
  }

  /** A private message to the person who acted: the ephemeral reply, or a follow-up after a defer. */
  async tell(text: string): Promise<void> {
    const content = noticeText(text)
    clearTimeout(this.timer)
    await this.deferring
    if (!this.replied) {
      await this.send({
        type: InteractionResponseType.ChannelMessageWithSource,
        data: { content, flags: MessageFlags.Ephemeral, allowed_mentions: { parse: [] } },
      })
      return
    }
    try {
      await this.options.followUp(content)
    } catch (error) {
      this.log.warn('interaction follow-up failed', { error })
    }
  }

  private async defer(): Promise<void> {
    if (this.replied) return
    await this.send({ type: InteractionResponseType.DeferredMessageUpdate })
  }

  /** Acknowledge silently if nothing was said. */
  async finish(): Promise<void> {
    clearTimeout(this.timer)
    await this.deferring
    if (!this.replied) await this.defer()
  }
}
