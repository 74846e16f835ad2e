import { isLive, withStatus } from '../card/lifecycle.js'
import type { CardState } from '../card/types.js'
import { asUserQuestionError } from '../protocol/errors.js'
import type { UserQuestionService } from '../service/service.js'
import { callKeyOf } from '../store/fold.js'
import type { CallKey } from '../store/types.js'
import type { Holds } from './holds.js'

/** What a card does when its call moves on. */
export type LifecycleChange =
  | { status: 'continued' }
  | { status: 'cancelled'; reason: string }
  | { status: 'elsewhere'; reason: string }
  /** A late reply was discarded: the card takes answers again. */
  | { status: 'reopened' }

/**
 * The one path that keeps cards in step with their call: the service's events, for calls this
 * process waits on and for restored ones alike. (A restart is not among them: the service emits
 * nothing for calls it keeps, so their cards stay as they are.) Returns the unsubscribe.
 */
export function followLifecycle(
  service: UserQuestionService,
  apply: (call: CallKey, change: LifecycleChange) => void,
): () => void {
  const onPending = (call: CallKey) => apply(call, { status: 'continued' })
  const onDropped = (call: CallKey, code: string, failure?: unknown) =>
    apply(call, { status: 'cancelled', reason: dropReason(code, failure) })
  // Answered by another answerer, or a late answer given through the API; not by the card itself,
  // which its own commit already shows answered.
  const onAnswered = (call: CallKey, _answers: unknown, via?: 'card') => {
    if (via !== 'card') apply(call, { status: 'elsewhere', reason: 'answered elsewhere' })
  }
  const onReply = (reply: CallKey) =>
    apply(callKeyOf(reply), { status: 'elsewhere', reason: 'answered elsewhere' })
  const onDiscarded = (reply: CallKey) => apply(callKeyOf(reply), { status: 'reopened' })
  service.on('pending', onPending)
  service.on('dropped', onDropped)
  service.on('answered', onAnswered)
  service.on('reply', onReply)
  service.on('replyDiscarded', onDiscarded)
  return () => {
    service.off('pending', onPending)
    service.off('dropped', onDropped)
    service.off('answered', onAnswered)
    service.off('reply', onReply)
    service.off('replyDiscarded', onDiscarded)
  }
}

/**
 * What a card becomes when its ask's waterfall signal aborted with `reason`: continued when the
 * timed window closed, else cancelled, in the words the `dropped` event would give.
 */
export function changeOnAbort(reason: unknown): LifecycleChange {
  const code = asUserQuestionError(reason)?.code
  if (code === 'ASK_TIMED_OUT') return { status: 'continued' }
  return { status: 'cancelled', reason: dropReason(code ?? 'ASK_ABORTED', reason) }
}

/**
 * What a cancelled card says: "cancelled" for a cancel, the caller's own words when it stopped
 * waiting because its time ran out (a hook), else "withdrawn".
 */
function dropReason(code: string, failure: unknown): string {
  if (code === 'ASK_CANCELLED') return 'cancelled'
  const cause = asUserQuestionError((failure as { cause?: unknown } | undefined)?.cause)
  return cause?.code === 'ASK_TIMED_OUT' ? cause.message : 'withdrawn'
}

export interface LifecycleDeps {
  service: UserQuestionService
  holds: Holds
  /** Compare-and-set a change to a card (undefined: none) and update every copy. */
  mutate: (call: CallKey, change: (card: CardState) => CardState | undefined) => Promise<boolean>
}

/** The one place a call's lifecycle reaches its cards: status, holds, every copy updated. */
export async function applyLifecycle(deps: LifecycleDeps, call: CallKey, change: LifecycleChange) {
  if (change.status === 'reopened') return reopen(deps, call)
  const { status } = change
  await deps.mutate(call, (card) => {
    if (!isLive(card) || card.status === status) return undefined
    if (status === 'continued' && card.status !== 'open') return undefined
    return withStatus(card, status, 'reason' in change ? change.reason : undefined)
  })
  if (status !== 'continued') deps.holds.releaseAll(call)
}

/** A discarded late reply: the card takes answers again, from a clean slate. */
async function reopen(deps: LifecycleDeps, key: CallKey): Promise<void> {
  const call = await deps.service.getCall(key)
  if (call?.state !== 'continued' || call.queuedReply) return
  await deps.mutate(key, (card) => {
    if (card.status !== 'answered' && card.status !== 'elsewhere') return undefined
    const { result: _r, answeredBy: _b, answeredAt: _a, closedReason: _c, ...rest } = card
    return { ...rest, status: 'continued', drafts: {}, approvals: [], holders: [] }
  })
}
