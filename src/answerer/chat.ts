import { isLive, samePerson, withStatus } from '../card/lifecycle.js'
import type { CardState, Destination, Person } from '../card/types.js'
import { type Logger, silentLogger } from '../log.js'
import type { OnCallLookup } from '../oncall/lookup.js'
import { UserQuestionError } from '../protocol/errors.js'
import type { Answerer, AnswererRequest, AskUserQuestionAnswer } from '../protocol/types.js'
import { People } from '../routing/people.js'
import { ResponderPolicy } from '../routing/policy.js'
import { defaultRouter, type Router } from '../routing/types.js'
import type { UserQuestionService } from '../service/service.js'
import { callKeyOf } from '../store/fold.js'
import type { CallKey, VersionedCard } from '../store/types.js'
import type { CardHost, ChatAdapter } from './adapter.js'
import { compareAndSet } from './cas.js'
import { CardCopies } from './copies.js'
import { Delivery } from './delivery.js'
import { escalate } from './escalation.js'
import { Holds } from './holds.js'
import { handleInteraction, type InteractionDeps, mayAnswer } from './interactions.js'
import { applyLifecycle, changeOnAbort, followLifecycle } from './lifecycle.js'
import { type NoticeOutcome, type NoticeRequest, postNotice } from './notices.js'
import { callOfRef, cardOfRef, type OpenDeps, openCard } from './open.js'
import { followOtherBridges } from './replicas.js'
import { Staffer } from './staffing.js'
import { Turns } from './turns.js'
import { Waiters } from './waiters.js'

export interface ChatAnswererOptions {
  service: UserQuestionService
  adapters: ChatAdapter[]
  /** The default route's destinations (used without a router). */
  destinations?: Destination[]
  /** Routes requests to destinations, responders, quorum and escalation. @default every request to `destinations` */
  router?: Router
  /** @default Date.now */
  now?: () => number
  logger?: Logger
  /** How long a "Take my time" or an open form holds a timed wait at most. @default 600_000 */
  holdMaxMs?: number
  /** How often escalation timers are checked. 0 turns the timer off (call `tick()`). @default 15_000 */
  escalationIntervalMs?: number
  /** How long Slack group membership is cached. @default 300_000 */
  groupTtlMs?: number
  /** Who is who across platforms (the routes file's `people` map). */
  people?: People
  /** Who is on call now, for routes with `oncall` (PagerDuty). Without it those routes use their fallback. */
  oncall?: OnCallLookup
  /**
   * Several bridges on one database: how often asks waiting here re-read their cards, in case a
   * completion elsewhere was not notified. @default 2000
   */
  recheckMs?: number
}

/**
 * The chat answerer: posts a request as a card to its destinations (the same card mirrored in
 * several places), applies people's interactions to the card in the store (compare-and-set, so
 * the first complete answer wins), keeps every copy up to date, and returns the answer, or turns
 * a completion after the window into a late reply.
 */
export class ChatAnswerer {
  /** The waterfall answerer: register with `service.use(chat.answerer)`. */
  readonly answerer: Answerer
  /** What adapters call with decoded interactions. */
  readonly host: CardHost
  private readonly service: UserQuestionService
  private readonly adapters: Map<string, ChatAdapter>
  private readonly router: Router
  private readonly now: () => number
  private readonly log: Logger
  private readonly policy: ResponderPolicy
  private readonly escalationIntervalMs: number
  private readonly people: People
  private readonly staffer: Staffer
  private readonly holds: Holds
  private readonly waiters = new Waiters()
  private readonly recheckMs: number
  private readonly copies: CardCopies
  private readonly opening: OpenDeps
  private readonly delivery: Delivery
  private readonly interactions: InteractionDeps
  private escalationTimer: ReturnType<typeof setInterval> | undefined
  private readonly unsubscribe: Array<() => void> = []

