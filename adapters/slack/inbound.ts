/**
 * Inbound: Bolt listeners for our components and forms, the acknowledgement, and dispatching a
 * decoded payload to the answerer (apply it, open a form, or tell the person why not).
 *
 * The acknowledgement deadline is decided here and only here ({@link ACK_DEADLINE_MS}): a
 * listener acks once the interaction is applied (so what Slack was told is received is already
 * in the store), but never later than the deadline, within Slack's 3 s either way. The transports
 * only answer Slack when a listener acks or when processing ends (a payload that is not ours).
 */
import type { App, webApi } from '@slack/bolt'
import type { CardState, Logger, Person } from '../../src/adapter-kit.js'
import {
  type CardHost,
  COMPONENT_ID_PREFIX,
  cardRef,
  type InteractionOutcome,
  notAppliedMessage,
  within,
} from '../../src/adapter-kit.js'
import {
  type ActionContext,
  type BlockActionsPayload,
  cardRefOf,
  type DecodeResult,
  decodeBlockActions,
  decodedOnCard,
  decodeView,
  readSlackPayload,
  type ViewPayload,
} from './decode.js'
import { slackError } from './errors.js'
import { declineModal, noticeModal, otherModal, reasonModal } from './modal.js'
import type { SlackNotices } from './notices.js'
import type { ChannelQueues } from './queue.js'

/** Acknowledge a click by then at the latest, whatever is still running (Slack allows 3 s). */
export const ACK_DEADLINE_MS = 2000
/** How long the may-this-person-answer check may take before a form opens anyway. */
const FORM_CHECK_MS = 1000

export interface InboundDeps {
  app: App
  client: webApi.WebClient
  queues: ChannelQueues
  notices: SlackNotices
  logger: Logger
  host(): CardHost
  /** Locale for forms when the person's own is unknown. */
  locale?: string
  /** @default ACK_DEADLINE_MS */
  ackDeadlineMs?: number
  now: () => number
}

export class SlackInbound {
  readonly #deps: InboundDeps
  readonly #inflight = new Set<Promise<unknown>>()

  constructor(deps: InboundDeps) {
    this.#deps = deps
    const { app, logger } = deps
    const ours = COMPONENT_ID_PREFIX
    // Socket Mode has no HTTP status to refuse with: a malformed payload is acked, logged, dropped.
    const checked = (body: unknown) => {
      const result = readSlackPayload(body)
      if (result.ok && 'payload' in result) return result.payload
      logger.warn('Refused a Slack payload', { reason: result.ok ? 'not ours' : result.reason })
      return undefined
    }
    app.action(ours, async ({ ack, body }) => {
      const payload = checked(body)
      if (payload?.type !== 'block_actions') return ack()
      await this.#ackAfter(ack, this.#onBlockActions(payload))
    })
    const onView = async ({ ack, body }: { ack: () => Promise<void>; body: unknown }) => {
      const payload = checked(body)
      if (!payload || payload.type === 'block_actions') return ack()
      await this.#ackAfter(ack, this.#onView(payload))
    }
    app.view({ callback_id: ours, type: 'view_submission' }, onView)
    app.view({ callback_id: ours, type: 'view_closed' }, onView)
    app.error(async (error) => {
      logger.error('Slack listener failed', { error })
    })
  }

