import { asUserQuestionError, UserQuestionError } from '../protocol/errors.js'

/** The error for a request whose signal had already aborted. */
export function aborted(signal: AbortSignal): UserQuestionError {
  return new UserQuestionError('ASK_ABORTED', 'the question was aborted', { cause: signal.reason })
}

/** Reject as soon as the signal aborts, with its reason, whatever the body does. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {})
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
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
