/**
 * The inbox's settled list is paged: `GET /inbox/api/cards` gives every live card and the newest
 * finished ones; `?cursor=` (its `nextCursor`) gives the next, older page of finished cards only.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { WebCardList } from '../../adapters/web/client/types.js'
import { act, cardPosted, request, startBridge, type TestBridge } from './helpers.js'

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
let b: TestBridge
let live: Promise<unknown>

const list = async (query = ''): Promise<WebCardList> => {
  const r = await request(b.url, 'GET', `/inbox/api/cards${query}`)
  expect(r.status).toBe(200)
  return r.body as unknown as WebCardList
}

beforeAll(async () => {
  b = await startBridge()
  for (let i = 0; i < 5; i++) {
    const asking = request(b.url, 'POST', '/v1/ask', { callId: `done-${i}`, questions: [colour] })
    await cardPosted(b.url, `done-${i}`)
    await act(b.url, `done-${i}`, { type: 'choose', questionId: 'colour', label: 'Red' })
    await asking
  }
  live = request(b.url, 'POST', '/v1/ask', { callId: 'live-1', questions: [colour] })
  await cardPosted(b.url, 'live-1')
})

afterAll(async () => {
  await act(b.url, 'live-1', { type: 'choose', questionId: 'colour', label: 'Blue' })
  await live
  await b?.close()
})

test('pages of finished cards, newest first, each after the last; live cards on the first page only', async () => {
  const whole = await list('?limit=100')
  expect(whole.nextCursor).toBeUndefined()
  const finished = whole.cards.filter((c) => !c.live)
  expect(finished).toHaveLength(5)
  const times = finished.map((c) => c.answeredAt ?? c.createdAt)
  expect(times).toEqual([...times].sort((x, y) => y - x))

  const first = await list('?limit=2')
  expect(first.cards.filter((c) => c.live).map((c) => c.callId)).toEqual(['live-1'])
  const seen = first.cards.filter((c) => !c.live).map((c) => c.callId)
  expect(seen).toHaveLength(2)
  let cursor = first.nextCursor
  const pages = [seen.length]
  while (cursor !== undefined) {
    const page = await list(`?limit=2&cursor=${encodeURIComponent(cursor)}`)
    expect(page.cards.every((c) => !c.live)).toBe(true)
    seen.push(...page.cards.map((c) => c.callId))
    pages.push(page.cards.length)
    cursor = page.nextCursor
  }
  expect(pages).toEqual([2, 2, 1])
  expect(seen).toEqual(finished.map((c) => c.callId))
})

test('without ?limit= five finished cards fit the first page (30 by default): no cursor', async () => {
  const page = await list()
  expect(page.cards).toHaveLength(6)
  expect(page.nextCursor).toBeUndefined()
})

test('a bad limit or a cursor the inbox did not give out is a 400 BAD_REQUEST, not a crash', async () => {
  const forged = Buffer.from('{"t":"x"}').toString('base64url')
  for (const query of [
    '?limit=0',
    '?limit=101',
    '?limit=two',
    '?cursor=%25%25',
    `?cursor=${forged}`,
    '?cursor=e30',
  ]) {
    const r = await request(b.url, 'GET', `/inbox/api/cards${query}`)
    expect(r.status, query).toBe(400)
    expect(r.body.error).toMatchObject({ name: 'HttpError', code: 'BAD_REQUEST' })
  }
})