  constructor(options: ChatAnswererOptions) {
    this.service = options.service
    this.adapters = new Map(options.adapters.map((a) => [a.platform, a]))
    this.router = options.router ?? defaultRouter(options.destinations ?? [])
    this.now = options.now ?? Date.now
    this.log = options.logger ?? silentLogger
    this.escalationIntervalMs = options.escalationIntervalMs ?? 15_000
    this.recheckMs = options.recheckMs ?? 2000
    this.people = options.people ?? new People()
    this.staffer = new Staffer({
      people: this.people,
      oncall: options.oncall,
      adapters: () => this.adapters.values(),
      log: this.log,
      now: this.now,
    })
    const turns = new Turns()
    const turn = () => turns.next()
    this.copies = new CardCopies({
      store: this.store,
      adapters: this.adapters,
      now: this.now,
      log: this.log,
      turn,
    })
    this.opening = {
      store: this.store,
      now: this.now,
      people: this.people,
      refresh: (callId) => this.background(this.copies.refresh(callId)),
    }
    this.holds = new Holds({
      service: this.service,
      now: this.now,
      maxMs: options.holdMaxMs ?? 600_000,
      expired: (call, person) => this.background(this.dropHolder(call, person)),
    })
    this.policy = new ResponderPolicy({
      groupMembers: async (platform, groupId) => this.adapters.get(platform)?.groupMembers?.(groupId),
      now: this.now,
      people: this.people,
      ...(options.groupTtlMs === undefined ? {} : { ttlMs: options.groupTtlMs }),
    })
    const delivery = new Delivery({
      service: this.service,
      waiters: this.waiters,
      holds: this.holds,
      log: this.log,
    })
    this.delivery = delivery
    this.interactions = {
      store: this.store,
      people: this.people,
      policy: this.policy,
      adapters: this.adapters,
      holds: this.holds,
      log: this.log,
      completed: (card, queued, answered) => delivery.completed(card, queued, answered),
      turns,
      refresh: (key) => this.background(this.copies.refresh(key)),
    }
    this.answerer = (request, next) => this.answer(request, next)
    // The cards handed to adapters, with their versions: a click decoded against one is applied
    // from that read (weakly held: a card the adapter dropped is forgotten with it).
    const handedOut = new WeakMap<CardState, VersionedCard<CardState> & CallKey>()
    this.host = {
      handle: (input, decodedOn) =>
        handleInteraction(this.interactions, input, decodedOn && handedOut.get(decodedOn)),
      getCard: async (ref) => {
        const found = await cardOfRef(this.store, ref)
        if (found) handedOut.set(found.state, found)
        return found?.state
      },
      mayAnswer: (ref, person) => mayAnswer(this.interactions, ref, person),
      renewHold: async (ref, person) => {
        const key = await callOfRef(this.store, ref)
        return key ? this.holds.renew(key, this.people.identify(person)) : false
      },
    }
  }

  private get store() {
    return this.service.store
  }

  /** Start every adapter, follow the calls' lifecycle, and resume escalation timers. */
  async start(): Promise<void> {
    this.unsubscribe.push(
      followLifecycle(this.service, (call, change) =>
        this.background(
          applyLifecycle(
            { service: this.service, holds: this.holds, mutate: (id, c) => this.mutate(id, c) },
            call,
            change,
          ),
        ),
      ),
      // Several bridges on one database: an answer given through another one reaches asks here.
      ...followOtherBridges({
        store: this.store,
        waiters: this.waiters,
        recheckMs: this.recheckMs,
        handOver: (card, answer) => this.delivery.handOver(card, answer),
        background: (work) => this.background(work),
      }),
    )
    for (const adapter of this.adapters.values()) await adapter.start(this.host)
    // A timed call recorded just before a crash may have no card yet: it came back continued and
    // needs its card to stay answerable.
    await this.cardsForContinued().catch((error: unknown) =>
      this.log.error('creating cards for continued calls failed', { error }),
    )
    // Copies a crash cut short: found and adopted, posted, or brought up to date.
    this.copies.start()
    await this.copies
      .recover()
      .catch((error: unknown) => this.log.error('recovering card copies failed', { error }))
    await this.tick()
    if (this.escalationIntervalMs > 0) {
      this.escalationTimer = setInterval(() => this.background(this.tick()), this.escalationIntervalMs)
      this.escalationTimer.unref()
    }
  }

  async stop(): Promise<void> {
    if (this.escalationTimer) clearInterval(this.escalationTimer)
    for (const off of this.unsubscribe.splice(0)) off()
    this.holds.stop()
    this.copies.stop()
    await this.copies.settled()
    for (const adapter of this.adapters.values()) await adapter.stop()
  }

  /** Post a notice without buttons where the request's route opts in (see notices.ts). */
  notice(request: NoticeRequest): Promise<NoticeOutcome> {
    const deps = {
      adapters: this.adapters,
      router: this.router,
      store: this.store,
      log: this.log,
      now: this.now,
    }
    return postNotice(deps, request)
  }

  /** Work that runs after an acknowledgement: failures are logged, never unhandled. */
  private background(work: Promise<unknown>): void {
    work.catch((error: unknown) => this.log.error('background card work failed', { error }))
  }

  // ---- the answerer ----

