import { applyInteraction } from '../card/apply.js'
import { type CardRef, refMatches } from '../card/codec.js'
import { finishedRefusal, isLive } from '../card/lifecycle.js'
import type { CardState, Person } from '../card/types.js'
import { AskbridgeError } from '../errors.js'
import type { Logger } from '../log.js'
import { asUserQuestionError } from '../protocol/errors.js'
import type { AskUserQuestionAnswerItem, LateReply } from '../protocol/types.js'
import { checkAnswer } from '../protocol/validate.js'
import type { People } from '../routing/people.js'
import type { ResponderPolicy } from '../routing/policy.js'
import { replyDecision } from '../service/replies.js'
import { callKeyOf } from '../store/fold.js'
import type { AuditEntry, CallKey, CallRecord, Store, StoreEvent, VersionedCard } from '../store/types.js'
import type { ChatAdapter, InboundInteraction, InteractionOutcome } from './adapter.js'
import { compareAndSet } from './cas.js'
import type { Holds } from './holds.js'
import { cardOfRef } from './open.js'
import type { Turns } from './turns.js'

const NOT_ALLOWED = 'You are not one of the people who may answer this question.'
const GONE = 'This question is no longer available.'

export interface InteractionDeps {
  store: Store
  people: People
  policy: ResponderPolicy
  adapters: Map<string, ChatAdapter>
  holds: Holds
  log: Logger
  /**
   * A click completed the card (its `completed` audit entry is written, and in the same commit
   * `queued`, the late reply of a continued call, or `answered`, the answers an open call settled
   * with): hand its answer over (see delivery.ts).
   */
  completed: (
    card: CardState,
    queued: LateReply | undefined,
    answered: AskUserQuestionAnswerItem[] | undefined,
  ) => Promise<void>
  /** When work that follows an acknowledgement may start (see turns.ts). */
  turns: Turns
  /** Bring every copy of the card up to date, after the acknowledgement. */
  refresh: (call: CallKey) => void
}

/** The actor an audit entry names. */
function auditActor(person: Person): NonNullable<AuditEntry['actor']> {
  return { platform: person.platform, userId: person.userId, ...(person.name ? { name: person.name } : {}) }
}

/** The audit entry of a person's interaction (a click, a form), applied or refused. */
function interactionEntry(
  key: CallKey | { callId: string },
  person: Person,
  detail: unknown,
  refused: boolean,
  code?: string,
  shown?: string,
): AuditEntry {
  return {
    ...key,
    kind: 'interaction',
    platform: person.platform,
    actor: auditActor(person),
    detail,
    refused,
    ...(code ? { code } : {}),
    ...(shown ? { shown } : {}),
  }
}

/** Why `person` may not act on this card now (it is finished, or they may not answer), if so. */
async function barrier(
  deps: InteractionDeps,
  card: CardState,
  person: Person,
): Promise<{ code: string; message: string } | undefined> {
  if (!isLive(card)) return { code: 'finished', message: finishedRefusal(card).message }
  if (!(await deps.policy.allows(card, person))) return { code: 'not-allowed', message: NOT_ALLOWED }
  return undefined
}

const GONE_CALL = 'This question is no longer waiting for an answer.'
const QUEUED = 'Another answer to this question already reached the agent.'

