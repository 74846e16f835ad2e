/**
 * `askbridge hook`: a Claude Code (or Codex) `command` hook. The hook's JSON arrives on stdin and
 * goes to the bridge's `POST /v1/hooks/claude-code` (the one code path the `http` hook uses too);
 * the bridge's answer is printed on stdout. Exit codes follow Claude Code's conventions
 * (https://code.claude.com/docs/en/hooks#exit-code-output): 0 with JSON on stdout is the answer.
 * A PreToolUse that gets no answer (the bridge is silent or unreachable, or refuses the request)
 * still answers on stdout and fails closed: "ask" (Codex: "deny"), never allow. Any other event
 * with a problem exits 1, a non-blocking error: Claude Code falls back to its own dialog.
 * askbridge never exits 2.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { HttpError } from '../errors.js'
import { HOOK_CLIENTS, type HookClient } from '../hooks/dialects.js'
import { noDecisionOutput } from '../hooks/output.js'
import { EXTRA_CHOICES, type ExtraChoice } from '../hooks/plan.js'
import { UserQuestionError } from '../protocol/errors.js'
import type { BridgeClient } from './client.js'
import { parseDuration } from './duration.js'
import { clientEnv, clientFromEnv, nonEmpty } from './env.js'

export const HOOK_USAGE = `usage: askbridge hook [--client claude-code|codex] [--timeout 600s] [--route NAME]
                     [--choices stop,edit] [--url URL]

A Claude Code or Codex command hook: reads the hook's JSON on stdin, asks people through a
running bridge, prints the hook's JSON answer on stdout.
  --client NAME       claude-code (default) or codex: the hook's dialect
  --timeout DURATION  the hook's own timeout (its "timeout" setting); the answer comes before it.
                      Default: ASKBRIDGE_HOOK_TIMEOUT or 600s. A bare number is seconds.
  --route NAME        an explicit route from the routes file
  --choices LIST      more reviewer choices: stop ("Reject and stop the agent"), edit ("Edit, then
                      allow" for a Bash command or an Edit's new text)
  --url URL           the bridge (default: ASKBRIDGE_URL or http://127.0.0.1:8787)

Exit codes: 0 the answer is on stdout ({} when nobody decided in time; a PreToolUse then answers
"ask", or "deny" with ASKBRIDGE_HOOK_TIMEOUT_DECISION=deny and always for Codex); 1 an error
(stderr), which Claude Code treats as "no decision".`

export interface HookIo {
  env: Record<string, string | undefined>
  stdout: (text: string) => void
  stderr: (text: string) => void
  readStdin?: () => string
}

function durationMs(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const t = text.trim()
  return /^\d+$/.test(t) ? Number(t) * 1000 : parseDuration(t)
}

/** What the command line and the environment ask of the hook, checked. */
interface HookOptions {
  client: HookClient
  choices: ExtraChoice[]
  timeoutMs: number
  timeoutDecision: 'ask' | 'deny'
  route?: string | undefined
  url?: string | undefined
}

/** Run the command hook; resolves to the exit code. */
export async function runHook(argv: string[], io: HookIo): Promise<number> {
  const options = hookOptions(argv, io)
  if (typeof options === 'number') return options
  // The bridge's address is checked before stdin is read: a bad ASKBRIDGE_URL never waits on input.
  let bridge: BridgeClient
  try {
    bridge = clientFromEnv(io.env, options.url === undefined ? {} : { url: options.url })
  } catch (error) {
    io.stderr(`askbridge hook: ${(error as Error).message}\n`)
    return 1
  }
  let payload: unknown
  try {
    payload = JSON.parse((io.readStdin ?? (() => readFileSync(0, 'utf8')))())
  } catch (error) {
    io.stderr(`askbridge hook: stdin is not the hook's JSON: ${(error as Error).message}\n`)
    return 1
  }
  return await askBridge(bridge, payload, options, io)
}