  private async answer(
    request: AnswererRequest,
    next: () => Promise<AskUserQuestionAnswer>,
  ): Promise<AskUserQuestionAnswer> {
    const plan = await this.staffer.staff(this.router.resolve(request))
    const destinations = plan.destinations.filter((d) => this.adapters.has(d.platform))
    if (destinations.length === 0) return next()
    // The ask ended (the caller left, the window closed) while the route was being staffed:
    // nobody waits for a card any more.
    if (request.signal.aborted) throw request.signal.reason
    // Wait first, then post: a click on the first copy while later copies are still being
    // posted (or right after a re-attach finds the card) must find someone waiting.
    const key = keyOfRequest(request)
    const waiting = this.waiters.wait(key, request.signal)
    try {
      const opened = await openCard(this.opening, request, plan, destinations)
      const card = opened.state
      if (card.status === 'answered' && card.result) {
        this.waiters.drop(key)
        return card.result
      }
      if (request.signal.aborted) {
        // It ended while the card was being opened: post nothing, and leave the card as the
        // call's end would (its event may have found no card yet). A restart keeps it as it is.
        if (this.service.closing !== 'keep') {
          const deps = { service: this.service, holds: this.holds, mutate: this.mutate.bind(this) }
          await applyLifecycle(deps, key, changeOnAbort(request.signal.reason))
        }
        throw request.signal.reason
      }
      const posted = await this.copies.post(card, destinations, { made: opened.made })
      if (posted === 0) {
        throw new UserQuestionError('PROVIDER_ERROR', 'the question could not be posted to any destination')
      }
      // A change that landed while copies were being posted found no post to update: catch up.
      // The card is posted and waited on: a failed look (storage down) refreshes to be safe
      // rather than fail the ask.
      const now = await this.store.getCard<CardState>(key).catch(() => undefined)
      if (now?.version !== opened.version) this.background(this.copies.refresh(key))
    } catch (error) {
      this.waiters.drop(key)
      throw error
    }
    return waiting
  }

  private async dropHolder(call: CallKey, person: Person): Promise<void> {
    await this.mutate(call, (card) =>
      card.holders.some((p) => samePerson(p, person))
        ? { ...card, holders: card.holders.filter((p) => !samePerson(p, person)) }
        : undefined,
    )
  }

  // ---- the call's lifecycle ----

  /**
   * Tell the cards a question was answered somewhere else (a host's own terminal UI won the race):
   * every copy says so and loses its buttons. Call it before aborting askbridge's answerer.
   * Returns false when the card was already finished or is unknown. A bare callId names the
   * `default` agent's call.
   * @example chat.answeredElsewhere({ agentId: request.agent?.id ?? 'default', callId: request.callId })
   */
  answeredElsewhere(call: CallKey | string): Promise<boolean> {
    const key = typeof call === 'string' ? { agentId: 'default', callId: call } : callKeyOf(call)
    return this.mutate(key, (card) =>
      isLive(card) ? withStatus(card, 'elsewhere', 'answered elsewhere') : undefined,
    )
  }

  private async cardsForContinued(): Promise<void> {
    for (const call of await this.store.listCalls({ states: ['continued'] })) {
      const key = callKeyOf(call)
      if (await this.store.getCard(key)) continue
      const request: AnswererRequest = {
        questions: call.questions,
        signal: new AbortController().signal,
        callId: call.callId,
        agent: this.service.agents.ensure(call.agentId),
        wait: { callId: call.callId, timed: true },
        ...(call.route === undefined ? {} : { route: call.route }),
      }
      const plan = await this.staffer.staff(this.router.resolve(request))
      const destinations = plan.destinations.filter((d) => this.adapters.has(d.platform))
      if (destinations.length === 0) continue
      await openCard(this.opening, request, plan, destinations)
      await this.mutate(key, (card) => (card.status === 'open' ? withStatus(card, 'continued') : undefined))
    }
  }

  /** Compare-and-set a change (`change` returns undefined for none) and update every copy. */
  private mutate(call: CallKey, change: (card: CardState) => CardState | undefined): Promise<boolean> {
    const key = callKeyOf(call)
    return compareAndSet(
      this.store,
      key,
      (current) => {
        const next = current ? change(current.state) : undefined
        if (!current || !next) return { done: false }
        return {
          write: next,
          // Only lifecycle changes are audited as such; an escalation tier or a holder leaving is not one.
          ...(next.status === current.state.status
            ? {}
            : { audit: [{ ...key, kind: `status:${next.status}` }] }),
          after: () => {
            this.background(this.copies.refresh(key))
            return true
          },
        }
      },
      () => false,
    )
  }

  /** Bring every copy of a card up to date (see copies.ts). */
  refresh(call: CallKey): Promise<void> {
    return this.copies.refresh(call)
  }

  /** Fire escalation tiers that are due (see escalation.ts); also run by a timer. */
  async tick(): Promise<void> {
    await this.delivery
      .deliverAnswered()
      .catch((error: unknown) => this.log.warn('handing stored answers over failed', { error }))
    return escalate({
      store: this.store,
      now: this.now,
      log: this.log,
      staffer: this.staffer,
      mutate: (call, change) => this.mutate(call, change),
      postCopies: (card, destinations, keySuffix) => this.copies.post(card, destinations, { keySuffix }),
    })
  }
}

/** A request's call key (a request without an agent is the `default` agent's). */
function keyOfRequest(request: AnswererRequest): CallKey {
  return { agentId: request.agent?.id ?? 'default', callId: request.callId }
}
