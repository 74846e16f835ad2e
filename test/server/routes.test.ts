import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { act, cardPosted, request, startBridge, type TestBridge } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'askbridge-routes-'))
let b: TestBridge

beforeAll(async () => {
  const routes = join(dir, 'routes.json')
  writeFileSync(
    routes,
    JSON.stringify({
      routes: [
        {
          name: 'prod-approvals',
          match: { intent: 'approval', header: 'Prod*' },
          destinations: [{ platform: 'web' }],
          quorum: 2,
        },
      ],
    }),
  )
  b = await startBridge({ ASKBRIDGE_ROUTES: routes })
})
afterAll(async () => {
  await b.close()
  rmSync(dir, { recursive: true, force: true })
})

test('ASKBRIDGE_ROUTES is loaded: a production approval needs two distinct approvers', async () => {
  const asking = request(b.url, 'POST', '/v1/ask', {
    callId: 'prod-1',
    questions: [
      {
        id: 'deploy',
        header: 'Production',
        question: 'Deploy 4f2c1?',
        detail: 'Release 1.4',
        options: [{ label: 'Approve' }, { label: 'Reject' }],
        intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
      },
    ],
  })
  const card = await cardPosted(b.url, 'prod-1')
  expect(card.quorum).toBe(2)
  const first = await act(b.url, 'prod-1', { type: 'approve' }, 'Ana')
  expect(first.body).toMatchObject({ ok: true, message: 'Approval recorded: 1 of 2.' })
  const again = await act(b.url, 'prod-1', { type: 'approve' }, 'Ana')
  expect(again.body.ok).toBe(false)
  await act(b.url, 'prod-1', { type: 'approve' }, 'Bob')
  expect((await asking).body.answers).toEqual([{ id: 'deploy', selected: ['Approve'] }])
  const view = await request(b.url, 'GET', '/v1/questions/prod-1')
  expect(view.body.card).toMatchObject({ route: 'prod-approvals', quorum: 2 })
})

test('a bad routes file stops the start with every problem named', async () => {
  const bad = join(dir, 'bad.json')
  writeFileSync(
    bad,
    JSON.stringify({ routes: [{ name: 'x', destinations: [{ platform: 'msn' }], quorum: 0 }] }),
  )
  await expect(startBridge({ ASKBRIDGE_ROUTES: bad }, mkdtempSync(join(dir, 'b-')))).rejects.toThrow(
    /bad\.json is invalid[\s\S]*platform[\s\S]*quorum/,
  )
})
