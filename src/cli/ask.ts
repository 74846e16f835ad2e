import { randomUUID } from 'node:crypto'
import { HttpError } from '../errors.js'
import { asUserQuestionError } from '../protocol/errors.js'
import type { AskUserQuestionAnswerItem } from '../protocol/types.js'
import { type ArgIo, ASK_USAGE, type AskCommand, parseAskArgs, UsageError } from './ask-args.js'
import {
  answererName,
  approverNames,
  askThroughRestarts,
  type BridgeClient,
  type QuestionView,
} from './client.js'
import { formatDuration } from './duration.js'
import { clientFromEnv } from './env.js'

/** Exit codes of `askbridge ask` (fixed contract). */
export const EXIT = { answered: 0, other: 1, usage: 2, pending: 3, rejected: 4 } as const

/** The process around `askbridge ask`; injectable for tests. */
export interface AskIo {
  env: Record<string, string | undefined>
  stdout: (text: string) => void
  stderr: (text: string) => void
  /** Show a live countdown (stderr is a terminal). */
  tty: boolean
  args?: ArgIo
  /** Aborts the wait (Ctrl-C); the question stays answerable. */
  signal?: AbortSignal
  /** How often the countdown asks the bridge who holds the wait. @default 3000 */
  statusEveryMs?: number
}

/** Run `askbridge ask`; resolves to the exit code. */
export async function runAsk(argv: string[], io: AskIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(`${ASK_USAGE}\n`)
    return EXIT.answered
  }
  const setUp = commandOf(argv, io)
  if (typeof setUp === 'number') return setUp
  const { cmd, client } = setUp
  // Generated here, not by the server, so an interrupted run can say how to re-attach.
  const callId = cmd.callId ?? `cli-${randomUUID()}`
  const stopCountdown = io.tty
    ? countdown(io, cmd.timeoutMs, () => client.question(callId).then(holdersOf), io.statusEveryMs ?? 3000)
    : () => {}
  try {
    const result = await askThroughRestarts(
      client,
      {
        questions: [cmd.question],
        callId,
        ...(cmd.agentId === undefined ? {} : { agentId: cmd.agentId }),
        ...(cmd.timeoutMs === undefined ? {} : { timeoutMs: cmd.timeoutMs }),
        ...(cmd.route === undefined ? {} : { route: cmd.route }),
      },
      {
        ...(io.signal ? { signal: io.signal } : {}),
        // A CI gate must not fail because the bridge was redeployed while it waited.
        onRestart: (id) =>
          io.stderr(
            `${io.tty ? '\r\x1b[2K' : ''}askbridge: the bridge is restarting; re-attaching to ${id}\n`,
          ),
      },
    )
    stopCountdown()
    if ('pending' in result) return reportPending(cmd, result.callId, io)
    return await reportAnswers(cmd, client, result, io)
  } catch (error) {
    stopCountdown()
    return failed(error, callId, io)
  }
}

/** The parsed command line and the client, or the exit code of a usage error. */
function commandOf(argv: string[], io: AskIo): { cmd: AskCommand; client: BridgeClient } | number {
  let cmd: AskCommand
  try {
    cmd = parseAskArgs(argv, io.args)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`askbridge ask: ${error.message}\n\n${ASK_USAGE}\n`)
      return EXIT.usage
    }
    throw error
  }
  try {
    return { cmd, client: clientFromEnv(io.env, cmd.url === undefined ? {} : { url: cmd.url }) }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    io.stderr(`askbridge ask: ${error.message}\n`)
    return EXIT.usage
  }
}

/** No answer within the window: the callId on stdout (or the JSON), and why on stderr. */
function reportPending(cmd: AskCommand, callId: string, io: AskIo): number {
  if (cmd.json) io.stdout(`${JSON.stringify({ pending: true, callId })}\n`)
  else {
    io.stdout(`${callId}\n`)
    io.stderr(
      `askbridge: no answer yet; the question is still answerable (pending is not an answer).\n` +
        `  callId: ${callId}\n`,
    )
  }
  return EXIT.pending
}