/** The hook's options, or the exit code (1) after saying what is wrong. */
function hookOptions(argv: string[], io: HookIo): HookOptions | number {
  let values: {
    timeout?: string | undefined
    route?: string | undefined
    url?: string | undefined
    client?: string | undefined
    choices?: string | undefined
  }
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        timeout: { type: 'string' },
        route: { type: 'string' },
        url: { type: 'string' },
        client: { type: 'string' },
        choices: { type: 'string' },
      },
      strict: true,
    }))
  } catch (error) {
    io.stderr(`askbridge hook: ${(error as Error).message}\n${HOOK_USAGE}\n`)
    return 1
  }
  const client = (values.client ?? 'claude-code') as HookClient
  if (!(HOOK_CLIENTS as readonly string[]).includes(client)) {
    io.stderr(`askbridge hook: --client must be one of ${HOOK_CLIENTS.join(', ')}\n`)
    return 1
  }
  const choices = (values.choices ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '')
  const badChoice = choices.find((c) => !(EXTRA_CHOICES as readonly string[]).includes(c))
  if (badChoice !== undefined) {
    io.stderr(`askbridge hook: --choices takes ${EXTRA_CHOICES.join(', ')} (got "${badChoice}")\n`)
    return 1
  }
  const env = clientEnv(io.env)
  const timeoutText = values.timeout ?? nonEmpty(env.ASKBRIDGE_HOOK_TIMEOUT) ?? '600s'
  const timeoutMs = durationMs(timeoutText)
  if (timeoutMs === undefined || timeoutMs < 1000) {
    io.stderr(`askbridge hook: timeout "${timeoutText}" is not a duration (use 600, 90s, 10m)\n`)
    return 1
  }
  const decisionText = nonEmpty(env.ASKBRIDGE_HOOK_TIMEOUT_DECISION) ?? 'ask'
  if (decisionText !== 'ask' && decisionText !== 'deny') {
    io.stderr(`askbridge hook: ASKBRIDGE_HOOK_TIMEOUT_DECISION must be ask or deny, got "${decisionText}"\n`)
    return 1
  }
  return {
    client,
    choices: choices as ExtraChoice[],
    timeoutMs,
    timeoutDecision: decisionText,
    route: values.route,
    url: values.url,
  }
}

/**
 * Hand the hook's payload to the bridge and print its output. A bridge that fails or goes silent
 * never lets a PreToolUse run: the output is then "no decision" (ask, or deny).
 */
async function askBridge(
  bridge: BridgeClient,
  payload: unknown,
  options: HookOptions,
  io: HookIo,
): Promise<number> {
  const { client, choices, timeoutMs } = options
  const event = (payload as { hook_event_name?: unknown } | null)?.hook_event_name
  const failClosed = (why: string) =>
    noDecisionOutput(event, client, { timeoutDecision: options.timeoutDecision }, why)
  // The bridge answers before the timeout; this only guards against a bridge that went silent.
  const controller = new AbortController()
  const guard = setTimeout(() => controller.abort(), Math.max(1, timeoutMs - 250))
  try {
    const output = await bridge.hook(
      payload,
      {
        timeoutMs,
        client,
        ...(choices.length > 0 ? { choices } : {}),
        ...(options.route ? { route: options.route } : {}),
      },
      controller.signal,
    )
    io.stdout(`${JSON.stringify(output)}\n`)
    return 0
  } catch (error) {
    if (controller.signal.aborted) {
      io.stdout(`${JSON.stringify(failClosed('The bridge did not answer in time'))}\n`)
      return 0
    }
    const message =
      error instanceof HttpError || error instanceof UserQuestionError
        ? `${error.code}: ${error.message}`
        : (error as Error).message
    io.stderr(`askbridge hook: ${message}\n`)
    // A PreToolUse must not run because askbridge failed: answer ask (or deny), never nothing.
    if (event === 'PreToolUse') {
      io.stdout(`${JSON.stringify(failClosed(`askbridge failed (${message})`))}\n`)
      return 0
    }
    return 1
  } finally {
    clearTimeout(guard)
  }
}
