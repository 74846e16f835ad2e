import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { LateReply } from '../../src/protocol/types.js'
import { keyFor } from '../helpers/service.js'
import { act, cardPosted, request, startBridge, type TestBridge, until } from './helpers.js'

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const regions = {
  id: 'regions',
  question: 'Which regions?',
  multiSelect: true,
  options: [{ label: 'eu' }, { label: 'us' }, { label: 'ap' }],
}

let b: TestBridge
beforeAll(async () => {
  b = await startBridge()
})
afterAll(async () => {
  await b.close()
})

/** Read Server-Sent Events from a path until `count` events of `name` arrived. */
function readEvents(path: string, name: string, count: number) {
  const events: Array<{ event: string; id?: string; data: unknown }> = []
  let close: () => void = () => {}
  const done = new Promise<typeof events>((resolve, reject) => {
    const req = httpRequest(`${b.url}${path}`, { headers: { accept: 'text/event-stream' } }, (res) => {
      let buffer = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buffer += chunk
        let at = buffer.indexOf('\n\n')
        while (at >= 0) {
          const block = buffer.slice(0, at)
          buffer = buffer.slice(at + 2)
          at = buffer.indexOf('\n\n')
          const fields: Record<string, string> = {}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue
            const i = line.indexOf(':')
            fields[line.slice(0, i)] = line.slice(i + 1).trimStart()
          }
          if (!fields.event) continue
          events.push({
            event: fields.event,
            ...(fields.id ? { id: fields.id } : {}),
            data: JSON.parse(fields.data ?? 'null'),
          })
          if (events.filter((e) => e.event === name).length >= count) {
            req.destroy()
            resolve(events)
          }
        }
      })
      res.on('error', () => {})
    })
    req.on('error', (e) => {
      if (events.filter((x) => x.event === name).length < count) reject(e)
    })
    close = () => req.destroy()
    req.end()
  })
  return { done, close: () => close() }
}

