import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import type { Leadership } from '../../src/store/pg-leader.js'
import type { StoreChange } from '../../src/store/pg-notify.js'
import { PostgresStore, type PostgresStoreOptions } from '../../src/store/postgres.js'
import { type TestSchema, testSchema } from '../helpers/pg.js'
import { until } from '../helpers/service.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}
const key = { agentId: 'alice', callId: 'call-1' }

/** Several processes on one database, each a store of its own. */
describe('PostgreSQL: several processes on one database', () => {
  let schema: TestSchema | undefined
  const stores: PostgresStore[] = []
  const open = async (options: PostgresStoreOptions = {}) => {
    schema ??= await testSchema()
    const store = await PostgresStore.open(schema.url, { max: 4, ...options })
    stores.push(store)
    return store
  }
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()))
    await schema?.drop()
    schema = undefined
  })

  it('tells every other process of each committed event and card write, and not itself', async () => {
    const a = await open()
    const b = await open()
    const seenByA: Array<StoreChange | { kind: 'resync' }> = []
    const seenByB: Array<StoreChange | { kind: 'resync' }> = []
    a.watch((c) => seenByA.push(c))
    b.watch((c) => seenByB.push(c))
    await Promise.all([a.watching(), b.watching()])
    await a.append({ type: 'asked', ...key, questions: [colour], timed: false })
    await a.casCard(key, 0, { status: 'open' })
    // A decision that appends nothing, and one that fails, notify nobody.
    await a.transact(key, () => ({ events: [], result: 0 }))
    await a
      .transact(key, () => {
        throw new Error('no')
      })
      .catch(() => {})
    await a.append({ type: 'answered', ...key, answers: [] })
    await until(() => seenByB.length >= 3, 'three notifications')
    expect(seenByB).toEqual([
      { ...key, kind: 'event', type: 'asked' },
      { ...key, kind: 'card' },
      { ...key, kind: 'event', type: 'answered' },
    ])
    // B's own write reaches A, and A never heard of its own.
    await b.casCard(key, 1, { status: 'answered' })
    await until(() => seenByA.length >= 1, 'a notification at A')
    expect(seenByA).toEqual([{ ...key, kind: 'card' }])
  })

  it('a notification that is not a change of ours is ignored; the next one still arrives', async () => {
    const a = await open()
    const b = await open()
    const seen: Array<StoreChange | { kind: 'resync' }> = []
    b.watch((c) => seen.push(c))
    await b.watching()
    // Garbage, JSON of the wrong shape, and an unknown kind, sent on the schema's channel in order
    // before a real change: delivered in commit order, so all of them were handled when it arrives.
    for (const payload of [
      'not json',
      '{"o":"x","a":1,"c":"c","k":"e"}',
      '{"o":"x","a":"a","c":"c","k":"z"}',
    ])
      await schema?.query('SELECT pg_notify($1, $2)', [b.channel, payload])
    await a.casCard(key, 0, { status: 'open' })
    await until(() => seen.length >= 1, 'the real change')
    expect(seen).toEqual([{ ...key, kind: 'card' }])
  })

  it('a lost listening connection comes back by itself and says resync', async () => {
    const app = `askbridge-listen-${process.pid}-${Date.now()}`
    const a = await open()
    const b = await open({ applicationName: app })
    const seen: Array<StoreChange | { kind: 'resync' }> = []
    b.watch((c) => seen.push(c))
    await b.watching()
    await schema?.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'",
      [app],
    )
    await until(() => seen.some((c) => c.kind === 'resync'), 'resync')
    await a.casCard(key, 0, { status: 'open' })
    await until(() => seen.some((c) => c.kind === 'card'), 'a notification after reconnecting')
  })

  it("a dead process's due deadline is taken over once; a live one keeps its own", async () => {
    let t = 1_000
    const now = () => t
    const holder = await open({ now, leaseMs: 300, instanceId: 'holder' })
    const b = await open({ now, instanceId: 'b' })
    const c = await open({ now, instanceId: 'c' })
    await holder.append({ type: 'asked', ...key, questions: [colour], timed: true, deadline: 1_500 })
    await holder.append({
      type: 'asked',
      agentId: 'alice',
      callId: 'blocking',
      questions: [colour],
      timed: false,
    })
    // Not due yet, then due but the holder is alive and renews its lease.
    expect(await b.takeOverDue(1_400)).toEqual([])
    t = 5_000
    await until(
      async () =>
        Number(
          (
            await schema?.query<{ u: string }>(
              'SELECT lease_until AS u FROM askbridge_calls WHERE call_id = $1',
              ['call-1'],
            )
          )?.[0]?.u,
        ) >= 5_300,
      'the lease renewed',
    )
    expect(await b.takeOverDue(5_100)).toEqual([])
    expect((await b.getCall(key))?.state).toBe('open')
    // The holder dies: its lease lapses and two processes race for the deadline.
    await holder.close()
    const [byB, byC] = await Promise.all([b.takeOverDue(5_400), c.takeOverDue(5_400)])
    expect([...(byB ?? []), ...(byC ?? [])]).toEqual([key])
    expect((await c.getCall(key))?.state).toBe('continued')
    expect((await c.events(key)).filter((e) => e.type === 'pending')).toHaveLength(1)
    // A blocking call has no deadline to take over: its caller re-attaches.
    expect((await c.getCall({ agentId: 'alice', callId: 'blocking' }))?.state).toBe('open')
    expect(await c.takeOverDue(99_999)).toEqual([])
  })
})

describe('PostgreSQL: leadership of a job', () => {
  let schema: TestSchema | undefined
  const stores: PostgresStore[] = []
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()))
    await schema?.drop()
    schema = undefined
  })

  it('one process leads at a time; when the leader dies another takes over', async () => {
    schema = await testSchema()
    const url = schema.url
    const opened = await Promise.all([0, 1, 2].map(() => PostgresStore.open(url, { max: 2 })))
    stores.push(...opened)
    const events: string[] = []
    // The process whose connection the test kills: a killed process does not come back, so when it
    // resigns it stops competing (else its next try could take the lock again before the others').
    let killed: number | undefined
    const leaderships: Leadership[] = opened.map((store, i) =>
      store.lead(
        'gateway',
        {
          lead: async () => void events.push(`lead ${i}`),
          resign: async () => {
            events.push(`resign ${i}`)
            if (i === killed) void leaderships[i]?.stop()
          },
        },
        { pollMs: 50 },
      ),
    )
    await until(() => leaderships.some((l) => l.leading), 'a leader')
    const first = leaderships.findIndex((l) => l.leading)
    // Others keep trying and never lead alongside.
    await until(() => events.length === 1 && leaderships.filter((l) => l.leading).length === 1)
    killed = first
    // The leader's connection dies (a killed process): its lock goes, another leads.
    await schema.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)",
      [`askbridge-lead:askbridge_${schema.schema}:gateway`.slice(0, 63)],
    )
    await until(() => events.includes(`resign ${first}`), 'the old leader resigns')
    await until(() => leaderships.some((l, i) => i !== first && l.leading), 'a new leader')
    expect(leaderships.filter((l) => l.leading)).toHaveLength(1)
    // Stopping the new leader hands over again.
    const second = leaderships.findIndex((l) => l.leading)
    await leaderships[second]?.stop()
    await until(() => leaderships.some((l, i) => i !== second && l.leading), 'a third leader')
    expect(leaderships.filter((l) => l.leading)).toHaveLength(1)
    expect(events.filter((e) => e.startsWith('lead'))).toHaveLength(3)
  })
})
