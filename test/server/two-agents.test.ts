import { expect, test } from 'vitest'
import { request, startBridge } from './helpers.js'

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const blue = [{ id: 'colour', selected: ['Blue'] }]

test('two agents with the same callId: ask, pending, answer, admit and cancel each touch only their own call; the ambiguous form gets 409', async () => {
  const b = await startBridge()
  try {
    const state = async (agentId: string) =>
      (await request(b.url, 'GET', `/v1/questions/toolu_1?agentId=${agentId}`)).body.state
    // Ask and pending: each agent gets its own continued call, with its card (a window that
    // closed before the answerers ran would post none).
    for (const agentId of ['alice', 'bob']) {
      const asked = await request(b.url, 'POST', '/v1/ask', {
        agentId,
        callId: 'toolu_1',
        timeoutMs: 1000,
        questions: [colour],
      })
      expect(asked.body).toEqual({ pending: true, callId: 'toolu_1' })
    }
    for (const agentId of ['alice', 'bob']) {
      const view = await request(b.url, 'GET', `/v1/questions?agentId=${agentId}`)
      expect(view.body.active).toEqual([{ callId: 'toolu_1', questions: [colour], state: 'continued' }])
    }

    // Without an agent the callId names two calls: 409 AMBIGUOUS_CALL, never a silent pick.
    for (const [method, path, body] of [
      ['GET', '/v1/questions/toolu_1', undefined],
      ['POST', '/v1/questions/toolu_1/answer', { answers: blue }],
      ['DELETE', '/v1/questions/toolu_1', undefined],
      [
        'POST',
        '/inbox/api/cards/toolu_1/actions',
        { action: { type: 'choose', questionId: 'colour', label: 'Red' } },
      ],
    ] as const) {
      const res = await request(b.url, method, path, body)
      expect(res.status, `${method} ${path}`).toBe(409)
      expect(res.body.error?.code).toBe('AMBIGUOUS_CALL')
    }
    expect(await state('alice')).toBe('continued')
    expect(await state('bob')).toBe('continued')

    // Answer alice's call: only alice gets a reply.
    const answered = await request(b.url, 'POST', '/v1/questions/toolu_1/answer', {
      agentId: 'alice',
      answers: blue,
    })
    expect(answered.body).toEqual({ accepted: true })
    const aliceReplies = (await request(b.url, 'GET', '/v1/agents/alice/replies')).body.replies
    expect(aliceReplies?.map((r) => r.payload.callId)).toEqual(['toolu_1'])
    expect((await request(b.url, 'GET', '/v1/agents/bob/replies')).body.replies).toEqual([])

    // Admit: alice's call settles; bob's stays continued, and bob has nothing to admit.
    expect((await request(b.url, 'POST', '/v1/agents/alice/replies/toolu_1/admit')).status).toBe(200)
    expect((await request(b.url, 'POST', '/v1/agents/bob/replies/toolu_1/admit')).status).toBe(404)
    expect(await state('alice')).toBe('settled')
    expect(await state('bob')).toBe('continued')
    expect((await request(b.url, 'GET', '/v1/questions?agentId=alice')).body).toEqual({
      active: [],
      settled: [{ callId: 'toolu_1', answers: blue }],
    })

    // Cancel bob's call by naming him; alice's settled call is untouched.
    const cancelled = await request(b.url, 'DELETE', '/v1/questions/toolu_1?agentId=bob')
    expect(cancelled.body).toEqual({ cancelled: true, callId: 'toolu_1', agentId: 'bob' })
    expect(await state('bob')).toBe('dropped')
    expect(await state('alice')).toBe('settled')
    expect((await request(b.url, 'GET', '/v1/questions?agentId=bob')).body).toEqual({
      active: [],
      settled: [],
    })

    // The audit trail is per agent too.
    const audit = await request(b.url, 'GET', '/v1/audit?callId=toolu_1&agentId=bob')
    const entries = audit.body.events as Array<{ agentId?: string }>
    expect(entries.length).toBeGreaterThan(0)
    expect(entries.every((e) => e.agentId === 'bob')).toBe(true)
  } finally {
    await b.close()
  }
})