describe('POST /v1/ask', () => {
  test('blocking: waits until answered, returns the answers and the callId', async () => {
    const asking = request(b.url, 'POST', '/v1/ask', { callId: 'blk-1', questions: [colour] })
    await cardPosted(b.url, 'blk-1')
    await act(b.url, 'blk-1', { type: 'choose', questionId: 'colour', label: 'Red' })
    const res = await asking
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }], callId: 'blk-1' })
  })

  test('generates a callId when absent and always returns it', async () => {
    const asking = request(b.url, 'POST', '/v1/ask', { questions: [colour], agentId: 'gen-agent' })
    const card = await until(async () => {
      const r = await request(b.url, 'GET', '/inbox/api/cards')
      return r.body.cards?.find((c) => c.agentId === 'gen-agent' && c.status === 'open')
    }, 'generated card')
    expect(card.callId).toMatch(/^[A-Za-z0-9_.:-]{1,64}$/)
    await act(b.url, card.callId, { type: 'other', questionId: 'colour', text: 'Teal' })
    const res = await asking
    expect(res.body).toEqual({
      answers: [{ id: 'colour', selected: [], custom: 'Teal' }],
      callId: card.callId,
    })
  })

  test('timed: answered inside the window returns the batch', async () => {
    const asking = request(b.url, 'POST', '/v1/ask', {
      callId: 'tmd-in',
      agentId: 'tmd',
      timeoutMs: 60_000,
      questions: [colour, regions],
    })
    await cardPosted(b.url, 'tmd-in')
    await act(b.url, 'tmd-in', { type: 'choose', questionId: 'colour', label: 'Blue' })
    await act(b.url, 'tmd-in', { type: 'toggle', questionId: 'regions', label: 'us' })
    await act(b.url, 'tmd-in', { type: 'toggle', questionId: 'regions', label: 'eu' })
    await act(b.url, 'tmd-in', { type: 'submit' })
    const res = await asking
    expect(res.body).toEqual({
      answers: [
        { id: 'colour', selected: ['Blue'] },
        { id: 'regions', selected: ['eu', 'us'] },
      ],
      callId: 'tmd-in',
    })
    const projection = await request(b.url, 'GET', '/v1/questions?agentId=tmd')
    expect(projection.body.settled).toEqual([{ callId: 'tmd-in', answers: res.body.answers }])
  })

  test('GET /v1/questions pages the settled list: ?limit= and the nextCursor it returns', async () => {
    const store = b.bridge.store
    const keys = Array.from({ length: 5 }, (_, i) => ({ agentId: 'pager', callId: `page-${i}` }))
    for (const k of keys) {
      await store.append({
        type: 'asked',
        ...k,
        questions: [colour],
        timed: true,
        deadline: Date.now() + 60_000,
      })
      await store.append({ type: 'answered', ...k, answers: [{ id: 'colour', selected: ['Red'] }] })
    }
    const seen: string[] = []
    let path = '/v1/questions?agentId=pager&limit=2'
    for (let page = 0; page < 5; page++) {
      const res = await request(b.url, 'GET', path)
      expect(res.status).toBe(200)
      const settled = (res.body.settled ?? []) as Array<{ callId: string }>
      expect(settled.length).toBeLessThanOrEqual(2)
      seen.push(...settled.map((c) => c.callId))
      if (!res.body.nextCursor) break
      path = `/v1/questions?agentId=pager&limit=2&cursor=${res.body.nextCursor}`
    }
    expect(seen).toEqual(keys.map((k) => k.callId))
    for (const bad of ['limit=0', 'limit=1001', 'limit=two', 'cursor=nope!', 'cursor=czEyYQ']) {
      const res = await request(b.url, 'GET', `/v1/questions?${bad}`)
      expect(res.status, bad).toBe(400)
      expect(res.body.error?.code).toBe('BAD_REQUEST')
    }
  })

  test('re-attach: the same agentId and callId waits on the same card (no second message)', async () => {
    const body = { callId: 'again-1', agentId: 'reattach', questions: [colour] }
    const first = request(b.url, 'POST', '/v1/ask', body)
    await cardPosted(b.url, 'again-1')
    const second = request(b.url, 'POST', '/v1/ask', body)
    // The second request is parked on the same flight before anyone answers.
    await until(async () => {
      const m = await request(b.url, 'GET', '/metrics')
      const waiting = /askbridge_http_waiting (\d+)/.exec(m.text)
      return Number(waiting?.[1]) >= 2
    }, 'two waiting requests')
    await act(b.url, 'again-1', { type: 'choose', questionId: 'colour', label: 'Blue' })
    const [a, c] = await Promise.all([first, second])
    expect(a.body).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }], callId: 'again-1' })
    expect(c.body).toEqual(a.body)
    expect(await b.bridge.store.listPosts(await keyFor(b.bridge.store, 'again-1'))).toHaveLength(1)
  })

  test('a client that disconnects does not cancel: the same callId re-attaches and gets the answer', async () => {
    const controller = new AbortController()
    const gone = fetch(`${b.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callId: 'left-1', questions: [colour] }),
      signal: controller.signal,
    }).catch((e: unknown) => e)
    await cardPosted(b.url, 'left-1')
    controller.abort()
    await gone
    const view = await request(b.url, 'GET', '/v1/questions/left-1')
    expect(view.body.state).toBe('open')
    const again = request(b.url, 'POST', '/v1/ask', { callId: 'left-1', questions: [colour] })
    await until(async () => {
      const m = await request(b.url, 'GET', '/metrics')
      return Number(/askbridge_http_waiting (\d+)/.exec(m.text)?.[1]) >= 1
    }, 'second ask waiting')
    await act(b.url, 'left-1', { type: 'choose', questionId: 'colour', label: 'Red' })
    expect((await again).body).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }], callId: 'left-1' })
    expect(await b.bridge.store.listPosts(await keyFor(b.bridge.store, 'left-1'))).toHaveLength(1)
  })
})

test('answered while nobody waited: asking again with the callId returns that answer at once', async () => {
  const controller = new AbortController()
  const gone = fetch(`${b.url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId: 'left-2', questions: [colour] }),
    signal: controller.signal,
  }).catch((e: unknown) => e)
  await cardPosted(b.url, 'left-2')
  controller.abort()
  await gone
  await act(b.url, 'left-2', { type: 'choose', questionId: 'colour', label: 'Blue' })
  await until(
    async () => (await request(b.url, 'GET', '/v1/questions/left-2')).body.state === 'settled',
    'settled',
  )
  const again = await request(b.url, 'POST', '/v1/ask', { callId: 'left-2', questions: [colour] })
  expect(again.body).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }], callId: 'left-2' })
  expect(await b.bridge.store.listPosts(await keyFor(b.bridge.store, 'left-2'))).toHaveLength(1)
})