/** Why a completing answer is refused by the card's call (thrown inside the card's commit). */
class CallRefusal extends AskbridgeError {
  override readonly name = 'CallRefusal'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * What an answer completing a card does to its call, in the card's commit: an open call is
 * answered (the ask waiting on it returns the stored answer, and a window closing meanwhile finds
 * the call settled: see `UserQuestionService`); a continued call queues it as the late reply (the
 * one rule, replies.ts), refused when a reply already waits; a finished call refuses it.
 */
function completionStep(
  call: CallRecord | undefined,
  card: CardState,
): { events: StoreEvent[]; result: LateReply | undefined } {
  if (!call) return { events: [], result: undefined }
  if (call.state === 'open') {
    const { answers } = checkAnswer(call.questions, card.result)
    return {
      events: [{ type: 'answered', agentId: card.agentId, callId: card.callId, answers }],
      result: undefined,
    }
  }
  if (call.state !== 'continued') throw new CallRefusal('finished', GONE_CALL)
  return replyDecision(call, card.agentId, card.callId, card.result)
}

/** The refusal a completing click gets when its call said no; undefined for any other failure. */
function completionRefusal(error: unknown): { code: string; message: string } | undefined {
  if (error instanceof CallRefusal) return { code: error.code, message: error.message }
  const coded = asUserQuestionError(error)
  if (coded?.code === 'REPLY_QUEUED') return { code: 'reply-queued', message: QUEUED }
  return undefined
}

/** The audit entry of a card's completion: who answered, what, and the digest of what they saw. */
function completedEntry(card: CardState, shown: string): AuditEntry {
  return {
    ...callKeyOf(card),
    kind: 'completed',
    shown,
    ...(card.answeredBy ? { actor: card.answeredBy, platform: card.answeredBy.platform } : {}),
    // A reason typed with Approve or Reject is askbridge's own note beside the answer.
    detail: card.reason && card.result ? { ...card.result, reason: card.reason } : card.result,
  }
}

/**
 * Write an audit entry. A failing audit write must not turn an applied click into an error,
 * nor hide a refusal from the person: it is logged instead.
 */
export async function auditSafely(deps: { store: Store; log: Logger }, entry: AuditEntry): Promise<void> {
  try {
    await deps.store.audit(entry)
  } catch (error) {
    deps.log.warn('audit entry not written', { callId: entry.callId, kind: entry.kind, error })
  }
}

/** Whether a person may open a form on this card; a refusal is audited like a refused click. */
export async function mayAnswer(
  deps: InteractionDeps,
  ref: CardRef,
  person: Person,
): Promise<{ ok: boolean; message?: string }> {
  deps.turns.interaction()
  // A refusal here is final (no compare-and-set follows), so it is decided on the card as stored.
  const card = (await cardOfRef(deps.store, ref, { stored: true }))?.state
  const refuse = async (code: string, message: string) => {
    const key = card ? callKeyOf(card) : { callId: ref.callId }
    await auditSafely(deps, interactionEntry(key, person, { type: 'form' }, true, code))
    return { ok: false, message }
  }
  if (!card) return refuse('unknown-call', GONE)
  const barred = await barrier(deps, card, deps.people.identify(person))
  return barred ? refuse(barred.code, barred.message) : { ok: true }
}

/**
 * Apply a person's interaction to the card in the store (compare-and-set, so the first complete
 * answer wins), audit it, and, when it completed the card, hand the answer over.
 */
export async function handleInteraction(
  deps: InteractionDeps,
  input: InboundInteraction,
  /** The card as the caller just read it for this reference, if it did. */
  read?: VersionedCard<CardState> & CallKey,
): Promise<InteractionOutcome> {
  deps.turns.interaction()
  const found = read && refMatches(input, read) ? read : await cardOfRef(deps.store, input)
  const key = found ? callKeyOf(found) : undefined
  // One person is one approver, whichever platform (or signed-in inbox) they answer from.
  const actor = deps.people.identify(input.interaction.actor)
  const interaction = { ...input.interaction, actor }
  // What the person was shown, kept with their decision (taken when the card was made).
  const shown = found?.state.shown
  const entry = (refused: boolean, code?: string) =>
    interactionEntry(key ?? { callId: input.callId }, actor, interaction.action, refused, code, shown)
  const refuse = async (code: string, message: string, card?: CardState) => {
    await auditSafely(deps, entry(true, code))
    return { done: { ok: false, message, ...(card ? { card } : {}) } }
  }
  if (!key) return (await refuse('unknown-call', GONE)).done
  return compareAndSet<InteractionOutcome>(
    deps.store,
    key,
    async (current) => {
      if (!current) return refuse('unknown-call', GONE)
      const card = current.state
      // Decided on a remembered card, only a write stands (its compare-and-set checks the card);
      // a refusal or "already done" is decided again on the card as stored, before it is audited.
      const unless = <R>(outcome: () => R) => (current.remembered ? { reread: true as const } : outcome())
      if (card.seen.includes(interaction.id)) return unless(() => ({ done: { ok: true, card } }))
      const barred = await barrier(deps, card, actor)
      if (barred) return unless(() => refuse(barred.code, barred.message, card))
      const result = applyInteraction(card, interaction)
      if (!result.ok) return unless(() => refuse(result.refusal.code, result.refusal.message, card))
      if (result.duplicate) return unless(() => ({ done: { ok: true, card } }))
      const next = result.state
      // An answer completing the card is decided on its call in the same commit: queued as the
      // reply of a continued call, or left to the ask waiting on an open one. Whoever got there
      // first (an answer through the API, another surface) makes this click a refusal.
      let queued: LateReply | undefined
      // The answers the commit stores on an open call (the ask waiting on it returns them).
      let answered: AskUserQuestionAnswerItem[] | undefined
      const call = result.completed
        ? (row: CallRecord | undefined) => {
            const step = completionStep(row, next)
            queued = step.result
            const [event] = step.events
            answered = event?.type === 'answered' ? event.answers : undefined
            return step.events
          }
        : undefined
      return {
        write: next,
        // The click, and the answer it completed, are recorded in the card's own commit.
        audit: result.completed ? [entry(false), completedEntry(next, shown ?? '')] : [entry(false)],
        ...(call
          ? {
              call,
              // The call said no (see `completionStep`): this click is refused, and audited so.
              refused: (error: unknown) => {
                const refusal = completionRefusal(error)
                return refusal && refuse(refusal.code, refusal.message, card).then((r) => r.done)
              },
            }
          : {}),
        after: async () => {
          const type = interaction.action.type
          // A surface that renews holds (the inbox's heartbeat) gives them a lease.
          const lease = deps.adapters.get(input.interaction.actor.platform)?.holdLeaseMs
          if (type === 'hold') deps.holds.claim(next, actor, lease)
          if (type === 'release') deps.holds.release(key, actor)
          // Stored: from here on the click is applied, whatever else fails. The answer reaches the
          // agent now, in the turn it became durable (a late reply was queued in the same commit);
          // re-rendering the copies comes after.
          if (result.completed) {
            deps
              .completed(next, queued, answered)
              .catch((error: unknown) =>
                deps.log.warn('answer stored but not handed over yet', { ...key, error }),
              )
          }
          deps.refresh(key)
          return {
            ok: true,
            card: next,
            updating: true,
            ...(result.notice ? { message: result.notice } : {}),
          }
        },
      }
    },
    () => ({ ok: false, message: 'This question is busy; please try again.' }),
    found && { card: found },
  )
}
