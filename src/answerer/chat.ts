import { applyInteraction, finishedRefusal, isLive, newCard, samePerson, withStatus } from '../card/apply.js'
import type {
  CardState,
  Destination,
  EscalationTier,
  OnCallShown,
  Person,
  Responders,
} from '../card/types.js'
import { type Logger, silentLogger } from '../log.js'
import type { OnCallLookup } from '../oncall/lookup.js'
import { People } from '../oncall/people.js'
import { asUserQuestionError, UserQuestionError } from '../protocol/errors.js'
import type { Answerer, AnswererRequest, AskUserQuestionAnswer } from '../protocol/types.js'
import { ResponderPolicy } from '../routing/policy.js'
import { mentionFits } from '../routing/routes.js'
import { defaultRouter, type OnCallRule, type RoutePlan, type Router } from '../routing/types.js'
import type { UserQuestionService } from '../service/service.js'
import {
  type CardHost,
  type ChatAdapter,
  destinationKey,
  type InboundInteraction,
  type InteractionOutcome,
} from './adapter.js'

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
}

/** What an on-call look-up adds to a card: mentions per platform, responders, and what the card shows. */
interface Staffing {
  shown: OnCallShown
  mention: { slack: string[]; discord: string[] }
  responders: Responders
}

interface Waiter {
  resolve: (answer: AskUserQuestionAnswer) => void
  /** Stop waiting without an answer (the ask failed before it could wait). */
  drop: () => void
  signal: AbortSignal
}