describe('late replies', () => {
  test('timed pending -> continued -> late answer over SSE -> admit settles it', async () => {
    const agent = 'late-sse'
    const res = await request(b.url, 'POST', '/v1/ask', {
      callId: 'late-1',
      agentId: agent,
      // Long enough for the card to be posted: a window that closed first would post none.
      timeoutMs: 1000,
      questions: [colour],
    })
    expect(res.body).toEqual({ pending: true, callId: 'late-1' })
    let projection = await request(b.url, 'GET', `/v1/questions?agentId=${agent}`)
    expect(projection.body.active).toEqual([{ callId: 'late-1', questions: [colour], state: 'continued' }])

    const before = b.bridge.service.listenerCount('reply')
    const sse = readEvents(`/v1/agents/${agent}/replies`, 'reply', 1)
    await until(() => b.bridge.service.listenerCount('reply') > before, 'SSE listening')
    await cardPosted(b.url, 'late-1')
    await act(b.url, 'late-1', { type: 'choose', questionId: 'colour', label: 'Blue' })
    const events = await sse.done
    const reply = events.find((e) => e.event === 'reply')
    expect(reply?.id).toBe('late-1')
    expect(reply?.data).toEqual({
      source: 'user-question-reply',
      outcome: 'answered',
      payload: {
        kind: 'answer_to_pending_question',
        tool: 'ask_user_question',
        callId: 'late-1',
        questions: [colour],
        answers: [{ id: 'colour', selected: ['Blue'] }],
      },
    } satisfies LateReply)

    const admitted = await request(b.url, 'POST', `/v1/agents/${agent}/replies/late-1/admit`, {})
    expect(admitted.body).toEqual({ admitted: true, callId: 'late-1' })
    projection = await request(b.url, 'GET', `/v1/questions?agentId=${agent}`)
    expect(projection.body).toEqual({
      active: [],
      settled: [{ callId: 'late-1', answers: [{ id: 'colour', selected: ['Blue'] }] }],
    })
    expect((await request(b.url, 'GET', `/v1/agents/${agent}/replies`)).body).toEqual({ replies: [] })
  })

  test('SSE sends replies already queued when it connects', async () => {
    const agent = 'late-queued'
    await request(b.url, 'POST', '/v1/ask', {
      callId: 'q-1',
      agentId: agent,
      timeoutMs: 30,
      questions: [colour],
    })
    const answer = await request(b.url, 'POST', '/v1/questions/q-1/answer', {
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
    expect(answer.body).toEqual({ accepted: true })
    const sse = readEvents(`/v1/agents/${agent}/replies`, 'reply', 1)
    const events = await sse.done
    expect(events.filter((e) => e.event === 'reply').map((e) => e.id)).toEqual(['q-1'])
  })

  test('long-poll: ?wait= returns as soon as a reply is queued; discard makes it answerable again', async () => {
    const agent = 'late-poll'
    await request(b.url, 'POST', '/v1/ask', {
      callId: 'p-1',
      agentId: agent,
      timeoutMs: 1000, // the card is clicked below
      questions: [colour],
    })
    const empty = await request(b.url, 'GET', `/v1/agents/${agent}/replies`)
    expect(empty.body).toEqual({ replies: [] })
    const before = b.bridge.service.listenerCount('reply')
    const polling = request(b.url, 'GET', `/v1/agents/${agent}/replies?wait=30`)
    await until(() => b.bridge.service.listenerCount('reply') > before, 'long-poll listening')
    await act(b.url, 'p-1', { type: 'choose', questionId: 'colour', label: 'Red' })
    const polled = await polling
    expect(polled.status).toBe(200)
    expect(polled.body.replies?.map((r) => r.payload.answers)).toEqual([
      [{ id: 'colour', selected: ['Red'] }],
    ])

    // A second answer while one is queued: 409 REPLY_QUEUED.
    const conflict = await request(b.url, 'POST', '/v1/questions/p-1/answer', {
      answers: [{ id: 'colour', selected: ['Blue'] }],
      agentId: agent,
    })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toMatchObject({ name: 'UserQuestionError', code: 'REPLY_QUEUED' })

    const discarded = await request(b.url, 'DELETE', `/v1/agents/${agent}/replies/p-1`)
    expect(discarded.body).toEqual({ discarded: true, callId: 'p-1' })
    const active = await request(b.url, 'GET', `/v1/questions?agentId=${agent}`)
    expect(active.body.active?.map((q) => [q.callId, q.state])).toEqual([['p-1', 'continued']])
    const again = await request(b.url, 'POST', '/v1/questions/p-1/answer', {
      answers: [{ id: 'colour', selected: ['Blue'] }],
      agentId: agent,
    })
    expect(again.body).toEqual({ accepted: true })
    const replies = await request(b.url, 'GET', `/v1/agents/${agent}/replies`)
    expect(replies.body.replies?.[0]?.payload.answers).toEqual([{ id: 'colour', selected: ['Blue'] }])
  })

  test('long-poll with nothing to deliver returns an empty list when the wait ends', async () => {
    const res = await request(b.url, 'GET', '/v1/agents/nobody/replies?wait=0.05')
    expect(res.body).toEqual({ replies: [] })
  })

  test('answer: accepted false for an open or unknown call; 400 BAD_ANSWER for a bad batch', async () => {
    expect((await request(b.url, 'POST', '/v1/questions/nope/answer', { answers: [] })).body).toEqual({
      accepted: false,
    })
    const asking = request(b.url, 'POST', '/v1/ask', { callId: 'open-ans', questions: [colour] })
    await cardPosted(b.url, 'open-ans')
    const open = await request(b.url, 'POST', '/v1/questions/open-ans/answer', {
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
    expect(open.body).toEqual({ accepted: false })
    await act(b.url, 'open-ans', { type: 'choose', questionId: 'colour', label: 'Red' })
    await asking

    await request(b.url, 'POST', '/v1/ask', {
      callId: 'bad-ans',
      agentId: 'ba',
      timeoutMs: 20,
      questions: [colour],
    })
    const bad = await request(b.url, 'POST', '/v1/questions/bad-ans/answer', {
      answers: [{ id: 'colour', selected: ['Purple'] }],
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ name: 'UserQuestionError', code: 'BAD_ANSWER' })
  })

  test('admit and discard of an unknown reply: 404', async () => {
    const admit = await request(b.url, 'POST', '/v1/agents/x/replies/none/admit')
    expect(admit.status).toBe(404)
    expect(admit.body.error).toMatchObject({ name: 'HttpError', code: 'NOT_FOUND' })
    const discard = await request(b.url, 'DELETE', '/v1/agents/x/replies/none')
    expect(discard.status).toBe(404)
  })
})

describe('questions', () => {
  test('GET /v1/questions/:callId shows state, posts, the answer and who answered', async () => {
    const asking = request(b.url, 'POST', '/v1/ask', {
      callId: 'view-1',
      agentId: 'viewer',
      questions: [colour],
    })
    await cardPosted(b.url, 'view-1')
    const open = await request(b.url, 'GET', '/v1/questions/view-1')
    expect(open.body).toMatchObject({
      callId: 'view-1',
      agentId: 'viewer',
      state: 'open',
      timed: false,
      questions: [colour],
      posts: [{ platform: 'web', destination: 'web::' }],
    })
    await act(b.url, 'view-1', { type: 'choose', questionId: 'colour', label: 'Red' }, 'Grace')
    await asking
    const settled = await request(b.url, 'GET', '/v1/questions/view-1')
    expect(settled.body).toMatchObject({
      state: 'settled',
      answers: [{ id: 'colour', selected: ['Red'] }],
      answeredBy: { platform: 'web', name: 'Grace' },
      card: { status: 'answered' },
    })
  })

  test('GET /v1/questions/:callId of an unknown call: 404', async () => {
    const res = await request(b.url, 'GET', '/v1/questions/unknown-call')
    expect(res.status).toBe(404)
    expect(res.body.error).toEqual({ name: 'HttpError', code: 'NOT_FOUND', message: expect.any(String) })
  })

  test('DELETE cancels: the waiting ask fails with 410 ASK_CANCELLED and the card says so', async () => {
    const asking = request(b.url, 'POST', '/v1/ask', { callId: 'cx-1', questions: [colour] })
    await cardPosted(b.url, 'cx-1')
    const del = await request(b.url, 'DELETE', '/v1/questions/cx-1')
    expect(del.body).toEqual({ cancelled: true, callId: 'cx-1', agentId: 'default' })
    const res = await asking
    expect(res.status).toBe(410)
    expect(res.body.error).toMatchObject({ name: 'UserQuestionError', code: 'ASK_CANCELLED' })
    await until(async () => {
      const cards = (await request(b.url, 'GET', '/inbox/api/cards')).body.cards
      return cards?.find((c) => c.callId === 'cx-1' && c.status === 'cancelled')
    }, 'cancelled card')
    const again = await request(b.url, 'DELETE', '/v1/questions/cx-1')
    expect(again.status).toBe(409)
    expect((await request(b.url, 'DELETE', '/v1/questions/never-asked')).status).toBe(404)
  })

  test('DELETE of a continued call stops it being answerable', async () => {
    await request(b.url, 'POST', '/v1/ask', {
      callId: 'cx-2',
      agentId: 'cx',
      timeoutMs: 20,
      questions: [colour],
    })
    expect((await request(b.url, 'DELETE', '/v1/questions/cx-2')).status).toBe(200)
    const projection = await request(b.url, 'GET', '/v1/questions?agentId=cx')
    expect(projection.body).toEqual({ active: [], settled: [] })
  })
})

describe('health and metrics', () => {
  test('GET /healthz', async () => {
    const res = await request(b.url, 'GET', '/healthz')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true })
  })

  test('GET /metrics is Prometheus text', async () => {
    const res = await request(b.url, 'GET', '/metrics')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    expect(res.text).toContain('# TYPE askbridge_http_requests_total counter')
    expect(res.text).toMatch(
      /askbridge_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/,
    )
    expect(res.text).toContain('# TYPE askbridge_questions_active gauge')
    expect(res.text).toMatch(/askbridge_calls_total\{event="answered"\} \d+/)
  })

  test('GET /v1/audit lists what happened to a call', async () => {
    const res = await request(b.url, 'GET', '/v1/audit?callId=blk-1')
    expect(res.status).toBe(200)
    const kinds = (res.body.events as Array<{ kind: string }>).map((e) => e.kind)
    expect(kinds).toEqual(expect.arrayContaining(['asked', 'interaction', 'completed']))
  })
})
