import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { keyFor } from '../helpers/service.js'
import { act, request, startBridge, type TestBridge, until } from '../server/helpers.js'
import { ensureBuilt } from './built.js'
import { askbridge } from './run.js'

let b: TestBridge
let cwd: string
beforeAll(async () => {
  await ensureBuilt()
  b = await startBridge()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-cli-'))
}, 120_000)
afterAll(async () => {
  await b.close()
  rmSync(cwd, { recursive: true, force: true })
})

const run = (args: string[], stdin?: string) =>
  askbridge(['ask', ...args], {
    cwd,
    env: { ASKBRIDGE_URL: b.url },
    ...(stdin === undefined ? {} : { stdin }),
  })

/** The open card whose first question reads `text`, once the inbox shows it. */
function cardAsking(text: string) {
  return until(async () => {
    const cards = (await request(b.url, 'GET', '/inbox/api/cards')).body.cards ?? []
    return cards.find((c) => c.status === 'open' && c.questions[0]?.question === text)
  }, `card "${text}"`)
}

describe('askbridge ask', () => {
  test('--approval approved through the inbox: exit 0 with the approver named', async () => {
    const running = run([
      '--approval',
      '--question',
      'Deploy 4f2c1 to production?',
      '--detail',
      'Fixes login.',
    ])
    const card = await cardAsking('Deploy 4f2c1 to production?')
    expect(card.kind).toBe('approval')
    await act(b.url, card.callId, { type: 'approve' }, 'Grace Hopper')
    const r = await running
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('Approve\n')
    expect(r.stderr).toContain('approved by Grace Hopper')
  })

  test('--approval rejected: exit 4', async () => {
    const running = run(['--approval', '--always', '--question', 'Drop the staging database?'])
    const card = await cardAsking('Drop the staging database?')
    expect(card.questions[0]?.controls.map((c) => c.kind !== 'options' && c.label)).toContain(
      'Always approve',
    )
    await act(b.url, card.callId, { type: 'reject' }, 'Linus')
    const r = await running
    expect(r.code).toBe(4)
    expect(r.stderr).toContain('rejected by Linus')
  })

  test('--timeout with nobody answering: exit 3 and the callId on stdout, still answerable', async () => {
    const r = await run([
      '--question',
      'Which cache?',
      '--option',
      'Redis',
      '--option',
      'None',
      '--timeout',
      '1s',
    ])
    expect(r.code).toBe(3)
    const callId = r.stdout.trim()
    expect(callId).toMatch(/^cli-[0-9a-f-]{36}$/)
    expect(r.stderr).toContain('pending is not an answer')
    const view = await request(b.url, 'GET', `/v1/questions/${callId}`)
    expect(view.body.state).toBe('continued')
  })

  test('--json prints the answer; --multi with Other', async () => {
    const running = run([
      '--question',
      'Which regions?',
      '--option',
      'eu',
      '--option',
      'us',
      '--multi',
      '--json',
    ])
    const card = await cardAsking('Which regions?')
    await act(b.url, card.callId, { type: 'toggle', questionId: 'q1', label: 'us' })
    await act(b.url, card.callId, { type: 'other', questionId: 'q1', text: 'ap-south' })
    await act(b.url, card.callId, { type: 'submit' })
    const r = await running
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({
      answers: [{ id: 'q1', selected: ['us'], custom: 'ap-south' }],
      callId: card.callId,
      answeredBy: 'Ana',
    })
  })

  test('--json pending result', async () => {
    const r = await run(['--question', 'Pending as JSON?', '--timeout', '300ms', '--json'])
    expect(r.code).toBe(3)
    expect(JSON.parse(r.stdout)).toEqual({ pending: true, callId: expect.stringMatching(/^cli-/) })
  })

  test('--plan @file: the plan is the detail; declining with feedback exits 4', async () => {
    const plan = join(cwd, 'PLAN.md')
    writeFileSync(plan, '# Plan\n\n1. Add the index\n2. Backfill')
    const running = run(['--plan', `@${plan}`, '--question', 'Approve the migration plan?'])
    const card = await cardAsking('Approve the migration plan?')
    expect(card.kind).toBe('plan-review')
    expect(card.questions[0]?.detailHtml).toContain('<li>Backfill</li>')
    await act(b.url, card.callId, { type: 'decline', feedback: 'Add a rollback step' })
    const r = await running
    expect(r.code).toBe(4)
    expect(r.stdout).toBe('Add a rollback step\n')
    expect(r.stderr).toContain('declined')
  })

  test('--detail - reads stdin; a free-text answer prints the text', async () => {
    const running = run(['--question', 'Release notes title?', '--detail', '-'], 'Changes since **v1.2**')
    const card = await cardAsking('Release notes title?')
    expect(card.questions[0]?.detailHtml).toContain('<strong>v1.2</strong>')
    await act(b.url, card.callId, { type: 'other', questionId: 'q1', text: 'Faster caches' })
    const r = await running
    expect([r.code, r.stdout]).toEqual([0, 'Faster caches\n'])
  })

  test('usage errors exit 2', async () => {
    const none = await run([])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('--question is required')
    expect((await run(['--question', 'x', '--timeout', 'soon'])).code).toBe(2)
    expect((await run(['--question', 'x', '--bogus'])).code).toBe(2)
    expect((await run(['--approval', '--question', 'x', '--timeout', '5m'])).code).toBe(2)
  })

  test('the bridge restarts while a deploy gate waits: it re-attaches to the same card, then exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-cli-restart-'))
    let first: TestBridge | undefined = await startBridge({}, dir)
    let second: TestBridge | undefined
    try {
      const port = new URL(first.url).port
      const running = askbridge(
        ['ask', '--approval', '--question', 'Deploy during a restart?', '--call-id', 'gate-restart-1'],
        { cwd, env: { ASKBRIDGE_URL: first.url } },
      )
      await until(
        () => first?.bridge.service.inflight('default', 'gate-restart-1') !== undefined,
        'the gate waiting',
      )
      await first.close()
      first = undefined
      second = await startBridge({ ASKBRIDGE_PORT: port }, dir)
      const s = second
      await until(
        () => s.bridge.service.inflight('default', 'gate-restart-1') !== undefined,
        'the gate re-attached',
      )
      // The restarted inbox lists the card a moment after the ask re-attaches: act once it does.
      await until(async () => {
        const cards = (await request(s.url, 'GET', '/inbox/api/cards')).body.cards ?? []
        return cards.some((c) => c.callId === 'gate-restart-1')
      }, 'the card in the restarted inbox')
      await act(s.url, 'gate-restart-1', { type: 'approve' }, 'Margaret')
      const r = await running
      expect(r.stderr).toContain('the bridge is restarting; re-attaching to gate-restart-1')
      expect([r.code, r.stdout]).toEqual([0, 'Approve\n'])
      expect(r.stderr).toContain('approved by Margaret')
      expect(await s.bridge.store.listPosts(await keyFor(s.bridge.store, 'gate-restart-1'))).toHaveLength(1)
    } finally {
      await first?.close()
      await second?.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a production gate with quorum 2 names both approvers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-cli-quorum-'))
    const routes = join(dir, 'routes.json')
    writeFileSync(
      routes,
      JSON.stringify({
        routes: [{ name: 'prod', match: { route: 'prod' }, destinations: [{ platform: 'web' }], quorum: 2 }],
      }),
    )
    const q = await startBridge({ ASKBRIDGE_ROUTES: routes }, dir)
    try {
      const running = askbridge(
        ['ask', '--approval', '--route', 'prod', '--question', 'Deploy 9b1 to production?', '--json'],
        { cwd, env: { ASKBRIDGE_URL: q.url } },
      )
      const card = await until(async () => {
        const cards = (await request(q.url, 'GET', '/inbox/api/cards')).body.cards ?? []
        return cards.find((c) => c.status === 'open')
      }, 'the gate card')
      expect((await act(q.url, card.callId, { type: 'approve' }, 'Grace')).body.ok).toBe(true)
      expect((await act(q.url, card.callId, { type: 'approve' }, 'Linus')).body.ok).toBe(true)
      const r = await running
      expect(r.code).toBe(0)
      expect(r.stderr).toContain('approved by Grace and Linus')
      expect(JSON.parse(r.stdout)).toMatchObject({ approvedBy: ['Grace', 'Linus'] })
    } finally {
      await q.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('no bridge running: exit 1 with a clear message', async () => {
    const r = await askbridge(['ask', '--question', 'Anyone?'], {
      cwd,
      env: { ASKBRIDGE_URL: 'http://127.0.0.1:9' },
    })
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('cannot reach askbridge at http://127.0.0.1:9')
  })
})
