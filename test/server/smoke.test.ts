import { afterAll, beforeAll, expect, test } from 'vitest'
import { act, cardPosted, request, startBridge, type TestBridge } from './helpers.js'

let b: TestBridge
beforeAll(async () => {
  b = await startBridge()
})
afterAll(async () => {
  await b.close()
})

test('smoke: blocking ask answered in the inbox', async () => {
  const asking = request(b.url, 'POST', '/v1/ask', {
    callId: 'smoke-1',
    questions: [{ id: 'c', question: 'Colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }],
  })
  await cardPosted(b.url, 'smoke-1')
  const r = await act(b.url, 'smoke-1', { type: 'choose', questionId: 'c', label: 'Blue' })
  expect(r.body.ok).toBe(true)
  const res = await asking
  expect(res.status).toBe(200)
  expect(res.body).toEqual({ answers: [{ id: 'c', selected: ['Blue'] }], callId: 'smoke-1' })
})
