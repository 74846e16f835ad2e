import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { keyFor } from '../helpers/service.js'
import { act, cardPosted, request, startBridge, until } from './helpers.js'

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const dir = mkdtempSync(join(tmpdir(), 'askbridge-restart-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('graceful shutdown ends waiting asks with 503; after a restart the same callId re-attaches to the same card', async () => {
  const first = await startBridge({}, dir)
  const asking = request(first.url, 'POST', '/v1/ask', {
    callId: 'restart-1',
    agentId: 'ops',
    questions: [colour],
  })
  await cardPosted(first.url, 'restart-1')
  await first.close()
  const ended = await asking
  expect(ended.status).toBe(503)
  expect(ended.body.error).toMatchObject({ code: 'SHUTTING_DOWN' })
  expect(ended.body.error?.message).toContain('restart-1')

  const second = await startBridge({}, dir)
  try {
    // The card survived: the inbox still lists it as open.
    await cardPosted(second.url, 'restart-1')
    const again = request(second.url, 'POST', '/v1/ask', {
      callId: 'restart-1',
      agentId: 'ops',
      questions: [colour],
    })
    await until(() => second.bridge.service.inflight('ops', 'restart-1') !== undefined, 'the re-attached ask')
    await act(second.url, 'restart-1', { type: 'choose', questionId: 'colour', label: 'Blue' })
    expect((await again).body).toEqual({
      answers: [{ id: 'colour', selected: ['Blue'] }],
      callId: 'restart-1',
    })
    expect(await second.bridge.store.listPosts(await keyFor(second.bridge.store, 'restart-1'))).toHaveLength(
      1,
    )
  } finally {
    await second.close()
  }
})

test('a timed question open at shutdown comes back continued and its late answer reaches the agent', async () => {
  const first = await startBridge({}, dir)
  const asking = request(first.url, 'POST', '/v1/ask', {
    callId: 'restart-2',
    agentId: 'ops2',
    timeoutMs: 600_000,
    questions: [colour],
  })
  await cardPosted(first.url, 'restart-2')
  await first.close()
  expect((await asking).status).toBe(503)

  const second = await startBridge({}, dir)
  try {
    const projection = await request(second.url, 'GET', '/v1/questions?agentId=ops2')
    expect(projection.body.active).toEqual([{ callId: 'restart-2', questions: [colour], state: 'continued' }])
    await act(second.url, 'restart-2', { type: 'choose', questionId: 'colour', label: 'Red' })
    const replies = await until(async () => {
      const r = await request(second.url, 'GET', '/v1/agents/ops2/replies')
      return r.body.replies?.length ? r.body.replies : undefined
    }, 'late reply')
    expect(replies[0]?.payload).toMatchObject({
      callId: 'restart-2',
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
  } finally {
    await second.close()
  }
})
