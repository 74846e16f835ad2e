import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { act, cardPosted, request, startBridge, type TestBridge } from '../server/helpers.js'
import { ensureBuilt } from './built.js'
import { askbridge } from './run.js'

let b: TestBridge
let cwd: string
beforeAll(async () => {
  await ensureBuilt()
  b = await startBridge()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-audit-'))
}, 120_000)
afterAll(async () => {
  await b.close()
  rmSync(cwd, { recursive: true, force: true })
})

const audit = (args: string[]) => askbridge(['audit', ...args], { cwd, env: { ASKBRIDGE_URL: b.url } })
const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as unknown)

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }

/** Ask through the API and answer in the web inbox, so the call has an audit trail. */
async function answered(callId: string): Promise<void> {
  const asking = request(b.url, 'POST', '/v1/ask', { callId, questions: [colour] })
  await cardPosted(b.url, callId)
  await act(b.url, callId, { type: 'choose', questionId: 'colour', label: 'Blue' }, 'Grace')
  expect((await asking).body.answers).toEqual([{ id: 'colour', selected: ['Blue'] }])
}

describe('askbridge audit', () => {
  test('--call ID prints, as JSON lines, exactly the events GET /v1/audit?callId=ID returns', async () => {
    await answered('audit-1')
    await answered('audit-2')
    const api = await request(b.url, 'GET', '/v1/audit?callId=audit-1')
    const events = api.body.events as Array<{ kind: string; callId?: string }>
    expect(events.map((e) => e.kind)).toEqual(expect.arrayContaining(['asked', 'interaction', 'completed']))

    const r = await audit(['--call', 'audit-1'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(lines(r.stdout)).toEqual(events)
    expect(events.every((e) => e.callId === 'audit-1')).toBe(true)

    // The earlier name of the flag still works and gives the same lines.
    const alias = await audit(['--call-id', 'audit-1'])
    expect(alias.code).toBe(0)
    expect(alias.stdout).toBe(r.stdout)
  })

  test('no --call: every call; conflicting --call and --call-id: exit 2; --help names --call', async () => {
    const all = await audit([])
    expect(all.code).toBe(0)
    const api = await request(b.url, 'GET', '/v1/audit')
    expect(lines(all.stdout)).toEqual(api.body.events)

    const both = await audit(['--call', 'audit-1', '--call-id', 'audit-2'])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--call and --call-id')

    const help = await audit(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--call ID')
  })
})
