import type { CardState } from '../card/types.js'
import type { Logger } from '../log.js'
import type { AskUserQuestionAnswer, AskUserQuestionAnswerItem, LateReply } from '../protocol/types.js'
import type { UserQuestionService } from '../service/service.js'
import { callKeyOf } from '../store/fold.js'
import type { Holds } from './holds.js'
import type { Waiters } from './waiters.js'

export interface DeliveryDeps {
  service: UserQuestionService
  waiters: Waiters
  holds: Holds
  log: Logger
}

/**
 * Where a card's answer goes once a person completed it: to the ask waiting here, or, when the
 * call was continued, to the agent as a late reply.
 */
export class Delivery {
  constructor(private readonly deps: DeliveryDeps) {}

  private get store() {
    return this.deps.service.store
  }

  /**
   * A card just completed (stored with its `completed` audit entry): a continued call's late
   * reply was queued in that commit (`queued`), tell who follows replies; else hand the answer to
   * the ask waiting here (none here: the ask waiting elsewhere, or re-attaching, reads the card).
   * `answered`: the commit settled the open call with these answers, which that ask returns as
   * they are (no read of the call back).
   */
  async completed(
    card: CardState,
    queued: LateReply | undefined,
    answered?: AskUserQuestionAnswerItem[],
  ): Promise<void> {
    const key = callKeyOf(card)
    this.deps.holds.releaseAll(key)
    if (queued) {
      this.deps.service.emit('reply', { agentId: card.agentId, callId: card.callId, reply: queued })
      return
    }
    if (answered) this.deps.service.settledByCard(key, answered)
    if (card.result) this.handOver(card, card.result)
  }

  /**
   * Resolve the ask waiting here with its card's answer; false when none waits here. The card's
   * commit already decided what the answer is to the call (answered it, or queued it as the late
   * reply when the window had closed): a window closing in the same instant finds that decision.
   */
  handOver(card: CardState, answer: AskUserQuestionAnswer): boolean {
    return this.deps.waiters.resolve(callKeyOf(card), answer)
  }

  private async deliverLate(card: CardState, answer: AskUserQuestionAnswer): Promise<void> {
    const call = await this.deps.service.getCall(callKeyOf(card))
    if (call?.state !== 'continued') return // open blocking call: the re-attached ask collects it
    try {
      await this.deps.service.answer(card.agentId, card.callId, answer)
    } catch (error) {
      this.deps.log.warn('late answer not queued', { ...callKeyOf(card), error })
    }
  }

  /**
   * An answer the card holds that never reached the agent (the process died between storing the
   * click and recording the answer, or the store refused the late reply): a continued call
   * without a queued reply gets it now as a late reply. Runs at start and on every tick.
   */
  async deliverAnswered(): Promise<void> {
    // Answered cards of continued calls only: live calls, not every answer in history.
    const cards = await this.store.listCards<CardState>({ statuses: ['answered'], callStates: ['continued'] })
    for (const { state: card } of cards) {
      const key = callKeyOf(card)
      if (!card.result || this.deps.waiters.has(key)) continue
      const call = await this.deps.service.getCall(key)
      if (call?.state !== 'continued' || call.queuedReply) continue
      this.deps.log.info('handing a stored answer to the agent as a late reply', { ...key })
      await this.deliverLate(card, card.result)
    }
  }
}
