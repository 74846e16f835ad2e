import { asUserQuestionError, UserQuestionError } from '../protocol/errors.js'

/** The error for a request whose signal had already aborted. */
export function aborted(signal: AbortSignal): UserQuestionError {
  return new UserQuestionError('ASK_ABORTED', 'the question was aborted', { cause: signal.reason })
}

/** Microtask turns a body gets to settle after an abort (its own rejection travels a short chain). */
const SETTLE_TURNS = 32

/**
 * Reject when the signal aborts, with its reason, whatever the body does. The body still gets
 * to settle first when it does so at once: an answerer that aborts the caller's signal and
 * rejects with its own protocol error (ASK_CANCELLED, say) keeps its error and code.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {})
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {})
      // A few microtask turns (no timer, so fake clocks do not stall it): a body that rejects
      // right after aborting settles first; one that keeps waiting loses to the abort.
      void (async () => {
        for (let turn = 0; turn < SETTLE_TURNS; turn++) await Promise.resolve()
        reject(signal.reason)
      })()
    }
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}

/** What a failed ask reports: its own protocol error, the abort's reason, or PROVIDER_ERROR. */
export function failureOf(error: unknown, signal: AbortSignal): UserQuestionError {
  const coded = asUserQuestionError(error)
  if (coded) return coded
  if (signal.aborted) {
    const reason = asUserQuestionError(signal.reason)
    return new UserQuestionError(
      reason?.code ?? 'ASK_ABORTED',
      reason?.message ?? 'the question was aborted',
      {
        cause: error,
      },
    )
  }
  const message = error instanceof Error ? error.message : String(error)
  return new UserQuestionError('PROVIDER_ERROR', message, { cause: error })
}
