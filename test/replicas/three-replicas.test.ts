/**
 * Three `askbridge serve` processes on one PostgreSQL database with the fake Slack (HTTP mode):
 * asks go through replica 1, clicks are delivered to replicas 2 and 3, and replica 1 is killed
 * with SIGKILL while asks wait and clicks land. Its clients re-attach to replica 2 with the same
 * callId. Then: 0 answers lost, 0 answered twice, 0 duplicate cards, one outcome per client.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ensureBuilt } from '../cli/built.js'
import { FakeSlack } from '../fakes/slack/server.js'
import { type TestSchema, testSchema } from '../helpers/pg.js'
import { type Replica, startReplica, stopReplica } from '../helpers/replica.js'
import { until } from '../helpers/service.js'
import { fakeUser } from '../slack/rig.js'

let schema: TestSchema
let fake: FakeSlack
const replicas: Replica[] = []

beforeAll(async () => {
  await ensureBuilt()
  schema = await testSchema()
  fake = await FakeSlack.start()
  const env = {
    ASKBRIDGE_PORT: '0',
    ASKBRIDGE_DB: schema.url,
    ASKBRIDGE_LOG_LEVEL: 'warn',
    SLACK_BOT_TOKEN: fake.options.botToken,
    SLACK_SIGNING_SECRET: fake.options.signingSecret,
    SLACK_CHANNEL: 'C0REPLICAS',
    SLACK_API_URL: fake.apiUrl,
  }
  // Three replicas starting at once migrate the empty schema once.
  replicas.push(...(await Promise.all([startReplica(env), startReplica(env), startReplica(env)])))
}, 60_000)

afterAll(async () => {
  for (const r of replicas) await stopReplica(r)
  await fake?.close()
  await schema?.drop()
})

const N = 12
const question = (i: number) => ({
  id: 'go',
  question: `Deploy build ${i}?`,
  options: [{ label: 'Yes' }, { label: 'No' }],
})
const choiceOf = (i: number) => (i % 3 === 0 ? 'No' : 'Yes')

it('three replicas, one killed mid-flight: nothing lost, nothing double, no duplicate card', async () => {
  const [r1, r2, r3] = replicas as [Replica, Replica, Replica]
  const attempts = new Map<string, string[]>()
  /** A client: asks through replica 1; when that connection dies, re-attaches to replica 2. */
  const client = async (i: number) => {
    const callId = `rep-${i}`
    const body = {
      agentId: `agent-${i % 4}`,
      callId,
      questions: [question(i)],
      // A third of the asks are timed (a long window), the rest blocking.
      ...(i % 3 === 1 ? { timeoutMs: 120_000 } : {}),
    }
    for (const target of [r1, r2, r2]) {
      attempts.set(callId, [...(attempts.get(callId) ?? []), target.url])
      let res: Response
      try {
        res = await fetch(`${target.url}/v1/ask`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      } catch {
        continue // the replica died under this request: ask the next one with the same callId
      }
      const json = (await res.json()) as { answers?: Array<{ selected: string[] }>; error?: { code: string } }
      // A replica shutting down says so with 503; anything else is the outcome.
      if (res.status === 503) continue
      return json
    }
    throw new Error(`no replica gave call ${callId} an outcome`)
  }
  const outcomes = Array.from({ length: N }, (_, i) => client(i))

  for (let i = 0; i < N; i++) await until(() => fake.messagesOf(`rep-${i}`)[0], `card rep-${i} posted`, 1000)

  const click = async (i: number, via: Replica) => {
    const callId = `rep-${i}`
    const message = fake.messagesOf(callId)[0]
    if (!message) throw new Error(`no card for ${callId}`)
    const index = choiceOf(i) === 'Yes' ? 0 : 1
    const actionId = fake.liveActionIds(callId).find((id) => id.endsWith(`|c|0|${index}`))
    if (!actionId) throw new Error(`no button for ${callId}`)
    const res = await fake.sendHttp(
      fake.actionPayload(fakeUser({ userId: `U0P${i}`, name: `Person ${i}` }), message, actionId),
      { url: `${via.url}/slack/events` },
    )
    expect(res.status).toBe(200)
  }

  // A third answered while every replica lives, spread over replicas 2 and 3.
  for (let i = 0; i < N / 3; i++) await click(i, i % 2 ? r3 : r2)
  // The next clicks race the kill of replica 1, which holds every waiting ask.
  const racing = Array.from({ length: N / 3 }, (_, j) => N / 3 + j).map((i) => click(i, i % 2 ? r3 : r2))
  await racing[0]
  r1.child.kill('SIGKILL')
  await r1.exited
  await Promise.all(racing)
  // The rest once replica 1 is gone.
  for (let i = (2 * N) / 3; i < N; i++) await click(i, i % 2 ? r3 : r2)

  const results = await Promise.all(outcomes)
  // Every waiting client got exactly one outcome: the answer that was clicked.
  results.forEach((result, i) => {
    expect(result.error, `call rep-${i}`).toBeUndefined()
    expect(result.answers?.[0]?.selected, `call rep-${i}`).toEqual([choiceOf(i)])
  })
  // Some clients really did lose replica 1 and re-attach.
  expect([...attempts.values()].some((a) => a.length > 1)).toBe(true)
  // 0 duplicate cards: one Slack message per call.
  for (let i = 0; i < N; i++) expect(fake.messagesOf(`rep-${i}`), `messages of rep-${i}`).toHaveLength(1)
  // 0 answered twice: each card completed once, and no call has a late reply besides its answer.
  const completed = await schema.query<{ call_id: string; n: string }>(
    `SELECT call_id, count(*) AS n FROM askbridge_audit WHERE data::json->>'kind' = 'completed' GROUP BY call_id`,
  )
  expect(completed).toHaveLength(N)
  for (const row of completed) expect(Number(row.n), row.call_id).toBe(1)
  const replies = await schema.query('SELECT call_id FROM askbridge_calls WHERE has_reply')
  expect(replies).toEqual([])
  // Every card ends answered, with its buttons gone.
  for (let i = 0; i < N; i++)
    await until(() => fake.liveActionIds(`rep-${i}`).length === 0, `rep-${i} finished`)
  // The survivors stay healthy.
  for (const r of [r2, r3]) expect((await fetch(`${r.url}/healthz`)).status).toBe(200)
}, 120_000)
