/** The service's in-flight asks: tracked by call, their outcome recorded (settled, pending or dropped) as they end. */
import { UserQuestionError } from '../protocol/errors.js'
import type {
  AskUserQuestionAnswerItem,
  AskUserQuestionRequest,
  TimedUserQuestionResult,
} from '../protocol/types.js'
import { isStorageError, type StorageError } from '../store/errors.js'
import { callKeyString } from '../store/fold.js'
import type { CallKey, CallRecord, Store } from '../store/types.js'
import { abortable, failureOf } from './abort.js'
import type { ServiceEvents } from './events.js'

export interface Flight {
  agentId: string
  callId: string
  controller: AbortController
  promise: Promise<TimedUserQuestionResult>
  /**
   * The answers a card's commit settled the call with, told before it hands them to this ask
   * (see {@link Flights.committed}): the flight returns them without reading the call back.
   */
  stored?: AskUserQuestionAnswerItem[]
}

export const key = (agentId: string, callId: string) => callKeyString({ agentId, callId })

/** What flights need of the service. */
export interface FlightDeps {
  store: Store
  emit: <K extends keyof ServiceEvents>(event: K, ...args: ServiceEvents[K]) => boolean
  /** Set once the service starts closing: `keep` when calls stay open for a restart. */
  closing: () => 'keep' | 'drop' | undefined
}

export class Flights {
  /** By call key. */
  readonly all = new Map<string, Flight>()

  constructor(private readonly deps: FlightDeps) {}

  /** Track an in-flight call and record how it ended. */
  async fly(
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
    let flight: Flight | undefined
    const run = (async () => {
      try {
        const outcome = await abortable(body(controller), controller.signal)
        // Only the waterfall's own signal learns of the timeout; the caller's turn goes on.
        if ('pending' in outcome) {
          controller.abort(new UserQuestionError('ASK_TIMED_OUT', 'the question window closed'))
        }
        const stored = 'pending' in outcome ? undefined : flight?.stored
        const result = stored ? { answers: stored } : await this.settle({ agentId, callId }, outcome)
        if ('pending' in result) this.deps.emit('pending', { agentId, callId })
        else this.deps.emit('answered', { agentId, callId }, result.answers, stored ? 'card' : undefined)
        return result
      } catch (error) {
        // A storage fault reaches the caller as itself (HTTP 503, retry the same callId): what
        // was stored stays, and a card answered meanwhile is found again by the retry.
        const storage: StorageError | undefined = isStorageError(error) ? error : undefined
        // askTimed: the caller left first, so nobody reads an answerer's reason any more.
        const left =
          callerWins && callerAbort && controller.signal.reason === callerAbort ? callerAbort : undefined
        const failure = storage ?? left ?? failureOf(error, controller.signal)
        if (this.deps.closing() === 'keep') throw failure // a restart: the call stays as the log has it
        try {
          await this.deps.store.append({
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
        this.deps.emit('dropped', { agentId, callId }, failure.code, failure)
        throw failure
      } finally {
        callerSignal?.removeEventListener('abort', onCallerAbort)
        if (this.all.get(k)?.promise === promise) this.all.delete(k)
      }
    })()
    promise = run
    flight = { agentId, callId, controller, promise }
    this.all.set(k, flight)
    return promise
  }

  /**
   * A card's commit settled this call with `answers` (the ones it stored), and is handing them to
   * the ask flying here: that ask returns them as they are, without reading the call back.
   * Ignored when no ask of this call flies here.
   */
  committed(call: CallKey, answers: AskUserQuestionAnswerItem[]): void {
    const flight = this.all.get(key(call.agentId, call.callId))
    if (flight) flight.stored = answers
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
      const settled = stored(await this.deps.store.getCall(key))
      if (settled) return settled
    }
    return this.deps.store.transact<TimedUserQuestionResult>(key, (call) => {
      const settled = stored(call)
      if (settled) return { events: [], result: settled }
      const { agentId, callId } = key
      return 'pending' in outcome
        ? { events: [{ type: 'pending', agentId, callId }], result: outcome }
        : { events: [{ type: 'answered', agentId, callId, answers: outcome.answers }], result: outcome }
    })
  }
}
