/**
 * ASKBRIDGE_URL without a scheme is named as such by every command that talks to a bridge,
 * instead of "is askbridge serve running?". The check lives in the shared client, so a command
 * added later gets it too (any client command the top-level usage lists is tried).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { BridgeClient } from '../../src/cli/client.js'
import { HttpError } from '../../src/errors.js'
import { ensureBuilt } from './built.js'
import { runWithOpenStdin } from './open-stdin.js'

let cwd: string
beforeAll(async () => {
  await ensureBuilt()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-url-'))
}, 120_000)
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

const MESSAGE =
  'ASKBRIDGE_URL needs http:// or https:// (got "127.0.0.1:8790"); for example ASKBRIDGE_URL=http://127.0.0.1:8790'

test.each([
  ['ask', ['--question', 'Ship it?'], 2],
  ['mcp', [], 1],
  ['audit', [], 2],
] as const)('askbridge %s names ASKBRIDGE_URL and the fix', async (command, args, code) => {
  const r = await runWithOpenStdin([command, ...args], { cwd, env: { ASKBRIDGE_URL: '127.0.0.1:8790' } })
  expect(r.hung).toBe(false)
  expect(r.code).toBe(code)
  expect(r.stderr).toBe(`askbridge ${command}: ${MESSAGE}\n`)
  expect(r.stdout).toBe('')
})

test('every other client command listed in the usage names it too (hook, when it exists)', async () => {
  const top = await runWithOpenStdin(['--help'], { cwd })
  const others = [...top.stdout.matchAll(/^ {2}askbridge ([a-z]+)\s/gm)]
    .map((m) => m[1] as string)
    .filter((c) => !['serve', 'ask', 'mcp', 'audit'].includes(c))
  for (const command of others) {
    const r = await runWithOpenStdin([command], { cwd, env: { ASKBRIDGE_URL: '127.0.0.1:8790' } })
    expect({ command, hung: r.hung }).toEqual({ command, hung: false })
    expect(r.stderr).toContain(MESSAGE)
  }
})

test('a --url flag is named as the flag; a wrong scheme gets no made-up fix; credentials are not echoed', async () => {
  const flag = await runWithOpenStdin(['ask', '--question', 'Ship it?', '--url', 'localhost:8787'], { cwd })
  expect(flag.code).toBe(2)
  expect(flag.stderr).toBe(
    'askbridge ask: --url needs http:// or https:// (got "localhost:8787"); for example --url http://localhost:8787\n',
  )
  const ftp = await runWithOpenStdin(['audit'], { cwd, env: { ASKBRIDGE_URL: 'ftp://bridge.example' } })
  expect(ftp.stderr).toBe(
    'askbridge audit: ASKBRIDGE_URL needs http:// or https:// (got "ftp://bridge.example")\n',
  )
  const secret = await runWithOpenStdin(['audit'], { cwd, env: { ASKBRIDGE_URL: 'user:hunter22@bridge:80' } })
  expect(secret.stderr).toBe(
    'askbridge audit: ASKBRIDGE_URL needs http:// or https:// (got (a value with credentials, not shown))\n',
  )
})

test('the library client checks the same way', () => {
  expect(() => new BridgeClient({ url: '127.0.0.1:8790' })).toThrow(HttpError)
  expect(() => new BridgeClient({ url: '127.0.0.1:8790' })).toThrow(MESSAGE)
  expect(new BridgeClient({ url: 'https://bridge.example/' }).url).toBe('https://bridge.example')
})