/** The answers on stdout, who gave them (and the verdict of an approval or plan) on stderr. */
async function reportAnswers(
  cmd: AskCommand,
  client: BridgeClient,
  result: { callId: string; answers: AskUserQuestionAnswerItem[] },
  io: AskIo,
): Promise<number> {
  const view = await client.question(result.callId).catch(() => undefined)
  const code = exitCodeOf(cmd, result.answers)
  // With a quorum every approver is named: the log of a deploy gate says who let it through.
  const approvers = code === EXIT.answered && cmd.kind === 'approval' ? approverNames(view) : []
  const by = approvers.length > 1 ? approvers.join(' and ') : answererName(view)
  if (cmd.json) {
    io.stdout(
      `${JSON.stringify({
        answers: result.answers,
        callId: result.callId,
        ...(by ? { answeredBy: by } : {}),
        ...(approvers.length > 1 ? { approvedBy: approvers } : {}),
        ...(typeof view?.reason === 'string' ? { reason: view.reason } : {}),
      })}\n`,
    )
  } else {
    io.stdout(formatAnswers(result.answers))
  }
  if (cmd.kind !== 'questions') {
    const verdict = code === EXIT.answered ? 'approved' : cmd.kind === 'plan-review' ? 'declined' : 'rejected'
    const reason = typeof view?.reason === 'string' ? `: ${view.reason}` : ''
    io.stderr(`askbridge: ${verdict}${by ? ` by ${by}` : ''}${reason}\n`)
  } else if (by) {
    io.stderr(`askbridge: answered by ${by}\n`)
  }
  return code
}

/** The exit code of a failed ask: interrupted, refused by the protocol, or the bridge's error. */
function failed(error: unknown, callId: string, io: AskIo): number {
  if (io.signal?.aborted) {
    io.stderr(`askbridge: stopped waiting; the question stays open. Re-attach with --call-id ${callId}\n`)
    return EXIT.other
  }
  const uq = asUserQuestionError(error)
  if (uq) {
    io.stderr(`askbridge ask: ${uq.code}: ${uq.message}\n`)
    return ['BAD_QUESTION', 'BAD_INTENT', 'BAD_TIMEOUT', 'EMPTY_QUESTIONS'].includes(uq.code)
      ? EXIT.usage
      : EXIT.other
  }
  if (error instanceof HttpError) {
    io.stderr(`askbridge ask: ${error.message}\n`)
    return EXIT.other
  }
  io.stderr(`askbridge ask: ${(error as Error).message ?? String(error)}\n`)
  return EXIT.other
}

/** 0 answered / approved, 4 rejected approval or declined plan. */
export function exitCodeOf(cmd: AskCommand, answers: AskUserQuestionAnswerItem[]): number {
  const intent = cmd.question.intent
  if (!intent) return EXIT.answered
  const item = answers.find((a) => a.id === cmd.question.id)
  const chosen = item?.selected ?? []
  if (intent.kind === 'approval') {
    const ok =
      chosen.includes(intent.approve) || (intent.always !== undefined && chosen.includes(intent.always))
    return ok ? EXIT.answered : EXIT.rejected
  }
  return chosen.includes(intent.approve) && item?.custom === undefined ? EXIT.answered : EXIT.rejected
}

/** One line per question: the labels (or the custom text); `id: ...` for batches. */
export function formatAnswers(answers: AskUserQuestionAnswerItem[]): string {
  const shown = (a: AskUserQuestionAnswerItem) =>
    [...a.selected, ...(a.custom === undefined ? [] : [a.custom])].join(', ')
  if (answers.length === 1) return `${shown(answers[0] as AskUserQuestionAnswerItem)}\n`
  return answers.map((a) => `${a.id}: ${shown(a)}\n`).join('')
}

/** Who holds the wait ("Take my time", an open form), as the card names them. */
function holdersOf(view: QuestionView): string[] {
  const card = view.card as { holders?: Array<{ name?: string; userId: string }> } | undefined
  return (card?.holders ?? []).map((p) => p.name ?? p.userId)
}

/**
 * The live line on stderr: time left, or while someone holds the wait, who (the bridge does not
 * let the wait end while they answer; when they let go, the original deadline applies again).
 */
function countdown(
  io: AskIo,
  timeoutMs: number | undefined,
  holders: () => Promise<string[]>,
  everyMs: number,
): () => void {
  const started = Date.now()
  let held: string[] = []
  const draw = () => {
    const elapsed = Date.now() - started
    let text: string
    if (held.length > 0) text = `waiting for an answer… held by ${held.join(' and ')} while they answer`
    else if (timeoutMs === undefined) text = `waiting for an answer… ${formatDuration(elapsed)}`
    else text = `waiting for an answer… ${formatDuration(timeoutMs - elapsed)} left`
    io.stderr(`\r\x1b[2K${text}`)
  }
  const poll = () => {
    holders().then(
      (names) => {
        held = names
        draw()
      },
      () => {}, // not posted yet, or the bridge is restarting: keep the last line
    )
  }
  draw()
  const timer = setInterval(draw, 1000)
  const status = setInterval(poll, everyMs)
  return () => {
    clearInterval(timer)
    clearInterval(status)
    io.stderr('\r\x1b[2K')
  }
}
