/** The user-questions service (UserQuestionService): ask, askTimed, answer, cancel, replies and recovery over the store. */
import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { type Logger, silentLogger } from '../log.js'
import { UserQuestionError } from '../protocol/errors.js'
import type {
  Agent,
  Answerer,
  AskUserQuestionAnswer,
  AskUserQuestionAnswerItem,
  AskUserQuestionRequest,
  TimedUserQuestionResult,
  UserQuestionProjectionView,
} from '../protocol/types.js'
import { MAX_TIMEOUT_MS } from '../protocol/validate.js'
import type { CallKey, CallRecord, Store } from '../store/types.js'
import { aborted } from './abort.js'
import { AgentRegistry } from './agents.js'
import { checkRequest } from './check.js'
import { emitSafely, type ServiceEvents } from './events.js'
import { Flights, key } from './flights.js'
import { recoverTimedCalls } from './recover.js'
import { admitReply, discardReply, listReplies, type QueuedReply, queueReply } from './replies.js'
import { answerWithin } from './timed.js'
import { TimedWaits } from './waits.js'
import { Waterfall } from './waterfall.js'

export type { ServiceEvents } from './events.js'
export type { QueuedReply }

export { MAX_TIMEOUT_MS }

export interface UserQuestionServiceOptions {
  store: Store
  agents?: AgentRegistry
  /** Clock for deadlines. @default Date.now */
  now?: () => number
  /** Where a failing event listener is reported (it never fails the call that emitted). */
  logger?: Logger
}

/**
 * The user-questions service: validates, records, runs the answerer waterfall and keeps timed
 * waits. Expected outcomes (pending) are values; protocol failures are UserQuestionErrors.
 */
export class UserQuestionService extends EventEmitter<ServiceEvents> {
  readonly store: Store
  readonly agents: AgentRegistry
  private readonly now: () => number
  private readonly log: Logger
  private readonly waterfall = new Waterfall()
  private readonly waits: TimedWaits
  private readonly flights: Flights

  constructor(options: UserQuestionServiceOptions) {
    super()
    this.store = options.store
    this.agents = options.agents ?? new AgentRegistry()
    this.now = options.now ?? Date.now
    this.waits = new TimedWaits(() => this.now())
    this.log = options.logger ?? silentLogger
    this.flights = new Flights({
      store: this.store,
      emit: (event, ...args) => this.emit(event, ...args),
      closing: () => this.closing,
    })
  }

  /**
   * Tell listeners what happened. What they do with it is theirs: a listener that throws is
   * logged and never undoes or misreports what was already recorded (a queued reply stays queued).
   */
  override emit<K extends keyof ServiceEvents>(event: K, ...args: ServiceEvents[K]): boolean {
    return emitSafely(this, this.log, event, args)
  }

  /**
   * Register an answerer (a plain `(request, next) => Promise<answer>` function).
   * With `agentId`, it only sees that agent's requests. Returns the unregister function.
   */
  use(answerer: Answerer, options: { agentId?: string } = {}): () => void {
    return this.waterfall.use(answerer, options)
  }

  /** Ask and wait until answered (no deadline). */
  async ask(request: AskUserQuestionRequest): Promise<AskUserQuestionAnswer> {
    const timed = request.wait?.timed === true
    if (timed) {
      // A timed wait goes through askTimed, which owns the deadline.
      throw new UserQuestionError('BAD_TIMEOUT', 'ask() with wait.timed needs askTimed() and a timeout')
    }
    this.validate(request, false)
    const callId = request.wait?.callId ?? `ask-${randomUUID()}`
    const agentId = request.agent?.id ?? 'default'
    const result = await this.flights.fly(agentId, callId, request, async (controller) => {
      await this.store.append({
        type: 'asked',
        callId,
        agentId,
        questions: request.questions,
        timed: false,
        ...(request.route === undefined ? {} : { route: request.route }),
      })
      this.emit('asked', { callId, agentId, timed: false })
      return this.waterfall.runFor(request, callId, controller, undefined, () =>
        Promise.reject(new UserQuestionError('NO_PROVIDER', 'no answerer claimed the question')),
      )
    })
    return result as AskUserQuestionAnswer
  }