const CAS_ATTEMPTS = 20
const NOT_ALLOWED = 'You are not one of the people who may answer this question.'

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
  private readonly holdMaxMs: number
  private readonly escalationIntervalMs: number
  private readonly people: People
  private readonly oncall: OnCallLookup | undefined
  private readonly waiters = new Map<string, Waiter>()
  private readonly holds = new Map<
    string,
    { controller: AbortController; timer: ReturnType<typeof setTimeout> }
  >()
  private readonly updates = new Map<string, { dirty: boolean; promise: Promise<void> }>()
  private escalationTimer: ReturnType<typeof setInterval> | undefined
  private readonly unsubscribe: Array<() => void> = []

  constructor(options: ChatAnswererOptions) {
    this.service = options.service
    this.adapters = new Map(options.adapters.map((a) => [a.platform, a]))
    this.router = options.router ?? defaultRouter(options.destinations ?? [])
    this.now = options.now ?? Date.now
    this.log = options.logger ?? silentLogger
    this.holdMaxMs = options.holdMaxMs ?? 600_000
    this.escalationIntervalMs = options.escalationIntervalMs ?? 15_000
    this.people = options.people ?? new People()
    this.oncall = options.oncall
    this.policy = new ResponderPolicy({
      groupMembers: async (platform, groupId) => this.adapters.get(platform)?.groupMembers?.(groupId),
      now: this.now,
      people: this.people,
      ...(options.groupTtlMs === undefined ? {} : { ttlMs: options.groupTtlMs }),
    })
    this.answerer = (request, next) => this.answer(request, next)
    this.host = {
      handle: (input) => this.handle(input),
      getCard: async (callId) => (await this.store.getCard<CardState>(callId))?.state,
      mayAnswer: async (callId, person) => {
        const card = (await this.store.getCard<CardState>(callId))?.state
        if (!card) return { ok: false, message: 'This question is no longer available.' }
        if (!isLive(card)) return { ok: false, message: finishedRefusal(card).message }
        if (!(await this.policy.allows(card, this.people.identify(person))))
          return { ok: false, message: NOT_ALLOWED }
        return { ok: true }
      },
    }
  }

  private get store() {
    return this.service.store
  }

  /** Start every adapter, follow the service's lifecycle events, and resume escalation timers. */
  async start(): Promise<void> {
    // Restored continued calls, cancellations of continued calls, and answers from other answerers.
    const onPending = (callId: string) => this.background(this.setStatus(callId, 'continued'))
    const onDropped = (callId: string) => this.background(this.setStatus(callId, 'cancelled', 'cancelled'))
    const onAnswered = (callId: string) =>
      this.background(this.setStatus(callId, 'elsewhere', 'answered elsewhere'))
    // A late answer given through the API (not a card): the cards say it was answered elsewhere.
    const onReply = ({ callId }: { callId: string }) =>
      this.background(this.setStatus(callId, 'elsewhere', 'answered elsewhere'))
    // The agent discarded the reply: the question is answerable again, so the cards come back.
    const onDiscarded = ({ callId }: { callId: string }) => this.background(this.reopen(callId))
    this.service.on('pending', onPending)
    this.service.on('dropped', onDropped)
    this.service.on('answered', onAnswered)
    this.service.on('reply', onReply)
    this.service.on('replyDiscarded', onDiscarded)
    this.unsubscribe.push(() => {
      this.service.off('pending', onPending)
      this.service.off('dropped', onDropped)
      this.service.off('answered', onAnswered)
      this.service.off('reply', onReply)
      this.service.off('replyDiscarded', onDiscarded)
    })
    for (const adapter of this.adapters.values()) await adapter.start(this.host)
    await this.tick()
    if (this.escalationIntervalMs > 0) {
      this.escalationTimer = setInterval(() => this.background(this.tick()), this.escalationIntervalMs)
      this.escalationTimer.unref()
    }
  }

  async stop(): Promise<void> {
    if (this.escalationTimer) clearInterval(this.escalationTimer)
    for (const off of this.unsubscribe.splice(0)) off()
    for (const hold of this.holds.values()) {
      clearTimeout(hold.timer)
      hold.controller.abort()
    }
    this.holds.clear()
    await Promise.allSettled([...this.updates.values()].map((u) => u.promise))
    for (const adapter of this.adapters.values()) await adapter.stop()
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
    const plan = await this.staff(this.router.resolve(request))
    const destinations = plan.destinations.filter((d) => this.adapters.has(d.platform))
    if (destinations.length === 0) return next()
    // Wait first, then post: a click on the first copy while later copies are still being
    // posted (or right after a re-attach finds the card) must find someone waiting.
    const waiting = this.waitFor(request)
    try {
      const card = await this.openCard(request, plan, destinations)
      if (card.status === 'answered' && card.result) {
        this.waiters.get(request.callId)?.drop()
        return card.result
      }
      const posted = await this.postCopies(card, destinations)
      if (posted === 0) {
        throw new UserQuestionError('PROVIDER_ERROR', 'the question could not be posted to any destination')
      }
      // A change that landed while copies were being posted found no post to update: catch up.
      const now = await this.store.getCard<CardState>(card.callId)
      if (now && JSON.stringify(now.state) !== JSON.stringify(card))
        this.background(this.refresh(card.callId))
    } catch (error) {
      this.waiters.get(request.callId)?.drop()
      throw error
    }
    return waiting
  }

  // ---- people and on-call ----

  /**
   * The plan with people filled in: responders listed by e-mail get their Slack accounts (so the
   * card names them), and an on-call route gets whoever is on call now mentioned and allowed.
   */
  private async staff(plan: RoutePlan): Promise<RoutePlan & { shown?: OnCallShown }> {
    let responders = plan.responders
    for (const email of responders?.emails ?? []) {
      const slack = await this.slackIdOf(email)
      if (slack) responders = mergeResponders(responders, { slack: { users: [slack] } })
    }
    if (!plan.oncall) return responders ? { ...plan, responders } : plan
    const staffing = await this.onCall(plan.oncall, 1)
    return {
      ...plan,
      destinations: plan.destinations.map((d) => withMentions(d, staffing.mention)),
      // Only the people on call (and the route's own responders) answer; the inbox without
      // sign-in cannot tell who someone is, so it answers only when the route says `web: true`.
      responders: mergeResponders({ ...responders, web: responders?.web === true }, staffing.responders),
      shown: staffing.shown,
    }
  }

  /** A Slack user id for an address: the `people` map, else Slack's users.lookupByEmail. */
  private async slackIdOf(email: string): Promise<string | undefined> {
    const known = this.people.accounts(email).slack
    if (known) return known
    const slack = this.adapters.get('slack')
    if (!slack?.lookupByEmail) return undefined
    try {
      const id = await slack.lookupByEmail(email)
      if (id) this.people.learn('slack', id, email)
      return id
    } catch (error) {
      this.log.warn('Slack e-mail look-up failed', { error })
      return undefined
    }
  }

  /** Who is on call for a rule at a level: mentions, responders, and what the card says. */
  private async onCall(rule: OnCallRule, level: number): Promise<Staffing> {
    const found = this.oncall
      ? await this.oncall.lookup(rule.pagerduty, level)
      : { source: 'fallback' as const, people: [], at: this.now() }
    const mention: Staffing['mention'] = { slack: [], discord: [] }
    let responders: Responders = {}
    if (found.source === 'fallback') {
      for (const m of rule.fallback) {
        const [kind, id = ''] = m.split(':')
        if (mentionFits('slack', m)) {
          mention.slack.push(m)
          responders = mergeResponders(responders, {
            slack: kind === 'subteam' ? { groups: [id] } : { users: [id] },
          })
        } else if (mentionFits('discord', m)) {
          mention.discord.push(m)
          responders = mergeResponders(responders, {
            discord: kind === 'role' ? { roles: [id] } : { users: [id] },
          })
        }
      }
    }
    for (const person of found.people) {
      responders = mergeResponders(responders, { emails: [person.email] })
      const slack = await this.slackIdOf(person.email)
      if (slack) {
        mention.slack.push(`user:${slack}`)
        responders = mergeResponders(responders, { slack: { users: [slack] } })
      }
      const discord = this.people.accounts(person.email).discord
      if (discord) {
        mention.discord.push(`user:${discord}`)
        responders = mergeResponders(responders, { discord: { users: [discord] } })
      }
      if (!slack && !discord) {
        this.log.warn('an on-call person has no Slack or Discord account askbridge knows', { level })
      }
    }
    if (found.source === 'fallback' && rule.fallback.length === 0) {
      this.log.error(
        'PagerDuty is unreachable and the route has no oncall.fallback: only its other responders may answer',
      )
    }
    return {
      shown: { level, source: found.source, names: found.people.map((p) => p.name), at: found.at },
      mention,
      responders,
    }
  }

  /** Register the waiting ask: resolved by a completion, rejected when its signal aborts. */
  private waitFor(request: AnswererRequest): Promise<AskUserQuestionAnswer> {
    const waiting = new Promise<AskUserQuestionAnswer>((resolve, reject) => {
      const { signal } = request
      const finish = () => {
        if (this.waiters.get(request.callId) === waiter) this.waiters.delete(request.callId)
        signal.removeEventListener('abort', onAbort)
      }
      const onAbort = () => {
        finish()
        // A restart is not a cancellation: the card stays as it is and keeps working afterwards.
        if (this.service.closing === 'keep') return reject(signal.reason)
        const code = asUserQuestionError(signal.reason)?.code
        if (code === 'ASK_TIMED_OUT') this.background(this.setStatus(request.callId, 'continued'))
        else {
          // A caller that stops waiting with ASK_TIMED_OUT (a hook whose time ran out) moved on:
          // the card says so in the caller's words.
          const cause = asUserQuestionError((signal.reason as { cause?: unknown } | undefined)?.cause)
          const movedOn = cause?.code === 'ASK_TIMED_OUT' ? cause.message : undefined
          const reason = code === 'ASK_CANCELLED' ? 'cancelled' : (movedOn ?? 'withdrawn')
          this.background(this.setStatus(request.callId, 'cancelled', reason))
        }
        reject(signal.reason)
      }
      const waiter: Waiter = {
        signal,
        resolve: (answer) => {
          finish()
          resolve(answer)
        },
        drop: finish,
      }
      if (signal.aborted) return onAbort()
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiters.set(request.callId, waiter)
    })
    // Until it is returned, a rejection (an abort while posting) must not go unhandled.
    waiting.catch(() => {})
    return waiting
  }

  /** The card for this call: the live one (a re-attach, also after a restart) or a new one. */
  private async openCard(
    request: AnswererRequest,
    plan: RoutePlan & { shown?: OnCallShown },
    destinations: Destination[],
  ): Promise<CardState> {
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const existing = await this.store.getCard<CardState>(request.callId)
      const same = existing && JSON.stringify(existing.state.questions) === JSON.stringify(request.questions)
      if (existing && same && (isLive(existing.state) || existing.state.status === 'answered')) {
        if (existing.state.status !== 'continued') return existing.state
        // A continued card asked again: the agent waits for it once more.
        const reopened = { ...existing.state, status: 'open' as const }
        if ((await this.store.casCard(request.callId, existing.version, reopened)) !== undefined) {
          this.background(this.refresh(request.callId))
          return reopened
        }
        continue
      }
      const requester = request.agent?.requester
      const card = newCard({
        callId: request.callId,
        agentId: request.agent?.id ?? 'default',
        questions: request.questions,
        now: this.now(),
        ...(request.deadline === undefined ? {} : { deadline: request.deadline }),
        quorum: plan.quorum,
        ...(plan.responders ? { responders: plan.responders } : {}),
        ...(plan.excludeRequester && requester ? { excluded: this.people.identify(requester) } : {}),
        route: plan.name,
        ...(request.form ? { form: request.form } : {}),
      })
      card.destinations = destinations
      if (plan.escalation.length > 0) card.escalation = plan.escalation
      if (plan.shown) card.oncall = [plan.shown]
      if ((await this.store.casCard(request.callId, existing?.version ?? 0, card)) !== undefined) {
        await this.store.audit({ callId: card.callId, kind: 'asked', detail: { route: plan.name } })
        // A reused callId: copies already posted show the new card.
        if (existing) this.background(this.refresh(request.callId))
        return card
      }
    }
    throw new UserQuestionError('PROVIDER_ERROR', `card for call "${request.callId}" kept changing`)
  }

  /** Post the card to each destination that has no copy yet. Returns how many copies exist. */
  private async postCopies(card: CardState, destinations: Destination[], keySuffix = ''): Promise<number> {
    const existing = new Set((await this.store.listPosts(card.callId)).map((p) => p.destKey))
    let count = 0
    await Promise.all(
      destinations.map(async (destination) => {
        const destKey = destinationKey(destination) + keySuffix
        if (existing.has(destKey)) {
          count++
          return
        }
        const adapter = this.adapters.get(destination.platform)
        if (!adapter) return
        try {
          const ref = await adapter.post(card, destination)
          await this.store.addPost({
            callId: card.callId,
            destKey,
            platform: destination.platform,
            ref: ref ?? null,
            createdAt: this.now(),
          })
          count++
        } catch (error) {
          this.log.error('posting a card failed', { callId: card.callId, destination: destKey, error })
          await this.store.audit({
            callId: card.callId,
            kind: 'post-failed',
            platform: destination.platform,
            detail: { destination: destKey, message: error instanceof Error ? error.message : String(error) },
          })
        }
      }),
    )
    return count
  }

  // ---- interactions ----

  private async handle(input: InboundInteraction): Promise<InteractionOutcome> {
    const { callId } = input
    // One person is one approver, whichever platform (or signed-in inbox) they answer from.
    const actor = this.people.identify(input.interaction.actor)
    const interaction = { ...input.interaction, actor }
    const audit = (refused: boolean, code?: string) =>
      this.store.audit({
        callId,
        kind: 'interaction',
        platform: actor.platform,
        actor: {
          platform: actor.platform,
          userId: actor.userId,
          ...(actor.name ? { name: actor.name } : {}),
        },
        detail: interaction.action,
        refused,
        ...(code ? { code } : {}),
      })
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const current = await this.store.getCard<CardState>(callId)
      if (!current) {
        await audit(true, 'unknown-call')
        return { ok: false, message: 'This question is no longer available.' }
      }
      const card = current.state
      if (card.seen.includes(interaction.id)) return { ok: true, card }
      if (!isLive(card)) {
        await audit(true, 'finished')
        return { ok: false, message: finishedRefusal(card).message, card }
      }
      if (!(await this.policy.allows(card, actor))) {
        await audit(true, 'not-allowed')
        return { ok: false, message: NOT_ALLOWED, card }
      }
      const result = applyInteraction(card, interaction)
      if (!result.ok) {
        await audit(true, result.refusal.code)
        return { ok: false, message: result.refusal.message, card }
      }
      if (result.duplicate) return { ok: true, card }
      const version = await this.store.casCard(callId, current.version, result.state)
      if (version === undefined) continue // someone else changed the card: decide again on the new state
      await audit(false)
      const next = result.state
      if (interaction.action.type === 'hold') this.hold(next, actor)
      if (interaction.action.type === 'release') this.release(callId, actor)
      if (result.completed) await this.completed(card, next)
      this.background(this.refresh(callId))
      return { ok: true, card: next, ...(result.notice ? { message: result.notice } : {}) }
    }
    return { ok: false, message: 'This question is busy; please try again.' }
  }

  /** A card just completed: hand the answer to the waiting ask, or queue it as a late reply. */
  private async completed(before: CardState, card: CardState): Promise<void> {
    for (const key of [...this.holds.keys()].filter((k) => k.startsWith(`${card.callId}\u0000`))) {
      this.release(card.callId, undefined, key)
    }
    await this.store.audit({
      callId: card.callId,
      kind: 'completed',
      ...(card.answeredBy ? { actor: card.answeredBy, platform: card.answeredBy.platform } : {}),
      // A reason typed with Approve or Reject is askbridge's own note beside the answer.
      detail: card.reason && card.result ? { ...card.result, reason: card.reason } : card.result,
    })
    const answer = card.result
    if (!answer) return
    const waiter = this.waiters.get(card.callId)
    if (before.status === 'open' && waiter && !waiter.signal.aborted) {
      waiter.resolve(answer)
      // The window may close in the same instant: if the ask still ends pending, reply late.
      // Not awaited: the person's click is applied and must not wait for the ask to unwind.
      const flight = this.service.inflight(card.agentId, card.callId)
      if (flight) {
        this.background(
          flight.then(
            (result) => ('pending' in result ? this.deliverLate(card, answer) : undefined),
            () => undefined,
          ),
        )
      }
      return
    }
    await this.deliverLate(card, answer)
  }

  private async deliverLate(card: CardState, answer: AskUserQuestionAnswer): Promise<void> {
    const call = await this.service.getCall(card.callId)
    if (call?.state !== 'continued') return // open blocking call: the re-attached ask collects it
    try {
      await this.service.answer(card.agentId, card.callId, answer)
    } catch (error) {
      this.log.warn('late answer not queued', { callId: card.callId, error })
    }
  }

  /** "Take my time" / an open form: claim the timed wait while the person is busy. */
  private hold(card: CardState, person: Person): void {
    if (card.deadline === undefined || card.status !== 'open') return
    const key = `${card.callId}\u0000${person.platform}:${person.userId}`
    if (this.holds.has(key)) return
    const controller = new AbortController()
    const timer = setTimeout(() => this.release(card.callId, person), this.holdMaxMs)
    timer.unref()
    this.holds.set(key, { controller, timer })
    void (async () => {
      for await (const _frame of this.service.attachWait(card.agentId, card.callId, controller.signal)) {
        // One frame; the claim lasts until the controller aborts or the wait ends.
      }
    })()
  }

  private release(callId: string, person?: Person, rawKey?: string): void {
    const key = rawKey ?? `${callId}\u0000${person?.platform}:${person?.userId}`
    const hold = this.holds.get(key)
    if (!hold) return
    clearTimeout(hold.timer)
    hold.controller.abort()
    this.holds.delete(key)
    if (person && !rawKey) this.background(this.dropHolder(callId, person))
  }

  private async dropHolder(callId: string, person: Person): Promise<void> {
    await this.mutate(callId, (card) =>
      card.holders.some((p) => samePerson(p, person))
        ? { ...card, holders: card.holders.filter((p) => !samePerson(p, person)) }
        : undefined,
    )
  }

  /** Move a live card to a lifecycle status and update every copy. */
  private async setStatus(callId: string, status: 'continued' | 'cancelled' | 'elsewhere', reason?: string) {
    await this.mutate(callId, (card) => {
      if (!isLive(card) || card.status === status) return undefined
      if (status === 'continued' && card.status !== 'open') return undefined
      return withStatus(card, status, reason)
    })
    if (status !== 'continued') {
      for (const key of [...this.holds.keys()].filter((k) => k.startsWith(`${callId}\u0000`))) {
        this.release(callId, undefined, key)
      }
    }
  }

  /**
   * Tell the cards a question was answered somewhere else (a host's own terminal UI won the race):
   * every copy says so and loses its buttons. Call it before aborting askbridge's answerer.
   * Returns false when the card was already finished or is unknown.
   * @example chat.answeredElsewhere(request.callId)
   */
  answeredElsewhere(callId: string): Promise<boolean> {
    return this.mutate(callId, (card) =>
      isLive(card) ? withStatus(card, 'elsewhere', 'answered elsewhere') : undefined,
    )
  }

  /** A discarded late reply: the card takes answers again, from a clean slate. */
  private async reopen(callId: string): Promise<void> {
    const call = await this.service.getCall(callId)
    if (call?.state !== 'continued' || call.queuedReply) return
    await this.mutate(callId, (card) => {
      if (card.status !== 'answered' && card.status !== 'elsewhere') return undefined
      const { result: _r, answeredBy: _b, answeredAt: _a, closedReason: _c, ...rest } = card
      return { ...rest, status: 'continued', drafts: {}, approvals: [], holders: [] }
    })
  }

  /** Compare-and-set a change; `change` returns undefined for no change. */
  private async mutate(callId: string, change: (card: CardState) => CardState | undefined): Promise<boolean> {
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const current = await this.store.getCard<CardState>(callId)
      if (!current) return false
      const next = change(current.state)
      if (!next) return false
      if ((await this.store.casCard(callId, current.version, next)) !== undefined) {
        // Only lifecycle changes are audited as such; an escalation tier or a holder leaving is not one.
        if (next.status !== current.state.status)
          await this.store.audit({ callId, kind: `status:${next.status}` })
        this.background(this.refresh(callId))
        return true
      }
    }
    return false
  }

  /**
   * Bring every copy of a card up to date. Updates for one card never overlap; changes that land
   * while an update runs are folded into one more pass with the latest state.
   */
  refresh(callId: string): Promise<void> {
    const running = this.updates.get(callId)
    if (running) {
      running.dirty = true
      return running.promise
    }
    const entry = { dirty: true, promise: Promise.resolve() }
    entry.promise = (async () => {
      try {
        while (entry.dirty) {
          entry.dirty = false
          const card = (await this.store.getCard<CardState>(callId))?.state
          if (!card) return
          const posts = await this.store.listPosts(callId)
          await Promise.all(
            posts.map(async (post) => {
              const adapter = this.adapters.get(post.platform)
              if (!adapter) return
              try {
                const next = await adapter.update(card, post.ref)
                if (next !== undefined) await this.store.updatePost(callId, post.destKey, next)
              } catch (error) {
                this.log.error('updating a card failed', { callId, destination: post.destKey, error })
              }
            }),
          )
        }
      } finally {
        this.updates.delete(callId)
      }
    })()
    this.updates.set(callId, entry)
    return entry.promise
  }

  // ---- escalation ----

  /**
   * Fire escalation tiers that are due. Times count from the card's creation, so a restart
   * neither loses nor repeats a tier (the tier count is compare-and-set in the store).
   */
  async tick(): Promise<void> {
    const cards = await this.store.listCards<CardState>()
    for (const { callId, state } of cards) {
      if (!isLive(state) || !state.escalation) continue
      let card = state
      while (card.escalated < (card.escalation?.length ?? 0)) {
        const tier = card.escalation?.[card.escalated]
        if (!tier || this.now() < card.createdAt + tier.afterMs) break
        const index = card.escalated
        // The next on-call level, looked up when the tier is due: mentioned, and allowed to answer.
        const staffing = tier.oncall ? await this.onCall(tier.oncall, tier.oncall.level) : undefined
        let fired: CardState | undefined
        const ok = await this.mutate(callId, (c) => {
          if (c.escalated !== index || !isLive(c)) return undefined
          fired = { ...c, escalated: index + 1 }
          if (staffing) {
            fired.responders = mergeResponders(c.responders ?? { web: false }, staffing.responders)
            fired.oncall = [...(c.oncall ?? []), staffing.shown]
          }
          return fired
        })
        if (!ok || !fired) break
        card = fired
        const targets = escalationTargets(tier, card, staffing)
        await this.postCopies(card, targets, `#escalation-${index + 1}`)
        await this.store.audit({
          callId,
          kind: 'escalated',
          detail: { tier: index + 1, after: tier.afterMs },
        })
        this.log.info('question escalated', { callId, tier: index + 1 })
      }
    }
  }
}

