/**
 * A timed wait outlives its replica on time: two `askbridge serve` processes on one PostgreSQL
 * database, a timed ask waits on replica 1, and replica 1 is killed (SIGKILL) just before the
 * deadline, when its lease was renewed last. Replica 2 takes the deadline over: the call is
 * `continued`, as replica 2 shows it, by the deadline + 5 s. The card stays answerable there.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ensureBuilt } from '../cli/built.js'
import { type TestSchema, testSchema } from '../helpers/pg.js'
import { type Replica, startReplica, stopReplica } from '../helpers/replica.js'
import { until } from '../helpers/service.js'

let schema: TestSchema
const replicas: Replica[] = []

beforeAll(async () => {
  await ensureBuilt()
  schema = await testSchema()
  const env = { ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: schema.url, ASKBRIDGE_LOG_LEVEL: 'warn' }
  replicas.push(...(await Promise.all([startReplica(env), startReplica(env)])))
}, 60_000)

afterAll(async () => {
  for (const r of replicas) await stopReplica(r)
  await schema?.drop()
})

const question = { id: 'go', question: 'Roll back?', options: [{ label: 'Yes' }, { label: 'No' }] }

interface CallView {
  state?: string
  deadline?: number
}

async function view(replica: Replica, callId: string): Promise<CallView> {
  const res = await fetch(`${replica.url}/v1/questions/${callId}?agentId=agent-lease`)
  return res.status === 200 ? ((await res.json()) as CallView) : {}
}

it('the replica holding a timed wait dies before its deadline: continued by deadline + 5 s', async () => {
  const [r1, r2] = replicas as [Replica, Replica]
  const callId = 'lease-1'
  // The client of replica 1 waits; its connection dies with the replica.
  const asking = fetch(`${r1.url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agentId: 'agent-lease', callId, questions: [question], timeoutMs: 4000 }),
  }).catch(() => undefined)
  const { deadline } = await until(async () => {
    const v = await view(r2, callId)
    return v.deadline === undefined ? undefined : { deadline: v.deadline }
  }, 'the call recorded')
  // Killed just before the deadline: its last lease renewal is as late as it gets.
  await until(() => Date.now() >= deadline - 300, 'just before the deadline', 1000)
  expect((await view(r2, callId)).state).toBe('open')
  r1.child.kill('SIGKILL')
  await r1.exited
  await asking
  // Polled on replica 2 until it shows the call continued; the moment it first does is the figure.
  await until(async () => (await view(r2, callId)).state === 'continued', 'continued on replica 2', 1500)
  const seen = Date.now()
  expect(
    seen - deadline,
    'ms after the deadline that replica 2 shows the call continued',
  ).toBeLessThanOrEqual(5000)
  // Still answerable through the surviving replica: a late answer is queued.
  const answered = await fetch(`${r2.url}/v1/questions/${callId}/answer?agentId=agent-lease`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ answers: [{ id: 'go', selected: ['No'] }] }),
  })
  expect(await answered.json()).toEqual({ accepted: true })
}, 60_000)