  /** Resolves when no interaction is being processed. */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
  }

  get busy(): boolean {
    return this.#inflight.size > 0
  }

  async #ackAfter(ack: () => Promise<void>, work: Promise<unknown>): Promise<void> {
    const tracked = this.#track(work)
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#deps.ackDeadlineMs ?? ACK_DEADLINE_MS)
    })
    await Promise.race([tracked, deadline])
    clearTimeout(timer)
    await ack()
  }

  #track(work: Promise<unknown>): Promise<void> {
    const guarded = work
      .then(() => undefined)
      .catch((error: unknown) => this.#deps.logger.error('Slack interaction failed', { error }))
    this.#inflight.add(guarded)
    void guarded.finally(() => this.#inflight.delete(guarded))
    return guarded
  }

  /**
   * A private notice about a click, sent after its acknowledgement: what the click did is decided
   * and stored by then, and a flood of refused clicks is acknowledged without waiting on 500
   * ephemeral posts. Shutdown still waits for it (SlackNotices tracks what it sends).
   */
  #tell(userId: string, text: string, context: ActionContext): void {
    this.#deps.notices.send(userId, text, context).catch((error: unknown) => {
      this.#deps.logger.error('a Slack notice was not sent', { error })
    })
  }

  async #onBlockActions(payload: BlockActionsPayload): Promise<void> {
    const host = this.#deps.host()
    for (const action of decodeBlockActions(payload, this.#deps.now())) {
      const card = await host.getCard(action.ref)
      if (!card) {
        this.#tell(action.actor.userId, 'This question is no longer known to askbridge.', action)
        continue
      }
      await this.#dispatch(host, card, decodedOnCard(action, card), action.actor)
    }
  }

  async #onView(payload: ViewPayload): Promise<void> {
    const host = this.#deps.host()
    const ref = cardRefOf(payload)
    if (ref === undefined) return
    const card = await host.getCard(ref)
    if (!card) return
    const result = decodeView(payload, card, this.#deps.now())
    if (!result) return
    await this.#dispatch(host, card, result, { platform: 'slack', userId: payload.user.id })
  }

  async #dispatch(host: CardHost, card: CardState, result: DecodeResult, actor: Person): Promise<void> {
    switch (result.kind) {
      case 'invalid':
        this.#tell(actor.userId, result.message, result.context)
        return
      case 'modal':
        await this.#openModal(host, card, result, actor)
        return
      case 'interaction': {
        let outcome: InteractionOutcome
        try {
          outcome = await host.handle(result.inbound, card)
        } catch (error) {
          // Not stored, so not applied: say so, and the person can click again.
          this.#deps.logger.error('a Slack interaction was not applied', { error })
          this.#tell(actor.userId, notAppliedMessage(error), result.context)
          return
        }
        if (outcome.message) this.#tell(actor.userId, outcome.message, result.context)
        return
      }
    }
  }

  async #openModal(
    host: CardHost,
    card: CardState,
    result: Extract<DecodeResult, { kind: 'modal' }>,
    actor: Person,
  ): Promise<void> {
    const { notices, queues, client, logger } = this.#deps
    const { triggerId, channel } = result.context
    if (card.status !== 'open' && card.status !== 'continued') {
      const outcome = await host.handle(result.hold) // the host words the refusal for a finished card
      await notices.send(actor.userId, outcome.message ?? 'This question is closed.', result.context)
      return
    }
    if (!triggerId) return
    // Someone who may not answer is told now, not after typing a whole answer. The trigger_id
    // lasts 3 seconds: when the check is slow, the form opens and the submission decides.
    const allowed = host.mayAnswer
      ? await within(host.mayAnswer(cardRef(card), actor), FORM_CHECK_MS, { ok: true })
      : { ok: true }
    if (!allowed.ok) {
      await notices.send(actor.userId, allowed.message ?? 'You cannot answer this question.', result.context)
      return
    }
    const view =
      result.modal === 'decline'
        ? declineModal(card, channel)
        : result.modal === 'approve' || result.modal === 'reject'
          ? reasonModal(card, result.modal, channel)
          : otherModal(card, result.q, channel, actor.locale ?? this.#deps.locale)
    let opened: Awaited<ReturnType<webApi.WebClient['views']['open']>>
    try {
      opened = await queues.now('views.open', () => client.views.open({ trigger_id: triggerId, view }))
    } catch (error) {
      // Usually expired_trigger_id: the click reached us too late to open a form from it.
      const reason = slackError(error) ?? 'error'
      logger.warn('could not open a Slack form', { callId: card.callId, reason })
      await notices.send(
        actor.userId,
        `The form could not be opened (${reason}). Please click again.`,
        result.context,
      )
      return
    }
    // Typing an answer claims a timed wait, so the deadline does not pass mid-sentence.
    if (card.status === 'open' && card.deadline !== undefined) {
      const outcome: InteractionOutcome = await host.handle(result.hold)
      const viewId = opened.view?.id
      if (!outcome.ok && outcome.message && viewId) {
        await queues.now('views.update', () =>
          client.views.update({ view_id: viewId, view: noticeModal(card, outcome.message ?? '') }),
        )
      }
    }
  }
}
