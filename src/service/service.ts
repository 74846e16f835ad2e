import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { type Logger, silentLogger } from '../log.js'
import { asUserQuestionError, UserQuestionError } from '../protocol/errors.js'
import type {
  Agent,
  Answerer,
  AskUserQuestionAnswer,
  AskUserQuestionRequest,
  TimedUserQuestionResult,
  UserQuestionProjectionView,
} from '../protocol/types.js'
import { MAX_TIMEOUT_MS } from '../protocol/validate.js'
import { isStorageError, type StorageError } from '../store/errors.js'
import { callKeyString } from '../store/fold.js'
import type { CallKey, CallRecord, Store } from '../store/types.js'
import { abortable, aborted, failureOf } from './abort.js'
import { AgentRegistry } from './agents.js'
import { checkRequest } from './check.js'
import { emitSafely, type ServiceEvents } from './events.js'
import { recoverTimedCalls } from './recover.js'
import { admitReply, discardReply, listReplies, type QueuedReply, queueReply } from './replies.js'
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

interface Flight {
  agentId: string
  callId: string
  controller: AbortController
  promise: Promise<TimedUserQuestionResult>
}

const key = (agentId: string, callId: string) => callKeyString({ agentId, callId })

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
  private readonly flights = new Map<string, Flight>()

  constructor(options: UserQuestionServiceOptions) {
    super()
    this.store = options.store
    this.agents = options.agents ?? new AgentRegistry()
    this.now = options.now ?? Date.now
    this.waits = new TimedWaits(() => this.now())
    this.log = options.logger ?? silentLogger
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
    const result = await this.fly(agentId, callId, request, async (controller) => {
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
      return await this.fly(
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
          // An unclaimed request is held until the deadline (a client may still attach) when
          // every answerer delegated or one said nobody will claim it (NO_PROVIDER).
          const held = () =>
            new Promise<AskUserQuestionAnswer>((_, reject) => {
              const signal = controller.signal
              if (signal.aborted) return reject(signal.reason)
              signal.addEventListener('abort', () => reject(signal.reason), { once: true })
            })
          type Outcome = { answer: AskUserQuestionAnswer } | 'expired'
          const answered = this.waterfall
            .runFor(full, callId, controller, deadline, held)
            .then<Outcome, Outcome>(
              (answer) => ({ answer }),
              (error: unknown) => {
                const code = asUserQuestionError(error)?.code
                // A client whose own countdown ended rejects with ASK_TIMED_OUT: that is pending.
                if (code === 'ASK_TIMED_OUT') return 'expired' as const
                if (code === 'NO_PROVIDER') return held().then((answer) => ({ answer }))
                throw error
              },
            )
          const outcome = await Promise.race([answered, expired])
          if (outcome === 'expired') {
            answered.catch(() => {})
            return { pending: true, callId } as const
          }
          return outcome.answer
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

  /** The in-flight ask for this agent and call, to re-attach a caller to it. */
  inflight(agentId: string, callId: string): Promise<TimedUserQuestionResult> | undefined {
    return this.flights.get(key(agentId, callId))?.promise
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
    const flight = this.flights.get(key(agentId, callId))
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
    for (const f of this.flights.values()) {
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
    const turned = await recoverTimedCalls(this.store, (k) => this.flights.has(key(k.agentId, k.callId)))
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
    const flights = [...this.flights.values()]
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

  /**
   * Record how an ask's wait ended, as the store decides it. A card's completing click records
   * its answer in the card's own commit (interactions.ts), so a settled call needs no second
   * write: the stored answer is the result. A window that closed while a click's commit settled
   * the call gives the agent that answer, not pending; a click committed after the window closed
   * found the call continued and queued its answer as the late reply, in its own commit.
   */
  private async settle(key: CallKey, outcome: TimedUserQuestionResult): Promise<TimedUserQuestionResult> {
    const stored = (call: CallRecord | undefined) =>
      call?.state === 'settled' && call.answers ? { answers: call.answers } : undefined
    if (!('pending' in outcome)) {
      const settled = stored(await this.store.getCall(key))
      if (settled) return settled
    }
    return this.store.transact<TimedUserQuestionResult>(key, (call) => {
      const settled = stored(call)
      if (settled) return { events: [], result: settled }
      const { agentId, callId } = key
      return 'pending' in outcome
        ? { events: [{ type: 'pending', agentId, callId }], result: outcome }
        : { events: [{ type: 'answered', agentId, callId, answers: outcome.answers }], result: outcome }
    })
  }

  /** Track an in-flight call and record how it ended. */
  private async fly(
    agentId: string,
    callId: string,
    request: AskUserQuestionRequest,
    body: (controller: AbortController) => Promise<TimedUserQuestionResult>,
    options: {
      controller?: AbortController
      /**
       * The caller's abort decides the failure (ASK_ABORTED), whatever an answerer rejects with
       * in the same turn (askTimed). Without it an answerer's own protocol error is kept.
       */
      callerWins?: boolean
    } = {},
  ): Promise<TimedUserQuestionResult> {
    const { controller = new AbortController(), callerWins = false } = options
    const k = key(agentId, callId)
    const callerSignal = request.signal
    let callerAbort: UserQuestionError | undefined
    const onCallerAbort = () => {
      callerAbort = new UserQuestionError('ASK_ABORTED', 'the caller aborted', {
        cause: callerSignal?.reason,
      })
      controller.abort(callerAbort)
    }
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true })
    let promise: Promise<TimedUserQuestionResult> | undefined
    const run = (async () => {
      try {
        const outcome = await abortable(body(controller), controller.signal)
        // Only the waterfall's own signal learns of the timeout; the caller's turn goes on.
        if ('pending' in outcome) {
          controller.abort(new UserQuestionError('ASK_TIMED_OUT', 'the question window closed'))
        }
        const result = await this.settle({ agentId, callId }, outcome)
        if ('pending' in result) this.emit('pending', { agentId, callId })
        else this.emit('answered', { agentId, callId }, result.answers)
        return result
      } catch (error) {
        // A storage fault reaches the caller as itself (HTTP 503, retry the same callId): what
        // was stored stays, and a card answered meanwhile is found again by the retry.
        const storage: StorageError | undefined = isStorageError(error) ? error : undefined
        // askTimed: the caller left first, so nobody reads an answerer's reason any more.
        const left =
          callerWins && callerAbort && controller.signal.reason === callerAbort ? callerAbort : undefined
        const failure = storage ?? left ?? failureOf(error, controller.signal)
        if (this.closing === 'keep') throw failure // a restart: the call stays as the log has it
        try {
          await this.store.append({
            type: 'dropped',
            agentId,
            callId,
            code: failure.code,
            message: failure.message,
          })
        } catch (appendError) {
          if (!storage) throw appendError
          throw failure // still down: the call stays as the log has it
        }
        this.emit('dropped', { agentId, callId }, failure.code, failure)
        throw failure
      } finally {
        callerSignal?.removeEventListener('abort', onCallerAbort)
        if (this.flights.get(k)?.promise === promise) this.flights.delete(k)
      }
    })()
    promise = run
    this.flights.set(k, { agentId, callId, controller, promise })
    return promise
  }
}
