/**
 * "Take my time" in the web inbox lasts only while the tab is open: the page renews the hold
 * (POST /inbox/api/cards/:callId/hold every 10 s); when the renewals stop, the hold ends within
 * the lease. Fake timers move time; nothing sleeps.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, expect, test, vi } from 'vitest'
import { WebAdapter } from '../../adapters/web/adapter.js'
import type { CardState } from '../../src/card/types.js'
import { startAnswerer } from '../helpers/answerer.js'
import { colour, refFor, until } from '../helpers/service.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function inbox() {
  // Timers (the wait's deadline, the hold's lease) and the clock move only when the test says,
  // plus the little real time the test itself takes.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true })
  cleanups.push(() => {
    vi.useRealTimers()
  })
  const web = new WebAdapter({ holdLeaseMs: 30_000 })
  const { service, chat, close } = await startAnswerer({
    adapters: [web],
    destinations: [{ platform: 'web' }],
  })
  cleanups.push(close)
  const server: Server = createServer((req, res) => {
    void web.handleHttp(req, res, new URL(req.url ?? '/', 'http://inbox'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => {
    server.closeAllConnections()
    server.close()
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const holders = async (callId: string) =>
    ((await chat.host.getCard(refFor(callId, 'agent'))) as CardState | undefined)?.holders.map(
      (p) => p.name,
    ) ?? []
  return { service, chat, post, holders, agent: service.agents.ensure('agent') }
}

test('a hold lasts past the deadline while the page beats, and ends within the lease once the tab is gone', async () => {
  const { service, post, holders, agent, chat } = await inbox()
  let result: unknown
  const asking = service.askTimed({ questions: [colour], agent }, 'tab', 30_000).then((r) => (result = r))
  await until(() => chat.host.getCard(refFor('tab', 'agent')), 'card')
  const ada = { name: 'Ada Lovelace' }
  expect(
    (await post('/inbox/api/cards/tab/actions', { action: { type: 'hold' }, person: ada })).body.ok,
  ).toBe(true)
  expect(await holders('tab')).toEqual(['Ada Lovelace'])

  // The tab stays open: a heartbeat every 20 s (the page sends one every 10 s), well past the deadline.
  for (let i = 0; i < 3; i++) {
    await vi.advanceTimersByTimeAsync(20_000)
    expect((await post('/inbox/api/cards/tab/hold', { person: ada })).body).toEqual({ held: true })
  }
  expect(result).toBeUndefined()
  expect(await holders('tab')).toEqual(['Ada Lovelace'])

  // The tab closes: no more heartbeats. Just inside the lease it still holds...
  await vi.advanceTimersByTimeAsync(28_000)
  expect(result).toBeUndefined()
  expect(await holders('tab')).toEqual(['Ada Lovelace'])
  // ...and once the lease runs out the hold ends; the deadline long passed, so the wait ends too.
  await vi.advanceTimersByTimeAsync(4_000)
  await asking
  expect(result).toEqual({ pending: true, callId: 'tab' })
  await until(async () => (await holders('tab')).length === 0, 'holder dropped from the card')
  expect((await post('/inbox/api/cards/tab/hold', { person: ada })).body).toEqual({ held: false })
})

test('a renewal from someone who holds nothing is {held: false}; a bad body is 400 BAD_HOLD', async () => {
  const { service, post, agent, chat } = await inbox()
  void service.askTimed({ questions: [colour], agent }, 'nobody', 60_000).catch(() => {})
  await until(() => chat.host.getCard(refFor('nobody', 'agent')), 'card')
  expect((await post('/inbox/api/cards/nobody/hold', { person: { name: 'Bob' } })).body).toEqual({
    held: false,
  })
  const bad = await post('/inbox/api/cards/nobody/hold', { person: { name: 42 } })
  expect(bad.status).toBe(400)
  expect(bad.body.error).toMatchObject({ code: 'BAD_HOLD' })
})
