import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { askbridge } from '../cli/run.js'

const FIXTURES = join(import.meta.dirname, '../fixtures/claude-code')

/** A recorded Claude Code hook payload from test/fixtures/claude-code (see its README). */
export const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as Record<string, unknown>

export interface HookRun {
  status: number
  body: unknown
}

/** The HTTP hook, as Claude Code's `http` hook posts it. */
export async function httpHook(bridgeUrl: string, payload: unknown, query = 'timeout=60'): Promise<HookRun> {
  const res = await fetch(`${bridgeUrl}/v1/hooks/claude-code?${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  })
  return { status: res.status, body: await res.json() }
}

/** The command hook (the built CLI), as Claude Code runs it: JSON on stdin, JSON on stdout, an exit code. */
export async function commandHook(
  bridgeUrl: string,
  cwd: string,
  payload: unknown,
  args: string[] = ['--timeout', '60'],
): Promise<{ code: number | null; stderr: string; body: unknown }> {
  const run = await askbridge(['hook', ...args], {
    cwd,
    env: { ASKBRIDGE_URL: bridgeUrl },
    stdin: typeof payload === 'string' ? payload : JSON.stringify(payload),
  })
  return {
    code: run.code,
    stderr: run.stderr,
    body: run.stdout.trim() === '' ? undefined : JSON.parse(run.stdout),
  }
}
