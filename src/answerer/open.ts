import { type CardRef, refMatches } from '../card/codec.js'
import { prepareFields } from '../card/fields.js'
import { newCard } from '../card/lifecycle.js'
import type { CardState, Destination, OnCallShown } from '../card/types.js'
import { UserQuestionError } from '../protocol/errors.js'
import type { AnswererRequest } from '../protocol/types.js'
import type { People } from '../routing/people.js'
import type { RoutePlan } from '../routing/types.js'
import { callKeyOf } from '../store/fold.js'
import type { CallKey, Store, VersionedCard } from '../store/types.js'
import { compareAndSet } from './cas.js'

export interface OpenDeps {
  store: Store
  now: () => number
  people: People
  /** Bring the copies already posted up to date (in the background). */
  refresh: (call: CallKey) => void
}

/** A card as {@link openCard} left it. */
export interface OpenedCard extends VersionedCard<CardState> {
  /** Made by this ask where no card was stored: it has no copies yet. */
  made: boolean
}

/**
 * The card for this call: the live one (a re-attach, also after a restart) or a new one. An ask
 * usually finds no card, so the first attempt makes one without reading: when a card is stored
 * after all, that write fails its compare-and-set and the card is read and decided on.
 */
export async function openCard(
  deps: OpenDeps,
  request: AnswererRequest,
  plan: RoutePlan & { shown?: OnCallShown },
  destinations: Destination[],
): Promise<OpenedCard> {
  const { callId } = request
  const key = { agentId: request.agent?.id ?? 'default', callId }
  // A hook's question: the whole tool input the hook kept, which the card's digest covers.
  const toolInput = request.tool ? await hookToolInput(deps.store, key) : undefined
  return compareAndSet<OpenedCard>(
    deps.store,
    key,
    (existing) => {
      const same = existing && sameQuestions(existing.state, request) ? existing.state.status : undefined
      // A re-attach (also after a restart) finds the live card, or the answer it already has.
      if (existing && (same === 'open' || same === 'answered')) return { done: { ...existing, made: false } }
      if (existing && same === 'continued') {
        // A continued card asked again: the agent waits for it once more.
        const reopened: CardState = { ...existing.state, status: 'open' }
        return {
          write: reopened,
          after: (version) => {
            deps.refresh(key)
            return { state: reopened, version, made: false }
          },
        }
      }
      const card = buildCard(deps, request, plan, destinations, toolInput)
      return {
        write: card,
        audit: [{ ...key, kind: 'asked', detail: { route: plan.name } }],
        after: (version) => {
          // A reused callId: copies already posted show the new card.
          if (existing) deps.refresh(key)
          return { state: card, version, made: !existing }
        },
      }
    },
    () => {
      throw new UserQuestionError('PROVIDER_ERROR', `card for call "${callId}" kept changing`)
    },
    { card: undefined },
  )
}

function buildCard(
  deps: OpenDeps,
  request: AnswererRequest,
  plan: RoutePlan & { shown?: OnCallShown },
  destinations: Destination[],
  toolInput: unknown,
): CardState {
  // Whom the agent acts for: its token's requester, else the `people` entry that runs it.
  const requester = request.agent?.requester ?? deps.people.requesterOf(request.agent?.id ?? 'default')
  const card = newCard({
    callId: request.callId,
    agentId: request.agent?.id ?? 'default',
    questions: request.questions,
    now: deps.now(),
    ...(request.deadline === undefined ? {} : { deadline: request.deadline }),
    quorum: plan.quorum,
    ...(plan.responders ? { responders: plan.responders } : {}),
    ...(plan.excludeRequester && requester ? { excluded: deps.people.identify(requester) } : {}),
    route: plan.name,
    ...(request.form ? { form: request.form } : {}),
    ...(toolInput === undefined ? {} : { toolInput }),
  })
  card.destinations = destinations
  if (card.fields) prepareFields(card.fields)
  if (plan.escalation.length > 0) card.escalation = plan.escalation
  if (plan.shown) card.oncall = [plan.shown]
  return card
}

/** A hook's whole tool input, from the `hook` audit entry it wrote before asking. */
async function hookToolInput(store: Store, key: CallKey): Promise<unknown> {
  const hook = (await store.listAudit({ callId: key.callId })).find(
    (e) => e.kind === 'hook' && (e.agentId === undefined || e.agentId === key.agentId),
  )
  return (hook?.detail as { tool_input?: unknown } | undefined)?.tool_input
}

/**
 * Whether a stored card asks what this request asks (a re-attach), not a reused callId. The
 * stored questions went through JSON, so the request's are compared the same way.
 */
function sameQuestions(card: CardState, request: AnswererRequest): boolean {
  return JSON.stringify(card.questions) === JSON.stringify(request.questions)
}

/** The call a component names: the card with that callId whose agent has the reference's tag. */
export async function callOfRef(store: Store, ref: CardRef): Promise<CallKey | undefined> {
  const card = await cardOfRef(store, ref)
  return card ? callKeyOf(card) : undefined
}

/**
 * The card a component names (see {@link callOfRef}): as this process last wrote it, when the store
 * still remembers that (a decision on it is checked by its compare-and-set), or as stored now.
 * `stored`: as stored now, for a decision that no compare-and-set will check.
 */
export async function cardOfRef(
  store: Store,
  ref: CardRef,
  { stored = false } = {},
): Promise<(VersionedCard<CardState> & CallKey) | undefined> {
  const written = stored
    ? undefined
    : store.writtenCards<CardState>(ref.callId).find((c) => refMatches(ref, c))
  return written ?? (await store.findCards<CardState>(ref.callId)).find((c) => refMatches(ref, c))
}
