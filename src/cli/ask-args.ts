import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { AskbridgeError } from '../errors.js'
import type { AskUserQuestionItem } from '../protocol/types.js'
import { parseDuration } from './duration.js'

/** A bad command line: exit code 2 with this message. */
export class UsageError extends AskbridgeError {
  override readonly name = 'UsageError'
  readonly code = 'USAGE'
}

/** Labels `--approval` uses; they are the answer values the script sees. */
export const APPROVAL_LABELS = { approve: 'Approve', reject: 'Reject', always: 'Always approve' } as const
/** Labels `--plan` uses. */
export const PLAN_LABELS = { approve: 'Approve', decline: 'Request changes' } as const

export type AskKind = 'questions' | 'approval' | 'plan-review'

/** A parsed `askbridge ask` command line. */
export interface AskCommand {
  kind: AskKind
  question: AskUserQuestionItem
  timeoutMs?: number
  route?: string
  agentId?: string
  callId?: string
  json: boolean
  url?: string
}

export const ASK_USAGE = `usage: askbridge ask --question TEXT [options]

  --question TEXT        the question (required)
  --option LABEL         an option; repeat for more (none: free-text answer)
  --multi                several options may be chosen
  --detail TEXT|@FILE|-  supporting markdown (from a file with @, from stdin with -)
  --header TEXT          a short heading
  --approval             an approval: options become ${APPROVAL_LABELS.approve} / ${APPROVAL_LABELS.reject}
  --always               with --approval, also offer "${APPROVAL_LABELS.always}"
  --plan @FILE           a plan review: the file is the plan; options ${PLAN_LABELS.approve} / ${PLAN_LABELS.decline}
  --timeout 90s|5m|1h    stop waiting after this long (exit 3, still answerable)
  --route NAME           an explicit route from the routes file
  --agent ID             the asking agent's id (default: "default")
  --call-id ID           a call id to re-attach to, or to name this call
  --id ID                the question id (default: "q1")
  --url URL              the bridge (default: ASKBRIDGE_URL or http://127.0.0.1:8787)
  --json                 print the answer (or the pending result) as JSON

exit codes: 0 answered (approval: approved), 4 rejected approval or declined plan,
            3 pending (timed out, still answerable), 2 usage error, 1 other error`

/** Where `-` and `@file` read from; injectable for tests. */
export interface ArgIo {
  readFile(path: string): string
  readStdin(): string
}

const defaultIo: ArgIo = {
  readFile: (path) => readFileSync(path, 'utf8'),
  readStdin: () => readFileSync(0, 'utf8'),
}

function readSource(value: string, flag: string, io: ArgIo): string {
  try {
    if (value === '-') return io.readStdin()
    if (value.startsWith('@')) return io.readFile(value.slice(1))
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${value}: ${(error as Error).message}`)
  }
  return value
}

/** Parse `askbridge ask` arguments into a question. Throws UsageError. */
export function parseAskArgs(argv: string[], io: ArgIo = defaultIo): AskCommand {
  let values: ReturnType<typeof parse>['values']
  try {
    values = parse(argv).values
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const question = values.question?.trim()
  const plan = values.plan
  if (!question && plan === undefined) throw new UsageError('--question is required')
  if (values.approval && plan !== undefined) throw new UsageError('--approval and --plan cannot be combined')
  if (values.always && !values.approval) throw new UsageError('--always needs --approval')
  const options = values.option ?? []
  if ((values.approval || plan !== undefined) && options.length > 0) {
    throw new UsageError('--option cannot be used with --approval or --plan: their options are fixed')
  }
  if ((values.approval || plan !== undefined) && values.multi) {
    throw new UsageError('--multi cannot be used with --approval or --plan')
  }
  if (values.multi && options.length === 0) throw new UsageError('--multi needs at least one --option')

  const id = values.id ?? 'q1'
  const item: AskUserQuestionItem = { id, question: question || 'Review this plan' }
  if (values.header !== undefined) item.header = values.header
  let detail = values.detail === undefined ? undefined : readSource(values.detail, '--detail', io)
  let kind: AskKind = 'questions'

  if (plan !== undefined) {
    if (!plan.startsWith('@') && plan !== '-') throw new UsageError('--plan takes @FILE (or - for stdin)')
    const text = readSource(plan, '--plan', io)
    if (text.trim() === '') throw new UsageError('--plan: the plan is empty')
    // The plan is the detail; any --detail goes above it.
    detail = detail === undefined ? text : `${detail}\n\n${text}`
    item.options = [{ label: PLAN_LABELS.approve }, { label: PLAN_LABELS.decline }]
    item.intent = { kind: 'plan-review', approve: PLAN_LABELS.approve }
    kind = 'plan-review'
  } else if (values.approval) {
    const labels = [
      APPROVAL_LABELS.approve,
      APPROVAL_LABELS.reject,
      ...(values.always ? [APPROVAL_LABELS.always] : []),
    ]
    item.options = labels.map((label) => ({ label }))
    item.intent = {
      kind: 'approval',
      approve: APPROVAL_LABELS.approve,
      reject: APPROVAL_LABELS.reject,
      ...(values.always ? { always: APPROVAL_LABELS.always } : {}),
    }
    // The protocol allows an intent only with detail; the question itself is a fine default.
    if (detail === undefined || detail.trim() === '') detail = item.question
    kind = 'approval'
  } else if (options.length > 0) {
    item.options = options.map((label) => ({ label }))
  }
  if (values.multi) item.multiSelect = true
  if (detail !== undefined) item.detail = detail

  const cmd: AskCommand = { kind, question: item, json: values.json ?? false }
  if (values.timeout !== undefined) {
    const ms = parseDuration(values.timeout)
    if (ms === undefined)
      throw new UsageError(`--timeout: "${values.timeout}" is not a duration like 90s, 5m or 1h`)
    if (kind === 'approval') {
      throw new UsageError(
        '--timeout cannot be used with --approval: an approval waits until someone decides (limit the job instead)',
      )
    }
    cmd.timeoutMs = ms
  }
  if (values.route !== undefined) cmd.route = values.route
  if (values.agent !== undefined) cmd.agentId = values.agent
  if (values['call-id'] !== undefined) cmd.callId = values['call-id']
  if (values.url !== undefined) cmd.url = values.url
  return cmd
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      question: { type: 'string', short: 'q' },
      option: { type: 'string', short: 'o', multiple: true },
      multi: { type: 'boolean' },
      detail: { type: 'string', short: 'd' },
      header: { type: 'string' },
      approval: { type: 'boolean' },
      always: { type: 'boolean' },
      plan: { type: 'string' },
      timeout: { type: 'string', short: 't' },
      route: { type: 'string' },
      agent: { type: 'string' },
      'call-id': { type: 'string' },
      id: { type: 'string' },
      url: { type: 'string' },
      json: { type: 'boolean' },
    },
  })
}
