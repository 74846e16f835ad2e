/**
 * Private notices to one person: the payload's response_url when there is one, else an
 * ephemeral message in the channel, else a direct message. Text is always escaped, so a notice
 * that quotes agent text cannot ping anyone.
 */
import type { webApi } from '@slack/bolt'
import type { Logger } from '../../src/adapter-kit.js'
import type { ActionContext } from './decode.js'
import { slackError } from './errors.js'
import type { ChannelQueues } from './queue.js'
import { escapeMrkdwn } from './text.js'

export interface NoticeDeps {
  client: webApi.WebClient
  queues: ChannelQueues
  logger: Logger
  /** The configured Web API base: its host may receive response_url posts too (tests, proxies). */
  apiUrl?: string
  openDm(userId: string): Promise<string>
}

export class SlackNotices {
  readonly #deps: NoticeDeps

  constructor(deps: NoticeDeps) {
    this.#deps = deps
  }

  readonly #inflight = new Set<Promise<void>>()

  /** Resolves when every notice being sent has gone out (or failed). */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
  }

  get busy(): boolean {
    return this.#inflight.size > 0
  }

  /** Tell one person something only they see. Tracked, so shutdown waits for it (within a bound). */
  send(userId: string, text: string, context: ActionContext): Promise<void> {
    const sending = this.#send(userId, text, context)
    this.#inflight.add(sending)
    void sending.finally(() => this.#inflight.delete(sending)).catch(() => {})
    return sending
  }

  async #send(userId: string, text: string, context: ActionContext): Promise<void> {
    const { client, queues, logger } = this.#deps
    const safe = escapeMrkdwn(text)
    if (context.responseUrl && this.#trusted(context.responseUrl)) {
      try {
        const res = await fetch(context.responseUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text: safe }),
        })
        if (res.ok) return
        logger.warn(`response_url refused a notice (${res.status}); falling back to chat.postEphemeral`)
      } catch (error) {
        logger.warn('response_url failed; falling back to chat.postEphemeral', { error })
      }
    }
    if (context.channel) {
      const channel = context.channel
      try {
        await queues.run(`ephemeral:${channel}`, (call) =>
          call('chat.postEphemeral', () => client.chat.postEphemeral({ channel, user: userId, text: safe })),
        )
        return
      } catch (error) {
        logger.warn(`chat.postEphemeral failed (${slackError(error) ?? 'error'}); sending a DM instead`)
      }
    }
    const dm = await this.#deps.openDm(userId)
    await queues.run(dm, (call) =>
      call('chat.postMessage', () => client.chat.postMessage({ channel: dm, text: safe })),
    )
  }

  /** response_url comes from a verified payload; still, only post to Slack's hosts or the configured API host. */
  #trusted(url: string): boolean {
    try {
      const u = new URL(url)
      if (this.#deps.apiUrl && u.origin === new URL(this.#deps.apiUrl).origin) return true
      return u.protocol === 'https:' && /(^|\.)slack(-gov)?\.com$/.test(u.hostname)
    } catch {
      return false
    }
  }
}