/** Where an escalation tier posts, with which mentions (the tier's, plus an on-call level's). */
function escalationTargets(
  tier: EscalationTier,
  card: CardState,
  staffing: Staffing | undefined,
): Destination[] {
  const base = tier.destinations?.length
    ? tier.destinations.map((d) => (tier.mention?.length ? { ...d, mention: tier.mention } : d))
    : (card.destinations ?? []).map((d) => ({ ...d, mention: tier.mention ?? [] }))
  return staffing ? base.map((d) => withMentions(d, staffing.mention)) : base
}

/** A destination with the mentions meant for its platform added. */
function withMentions(d: Destination, mention: { slack: string[]; discord: string[] }): Destination {
  const more = d.platform === 'web' ? [] : mention[d.platform]
  if (more.length === 0) return d
  return { ...d, mention: [...new Set([...(d.mention ?? []), ...more])] }
}

const union = (a: string[] | undefined, b: string[] | undefined): string[] | undefined =>
  a || b ? [...new Set([...(a ?? []), ...(b ?? [])])] : undefined

/** Both sets of responders: every list joined; `web` from the first. */
function mergeResponders(a: Responders | undefined, b: Responders): Responders {
  const out: Responders = { ...a }
  const slackUsers = union(a?.slack?.users, b.slack?.users)
  const slackGroups = union(a?.slack?.groups, b.slack?.groups)
  if (slackUsers || slackGroups)
    out.slack = {
      ...(slackUsers ? { users: slackUsers } : {}),
      ...(slackGroups ? { groups: slackGroups } : {}),
    }
  const discordUsers = union(a?.discord?.users, b.discord?.users)
  const discordRoles = union(a?.discord?.roles, b.discord?.roles)
  if (discordUsers || discordRoles)
    out.discord = {
      ...(discordUsers ? { users: discordUsers } : {}),
      ...(discordRoles ? { roles: discordRoles } : {}),
    }
  const emails = union(a?.emails, b.emails)
  if (emails) out.emails = emails
  return out
}
