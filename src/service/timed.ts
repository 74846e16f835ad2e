/** A timed ask once recorded: the answerers' answer, or pending when the deadline comes first. */
import { asUserQuestionError } from '../protocol/errors.js'
import type {
  AskUserQuestionAnswer,
  AskUserQuestionRequest,
  TimedUserQuestionResult,
} from '../protocol/types.js'
import type { Waterfall } from './waterfall.js'

/**
 * Run the waterfall for a timed ask until it answers or `expired` resolves (then `{pending}`);
 * an unclaimed request is held until the deadline so a client may still attach.
 */
export async function answerWithin(
  waterfall: Waterfall,
  full: AskUserQuestionRequest,
  callId: string,
  controller: AbortController,
  deadline: number,
  expired: Promise<'expired'>,
): Promise<TimedUserQuestionResult> {
  // An unclaimed request is held until the deadline (a client may still attach) when
  // every answerer delegated or one said nobody will claim it (NO_PROVIDER).
  const held = () =>
    new Promise<AskUserQuestionAnswer>((_, reject) => {
      const signal = controller.signal
      if (signal.aborted) return reject(signal.reason)
      signal.addEventListener('abort', () => reject(signal.reason), { once: true })
    })
  type Outcome = { answer: AskUserQuestionAnswer } | 'expired'
  const answered = waterfall.runFor(full, callId, controller, deadline, held).then<Outcome, Outcome>(
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
}
