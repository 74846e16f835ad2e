/**
 * PostgreSQL lost while the bridge runs (a proxy in front of the real server is cut): API
 * writes answer 503 STORAGE_UNAVAILABLE, clicks are not acknowledged as applied, nothing
 * acknowledged is lost, and the bridge recovers by itself when the server is back.
 */
import { afterEach, expect, it } from 'vitest'
import { isPostPending } from '../../src/answerer/adapter.js'
import { PG_URL, type TestSchema, testSchema } from '../helpers/pg.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { act, cardPosted, request, startBridge, type TestBridge, until } from '../server/helpers.js'

let schema: TestSchema | undefined
let proxy: TcpProxy | undefined
let bridge: TestBridge | undefined
afterEach(async () => {
  await proxy?.restore().catch(() => {})
  await bridge?.close()
  await proxy?.close()
  await schema?.drop()
  bridge = undefined
  proxy = undefined
  schema = undefined
})

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }

it('PostgreSQL gone and back: 503 with a code meanwhile, then everything works again by itself', async () => {
  schema = await testSchema()
  const server = new URL(PG_URL)
  proxy = await TcpProxy.start(server.hostname, Number(server.port || 5432))
  const url = new URL(schema.url)
  url.hostname = '127.0.0.1'
  url.port = String(proxy.port)
  bridge = await startBridge({ ASKBRIDGE_DB: url.toString() }, undefined, { intervalMs: 100 })
  const b = bridge

  // Asked and posted while the server is there: this must survive the outage.
  const asking = request(b.url, 'POST', '/v1/ask', { callId: 'kept', questions: [colour] })
  await cardPosted(b.url, 'kept')
  // Recorded where it was posted (not only the intent to post): the ask is fully under way (an
  // outage before that fails it, by design: the client retries the same callId).
  await until(async () => {
    const posts = await b.bridge.store.listPosts({ agentId: 'default', callId: 'kept' })
    return posts.length > 0 && posts.every((p) => !isPostPending(p.ref))
  })

  await proxy.cut()
  const ask = await request(b.url, 'POST', '/v1/ask', {
    callId: 'during',
    questions: [colour],
    timeoutMs: 1000,
  })
  expect(ask.status).toBe(503)
  expect(ask.body.error?.code).toBe('STORAGE_UNAVAILABLE')
  expect(ask.body.error?.message).not.toMatch(/\n\s+at /)
  const click = await act(b.url, 'kept', { type: 'choose', questionId: 'colour', label: 'Blue' })
  expect(click.status).toBe(503)
  expect(click.body.error?.code).toBe('STORAGE_UNAVAILABLE')
  expect((await request(b.url, 'GET', '/healthz')).status).toBe(200)

  await proxy.restore()
  // No restart: the pool reconnects on the next request, and the same click now applies.
  const retried = await until(async () => {
    const r = await act(b.url, 'kept', { type: 'choose', questionId: 'colour', label: 'Blue' })
    return r.status === 200 ? r : undefined
  }, 'the click applied after the server came back')
  expect(retried.body.ok).toBe(true)
  const kept = await asking
  expect(kept.body.answers, JSON.stringify(kept.body)).toEqual([{ id: 'colour', selected: ['Blue'] }])
  const again = await request(b.url, 'POST', '/v1/ask', {
    callId: 'after',
    questions: [colour],
    timeoutMs: 50,
  })
  expect(again.body).toMatchObject({ pending: true, callId: 'after' })
})
