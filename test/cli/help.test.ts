/**
 * `--help` for every command prints that command's usage and exits 0 at once: it never reads
 * stdin, opens a socket or checks configuration. The commands are read from the top-level usage,
 * so a command added later is covered without touching this file.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ensureBuilt } from './built.js'
import { runWithOpenStdin } from './open-stdin.js'

let cwd: string
let commands: string[]
beforeAll(async () => {
  await ensureBuilt()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-help-'))
  const top = await runWithOpenStdin(['--help'], { cwd })
  expect(top.code).toBe(0)
  commands = [...top.stdout.matchAll(/^ {2}askbridge ([a-z]+)\s/gm)].map((m) => m[1] as string)
}, 120_000)
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

test('the top-level usage lists every command', () => {
  expect(commands).toEqual(expect.arrayContaining(['serve', 'ask', 'mcp', 'audit']))
})

describe.each(['--help', '-h'])('askbridge COMMAND %s', (flag) => {
  test('prints the usage and exits 0 with stdin left open, for every command', async () => {
    for (const command of commands) {
      // A bad configuration must not stand in the way of the help text either.
      const r = await runWithOpenStdin([command, flag], {
        cwd,
        env: { ASKBRIDGE_URL: '127.0.0.1:8790', ASKBRIDGE_PORT: 'eighty', SLACK_BOT_TOKEN: 'nope' },
      })
      expect({ command, hung: r.hung, code: r.code, stderr: r.stderr }).toEqual({
        command,
        hung: false,
        code: 0,
        stderr: '',
      })
      expect(r.stdout).toMatch(new RegExp(`^usage: askbridge ${command}`))
    }
  })
})

test('help after other arguments, and `askbridge help COMMAND`', async () => {
  const late = await runWithOpenStdin(['ask', '--question', 'Ship?', '--help'], { cwd })
  expect(late.code).toBe(0)
  expect(late.stdout).toMatch(/^usage: askbridge ask/)
  const topic = await runWithOpenStdin(['help', 'mcp'], { cwd })
  expect(topic.code).toBe(0)
  expect(topic.stdout).toMatch(/^usage: askbridge mcp/)
})

test('mcp takes no arguments: anything else is a usage error, not a silent wait on stdin', async () => {
  const r = await runWithOpenStdin(['mcp', '--verbose'], { cwd })
  expect(r.hung).toBe(false)
  expect(r.code).toBe(2)
  expect(r.stderr).toBe(
    'askbridge mcp: unexpected argument "--verbose"; configure with environment variables\n',
  )
})
