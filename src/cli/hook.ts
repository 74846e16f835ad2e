/**
 * `askbridge hook`: a Claude Code `command` hook. The hook's JSON arrives on stdin and goes to
 * the bridge's `POST /v1/hooks/claude-code` (the one code path the `http` hook uses too); the
 * bridge's answer is printed on stdout. Exit codes follow Claude Code's conventions
 * (https://code.claude.com/docs/en/hooks#exit-code-output): 0 with JSON on stdout is the answer
 * (`{}` is "no decision"); a problem exits 1, a non-blocking error, so Claude Code falls back to
 * its own prompt. askbridge never exits 2: an error must not deny anything.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { UserQuestionError } from '../protocol/errors.js'
import { type BridgeClient, BridgeError } from './client.js'
import { parseDuration } from './duration.js'
import { clientEnv, clientFromEnv, nonEmpty } from './env.js'

export const HOOK_USAGE = `usage: askbridge hook [--timeout 600s] [--route NAME] [--url URL]

A Claude Code command hook: reads the hook's JSON on stdin, asks people through a running
bridge, prints the hook's JSON answer on stdout.
  --timeout DURATION  the hook's own timeout (its "timeout" setting); the answer comes before it.
                      Default: ASKBRIDGE_HOOK_TIMEOUT or 55s. A bare number is seconds.
  --route NAME        an explicit route from the routes file
  --url URL           the bridge (default: ASKBRIDGE_URL or http://127.0.0.1:8787)

Exit codes: 0 the answer is on stdout ({} when nobody decided in time); 1 an error (stderr),
which Claude Code treats as "no decision".`

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

/** Run the command hook; resolves to the exit code. */
export async function runHook(argv: string[], io: HookIo): Promise<number> {
  let values: {
    timeout?: string | undefined
    route?: string | undefined
    url?: string | undefined
  }
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        timeout: { type: 'string' },
        route: { type: 'string' },
        url: { type: 'string' },
      },
      strict: true,
    }))
  } catch (error) {
    io.stderr(`askbridge hook: ${(error as Error).message}\n${HOOK_USAGE}\n`)
    return 1
  }
  const env = clientEnv(io.env)
  const timeoutText = values.timeout ?? nonEmpty(env.ASKBRIDGE_HOOK_TIMEOUT) ?? '55s'
  const timeoutMs = durationMs(timeoutText)
  if (timeoutMs === undefined || timeoutMs < 1000) {
    io.stderr(`askbridge hook: timeout "${timeoutText}" is not a duration (use 600, 90s, 10m)\n`)
    return 1
  }
  // The bridge's address is checked before stdin is read: a bad ASKBRIDGE_URL never waits on input.
  let client: BridgeClient
  try {
    client = clientFromEnv(io.env, values.url === undefined ? {} : { url: values.url })
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
  // The bridge answers before the timeout; this only guards against a bridge that went silent.
  const controller = new AbortController()
  const guard = setTimeout(() => controller.abort(), Math.max(1, timeoutMs - 250))
  try {
    const output = await client.hook(
      payload,
      { timeoutMs, ...(values.route ? { route: values.route } : {}) },
      controller.signal,
    )
    io.stdout(`${JSON.stringify(output)}\n`)
    return 0
  } catch (error) {
    if (controller.signal.aborted) {
      io.stdout('{}\n')
      return 0
    }
    const message =
      error instanceof BridgeError || error instanceof UserQuestionError
        ? `${error.code}: ${error.message}`
        : (error as Error).message
    io.stderr(`askbridge hook: ${message}\n`)
    return 1
  } finally {
    clearTimeout(guard)
  }
}
