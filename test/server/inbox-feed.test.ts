/**
 * The inbox's settled list is paged: `GET /inbox/api/cards` gives every live card and the newest
 * finished ones; `?cursor=` (its `nextCursor`) gives the next, older page of finished cards only.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { WebCardList } from '../../adapters/web/client/types.js'
import { feedParams, settledPage } from '../../adapters/web/feed.js'
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

test('the settled list reads only the most recently written cards, however long the history', async () => {
  // Cards as the store gives them: finished at `t`, written then or later (a reason added, a
  // reply admitted: those come back to the top). The pager reads the newest written first, more
  // each round, and pages in that order.
  const cards = Array.from({ length: 500 }, (_, i) => {
    const t = 1_000 + i * 10
    const callId = `c${String(i).padStart(3, '0')}`
    // Some written again later, some at the same instant as another card (ties by key).
    const updatedAt = i % 7 === 0 ? 9_000 + i : i % 5 === 0 ? t - 10 : t
    return {
      agentId: 'a',
      callId,
      version: 1,
      updatedAt,
      state: { agentId: 'a', callId, status: 'answered', answeredAt: t },
    }
  })
  const key = (c: { agentId: string; callId: string }) => `${c.agentId}\u0000${c.callId}`
  const newestFirst = (x: (typeof cards)[number], y: (typeof cards)[number]) =>
    y.updatedAt - x.updatedAt || (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0)
  const byWritten = [...cards].sort(newestFirst)
  let read = 0
  const finished = async (n: number) => {
    read += Math.min(n, byWritten.length)
    return { cards: byWritten.slice(0, n) as never[], all: n >= byWritten.length }
  }
  // Every third card is not in the inbox.
  const inInbox = (c: { callId: string }) => Number(c.callId.slice(1)) % 3 !== 0
  const shown = async (card: { callId: string }) => inInbox(card)
  const expected = byWritten.filter(inInbox).map((c) => c.callId)
  const first = await settledPage(finished, shown as never, 30)
  expect(first.cards.map((c) => c.callId)).toEqual(expected.slice(0, 30))
  // The first page read a bounded number of cards, not the 500.
  expect(read).toBeLessThan(500)
  const all: string[] = first.cards.map((c) => c.callId)
  let cursor = first.nextCursor
  while (cursor) {
    const url = new URL(`http://x/?cursor=${cursor}&limit=30`)
    const next = await settledPage(finished, shown as never, 30, feedParams(url, 30).after)
    all.push(...next.cards.map((c) => c.callId))
    cursor = next.nextCursor
  }
  expect(all).toEqual(expected)
})
