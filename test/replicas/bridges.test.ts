/**
 * Two and three bridges (`serve()`, real HTTP, the web inbox) on one PostgreSQL schema: what one
 * bridge records, every other acts on.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { PostgresStore } from '../../src/store/postgres.js'
import { type TestSchema, testSchema } from '../helpers/pg.js'
import { act, cardPosted, request, startBridge, type TestBridge, until } from '../server/helpers.js'

let schema: TestSchema | undefined
const bridges: TestBridge[] = []
const start = async (replicas?: { leaseMs?: number; intervalMs?: number }) => {
  schema ??= await testSchema()
  const b = await startBridge({ ASKBRIDGE_DB: schema.url }, undefined, replicas)
  bridges.push(b)
  return b
}
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()))
  await schema?.drop()
  schema = undefined
})

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const ask = (b: TestBridge, body: Record<string, unknown>) =>
  request(b.url, 'POST', '/v1/ask', { questions: [colour], ...body })

describe('several bridges on one PostgreSQL database', () => {
  it('a click through bridge B completes the ask waiting on bridge A at once', async () => {
    const [a, b] = [await start(), await start()]
    const asking = ask(a, { callId: 'x-1', agentId: 'deploy' })
    // Bridge B shows the card bridge A posted: it is in the shared database.
    await cardPosted(b.url, 'x-1')
    const click = await act(b.url, 'x-1', { type: 'choose', questionId: 'colour', label: 'Blue' })
    expect(click.status).toBe(200)
    const res = await asking
    expect(res.status).toBe(200)
    expect(res.body.answers).toEqual([{ id: 'colour', selected: ['Blue'] }])
    // Both bridges tell the same story.
    for (const x of [a, b]) {
      const call = await request(x.url, 'GET', '/v1/questions/x-1?agentId=deploy')
      expect(call.body).toMatchObject({ state: 'settled' })
    }
  })

  it('a lost notification connection delays the answer, never loses it', async () => {
    const [a, b] = [await start(), await start()]
    const asking = ask(a, { callId: 'x-2' })
    await cardPosted(b.url, 'x-2')
    // Cut the LISTEN connections and answer through B at once: whatever is notified while they
    // are down is lost, and bridge A must find the answer by re-checking.
    await schema?.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND query LIKE $1",
      [`%${schema?.schema}%`],
    )
    await act(b.url, 'x-2', { type: 'choose', questionId: 'colour', label: 'Red' })
    expect((await asking).body.answers).toEqual([{ id: 'colour', selected: ['Red'] }])
  })

  it('50 racing clicks over 3 bridges give 1 winner and 49 told', async () => {
    const [a, b, c] = [await start(), await start(), await start()]
    const asking = ask(a, { callId: 'race' })
    await cardPosted(c.url, 'race')
    const clicks = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        act(
          [a, b, c][i % 3]?.url ?? '',
          'race',
          { type: 'choose', questionId: 'colour', label: i % 2 ? 'Red' : 'Blue' },
          `P${i}`,
        ),
      ),
    )
    const applied = clicks.filter((r) => r.status === 200 && r.body.ok === true)
    expect(applied).toHaveLength(1)
    expect(clicks.filter((r) => r.body.ok === false)).toHaveLength(49)
    const res = await asking
    const winner = clicks.indexOf(applied[0] as (typeof clicks)[number])
    expect(res.body.answers).toEqual([{ id: 'colour', selected: [winner % 2 ? 'Red' : 'Blue'] }])
  })

  it('a late reply queued through one bridge reaches long-polls on another; admit works anywhere', async () => {
    const [a, b] = [await start(), await start()]
    const timed = await ask(a, { callId: 'late', agentId: 'bot', timeoutMs: 50 })
    expect(timed.body).toMatchObject({ pending: true })
    const polling = request(b.url, 'GET', '/v1/agents/bot/replies?wait=10')
    await until(
      async () => (await request(a.url, 'GET', '/v1/questions?agentId=bot')).body.active?.length === 1,
    )
    const answered = await request(a.url, 'POST', '/v1/questions/late/answer', {
      agentId: 'bot',
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
    expect(answered.body).toEqual({ accepted: true })
    const polled = await polling
    expect(polled.body.replies?.map((r) => r.payload.callId)).toEqual(['late'])
    const admitted = await request(b.url, 'POST', '/v1/agents/bot/replies/late/admit')
    expect(admitted.status).toBe(200)
    expect((await request(a.url, 'GET', '/v1/questions?agentId=bot')).body.settled).toEqual([
      { callId: 'late', answers: [{ id: 'colour', selected: ['Red'] }] },
    ])
  })

  it('a cancel through bridge B ends the ask waiting on bridge A', async () => {
    const [a, b] = [await start(), await start()]
    const asking = ask(a, { callId: 'gone', agentId: 'bot' })
    await cardPosted(b.url, 'gone')
    const cancelled = await request(b.url, 'DELETE', '/v1/questions/gone?agentId=bot')
    expect(cancelled.status).toBeLessThan(300)
    const res = await asking
    expect(res.body.error?.code).toBe('ASK_CANCELLED')
  })

  it('a bridge starting while another waits leaves that wait alone', async () => {
    const a = await start()
    const timed = ask(a, { callId: 'mine', agentId: 'bot', timeoutMs: 60_000 })
    await cardPosted(a.url, 'mine')
    const b = await start()
    expect((b.bridge.store as PostgresStore).instanceId).not.toBe(
      (a.bridge.store as PostgresStore).instanceId,
    )
    expect((await request(b.url, 'GET', '/v1/questions/mine?agentId=bot')).body).toMatchObject({
      state: 'open',
    })
    await act(b.url, 'mine', { type: 'choose', questionId: 'colour', label: 'Red' })
    expect((await timed).body.answers).toEqual([{ id: 'colour', selected: ['Red'] }])
  })

  it("a bridge's timed wait turns pending at its deadline on another bridge once it is gone", async () => {
    const fast = { leaseMs: 300, intervalMs: 100 }
    const [a, b] = [await start(fast), await start(fast)]
    const timed = ask(a, { callId: 'orphan', agentId: 'bot', timeoutMs: 1500 })
    await cardPosted(b.url, 'orphan')
    // Bridge A goes away with the wait open (its lease is no longer renewed).
    bridges.splice(bridges.indexOf(a), 1)
    await a.close()
    expect((await timed).status).toBe(503)
    expect((await request(b.url, 'GET', '/v1/questions/orphan?agentId=bot')).body).toMatchObject({
      state: 'open',
    })
    await until(
      async () =>
        (await request(b.url, 'GET', '/v1/questions?agentId=bot')).body.active?.[0]?.state === 'continued',
      'the deadline taken over',
    )
    // Still answerable: a click now becomes a late reply.
    await until(
      async () => (await request(b.url, 'GET', '/inbox/api/cards')).body.cards?.[0]?.status === 'continued',
    )
    await act(b.url, 'orphan', { type: 'choose', questionId: 'colour', label: 'Blue' })
    const replies = await request(b.url, 'GET', '/v1/agents/bot/replies?wait=5')
    expect(replies.body.replies?.map((r) => r.payload.answers)).toEqual([
      [{ id: 'colour', selected: ['Blue'] }],
    ])
  })
})

describe('escalation across bridges', () => {
  it('a due tier fires once however many bridges check at once', async () => {
    schema = await testSchema()
    const { rmSync, writeFileSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const routes = join(tmpdir(), `askbridge-routes-${schema.schema}.json`)
    writeFileSync(
      routes,
      JSON.stringify({
        routes: [
          {
            name: 'esc',
            destinations: [{ platform: 'web' }],
            escalation: [{ after: '1s', destinations: [{ platform: 'web' }] }],
          },
        ],
      }),
    )
    const env = { ASKBRIDGE_DB: schema.url, ASKBRIDGE_ROUTES: routes }
    const three = [await startBridge(env), await startBridge(env), await startBridge(env)]
    bridges.push(...three)
    rmSync(routes) // read at start
    const [a] = three as [TestBridge]
    const asking = ask(a, { callId: 'esc-1', agentId: 'bot' })
    await cardPosted(a.url, 'esc-1')
    const key = { agentId: 'bot', callId: 'esc-1' }
    // Every bridge checks, repeatedly and at the same time, until the tier is due and fired.
    await until(async () => {
      await Promise.all(three.map((b) => b.bridge.chat.tick()))
      return (await a.bridge.store.listAudit(key)).some((e) => e.kind === 'escalated')
    }, 'the tier fired')
    await Promise.all(three.flatMap((b) => [b.bridge.chat.tick(), b.bridge.chat.tick()]))
    expect((await a.bridge.store.listAudit(key)).filter((e) => e.kind === 'escalated')).toHaveLength(1)
    expect(
      (await a.bridge.store.listPosts(key)).map((p) => p.destKey).filter((k) => k.includes('#escalation')),
    ).toHaveLength(1)
    await act(a.url, 'esc-1', { type: 'choose', questionId: 'colour', label: 'Red' })
    expect((await asking).body.answers).toEqual([{ id: 'colour', selected: ['Red'] }])
  })
})

describe('Slack Socket Mode on several bridges', () => {
  it('each bridge holds its own connection; a click Slack sends to one completes the ask on another', async () => {
    const { FakeSlack } = await import('../fakes/slack/server.js')
    const { fakeUser } = await import('../slack/rig.js')
    schema = await testSchema()
    const fake = await FakeSlack.start({ pingIntervalMs: 1000 })
    try {
      const env = {
        ASKBRIDGE_DB: schema.url,
        SLACK_BOT_TOKEN: fake.options.botToken,
        SLACK_APP_TOKEN: fake.options.appToken,
        SLACK_CHANNEL: 'C0SOCKETS',
        SLACK_API_URL: fake.apiUrl,
      }
      // Bridge B connects first: the fake sends interactions over the first connection.
      const b = await startBridge(env)
      bridges.push(b)
      await fake.waitForSocket()
      const a = await startBridge(env)
      bridges.push(a)
      const asking = ask(a, { callId: 'sock-1' })
      const message = await until(() => fake.messagesOf('sock-1')[0], 'card posted')
      await until(
        async () => (await a.bridge.store.listPosts({ agentId: 'default', callId: 'sock-1' })).length > 0,
      )
      const blue = fake.liveActionIds('sock-1').find((id) => id.endsWith('|c|0|1'))
      if (!blue) throw new Error('no Blue button')
      const delivery = await fake.deliver(
        fake.actionPayload(fakeUser({ userId: 'U0ANN', name: 'Ann' }), message, blue),
      )
      expect(delivery.timedOut).toBe(false)
      expect((await asking).body.answers).toEqual([{ id: 'colour', selected: ['Blue'] }])
      expect(fake.messagesOf('sock-1')).toHaveLength(1)
    } finally {
      await Promise.all(bridges.splice(0).map((x) => x.close()))
      await fake.close()
    }
  })
})