  /**
   * Ask with a foreground deadline. Returns the answer if it arrives in the window, otherwise
   * `{pending: true, callId}`: still answerable, never a refusal or a permission.
   */
  async askTimed(
    request: AskUserQuestionRequest & { agent: Agent },
    callId: string,
    timeoutMs: number,
  ): Promise<TimedUserQuestionResult> {
    if (request.signal?.aborted) throw aborted(request.signal)
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
      throw new UserQuestionError('BAD_TIMEOUT', `timeout must be an integer from 1 to ${MAX_TIMEOUT_MS} ms`)
    }
    if (!request.agent) throw new UserQuestionError('CALLER_NOT_LIVE', 'a timed question needs an agent')
    const full: AskUserQuestionRequest = { ...request, wait: { callId, timed: true } }
    this.validate(full, true)
    const agentId = request.agent.id
    const deadline = this.now() + timeoutMs
    const { wait, expired } = this.waits.open(agentId, callId, deadline)
    try {
      return await this.flights.fly(
        agentId,
        callId,
        full,
        async (controller) => {
          await this.store.append({
            type: 'asked',
            callId,
            agentId,
            questions: request.questions,
            timed: true,
            deadline,
            ...(request.route === undefined ? {} : { route: request.route }),
          })
          this.emit('asked', { callId, agentId, timed: true })
          // The deadline passed while the asked record was being written: no answerer is called
          // for a wait that has already ended (it would post a card nobody waits for).
          if (wait.expired) return { pending: true, callId } as const
          return answerWithin(this.waterfall, full, callId, controller, deadline, expired)
        },
        { controller: wait.controller, callerWins: true },
      )
    } finally {
      this.waits.end(wait)
    }
  }

  /**
   * Claim a live timed wait as an answer client. Yields one `{remainingMs}` frame, then holds
   * until the client stops iterating, `signal` aborts, or the wait ends. While any claim is held
   * the host timer is stopped; the original deadline applies again when the last claim leaves.
   */
  attachWait(
    agent: Agent | string,
    callId: string,
    signal?: AbortSignal,
  ): AsyncGenerator<{ remainingMs: number }, void, undefined> {
    return this.waits.attach(typeof agent === 'string' ? agent : agent.id, callId, signal)
  }

  /**
   * An answerer's commit settled this call with `answers` (a card's completing click, with its
   * `answered` event) and is about to hand them to the ask waiting here: that ask returns them
   * without reading the call back, and its `answered` event says `via: 'card'`.
   */
  settledByCard(call: CallKey, answers: AskUserQuestionAnswerItem[]): void {
    this.flights.committed(call, answers)
  }

  /** The in-flight ask for this agent and call, to re-attach a caller to it. */
  inflight(agentId: string, callId: string): Promise<TimedUserQuestionResult> | undefined {
    return this.flights.all.get(key(agentId, callId))?.promise
  }

  /**
   * Answer a continued question late. Returns false for an open or unknown call. Throws
   * BAD_ANSWER for a batch that does not answer each question once with its own labels, and
   * REPLY_QUEUED while a reply for the call waits for the agent to admit it.
   */
  async answer(agent: Agent | string, callId: string, answer: unknown): Promise<boolean> {
    const agentId = typeof agent === 'string' ? agent : agent.id
    const queued = await queueReply(this.store, agentId, callId, answer)
    if (!queued) return false
    this.emit('reply', { agentId, callId, reply: queued })
    return true
  }

  /** Late replies queued for an agent, not yet admitted or discarded, in ask order. */
  replies(agentId: string): Promise<QueuedReply[]> {
    return listReplies(this.store, agentId)
  }

  /**
   * The agent admitted a reply: the call settles with the reply's batch (zero answers when it
   * has no readable batch). `reply` defaults to the queued one. False when nothing changed.
   */
  async admitReply(agentId: string, callId: string, reply?: unknown): Promise<boolean> {
    const admitted = await admitReply(this.store, agentId, callId, reply)
    if (admitted) this.emit('replyAdmitted', { agentId, callId })
    return admitted
  }

  /** The agent discarded a queued reply: the call is answerable again. */
  async discardReply(agentId: string, callId: string): Promise<boolean> {
    const discarded = await discardReply(this.store, agentId, callId)
    if (discarded) this.emit('replyDiscarded', { agentId, callId })
    return discarded
  }

  /**
   * Cancel a call: a waiting ask fails with ASK_CANCELLED; a continued call stops being
   * answerable. False for an unknown or already finished call. REPLY_QUEUED when an answer is
   * waiting for the agent to admit it (discard it first).
   */
  async cancel(call: CallKey, reason = 'the question was cancelled'): Promise<boolean> {
    const { agentId, callId } = call
    const flight = this.flights.all.get(key(agentId, callId))
    if (flight) {
      flight.controller.abort(new UserQuestionError('ASK_CANCELLED', reason))
      await flight.promise.catch(() => {})
      return true
    }
    const dropped = await this.store.transact(call, (call) => {
      if (!call || (call.state !== 'open' && call.state !== 'continued')) return { events: [], result: false }
      // Someone's answer is waiting for the agent: cancelling would drop it without a trace.
      if (call.queuedReply) {
        throw new UserQuestionError(
          'REPLY_QUEUED',
          `call "${callId}" has an answer waiting for the agent; discard the reply before cancelling`,
        )
      }
      return {
        events: [{ type: 'dropped', agentId, callId, code: 'ASK_CANCELLED', message: reason }],
        result: true,
      }
    })
    if (dropped) this.emit('dropped', { agentId, callId }, 'ASK_CANCELLED')
    return dropped
  }

  getCall(call: CallKey): Promise<CallRecord | undefined> {
    return this.store.getCall(call)
  }

  /**
   * Every agent's call with this callId (recorded or still starting), oldest first: for a caller
   * that named no agent. More than one means the callId alone is ambiguous.
   */
  async callsNamed(callId: string): Promise<CallKey[]> {
    const found = new Map<string, CallKey>()
    for (const c of await this.store.findCalls(callId)) {
      found.set(key(c.agentId, c.callId), { agentId: c.agentId, callId: c.callId })
    }
    for (const f of this.flights.all.values()) {
      if (f.callId === callId) found.set(key(f.agentId, f.callId), { agentId: f.agentId, callId })
    }
    return [...found.values()]
  }

  projection(agentId?: string): Promise<UserQuestionProjectionView> {
    return this.store.projection(agentId)
  }

  /** The projection with one page of the settled list (see `Store.projectionPage`). */
  projectionPage(filter: {
    agentId?: string
    limit: number
    afterSeq?: number
  }): Promise<{ view: UserQuestionProjectionView; next?: number }> {
    return this.store.projectionPage(filter)
  }

  /**
   * After a restart: timed calls left open by a dead process get the "outcome unknown" result
   * and become continued, so they stay answerable and later replies arrive as a new turn.
   * On a database shared with other live bridges, only calls whose own bridge is gone (its lease
   * lapsed) and whose deadline has passed: the others are still being waited on.
   */
  async recover(): Promise<CallKey[]> {
    const turned = await recoverTimedCalls(this.store, (k) => this.flights.all.has(key(k.agentId, k.callId)))
    for (const call of turned) this.emit('pending', call)
    return turned
  }

  /**
   * End every wait with ASK_ABORTED. The store stays open (its owner closes it).
   * With `keepCalls` (a restart, not an ending) the calls are not dropped: the log keeps them as
   * they were, so after the restart timed calls come back continued and blocking callers
   * re-attach to their cards.
   */
  async close(options: { keepCalls?: boolean } = {}): Promise<void> {
    if (this.closing) return
    this.closing = options.keepCalls ? 'keep' : 'drop'
    const flights = [...this.flights.all.values()]
    const message = options.keepCalls
      ? 'the bridge is restarting; ask again with the same callId to re-attach'
      : 'the service is closing'
    for (const f of flights) f.controller.abort(new UserQuestionError('ASK_ABORTED', message))
    await Promise.allSettled(flights.map((f) => f.promise))
  }

  /** Set once `close()` starts: `keep` when calls stay open for a restart. */
  closing: 'keep' | 'drop' | undefined

  // ---- internals ----

  private validate(request: AskUserQuestionRequest, timed: boolean): void {
    if (this.closing) throw new UserQuestionError('ASK_ABORTED', 'the service is closed')
    checkRequest(request, timed, this.agents)
  }
}
