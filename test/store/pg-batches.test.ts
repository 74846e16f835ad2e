import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterEach, expect, it, vi } from 'vitest'
import { OnceBatches } from '../../src/store/pg-batches.js'
import { type OnceStatement, TransactionNotes } from '../../src/store/pg-connect.js'
import type { StoreChange } from '../../src/store/pg-notify.js'
import type { CallKey, CallRecord, CallStep } from '../../src/store/types.js'
import { PG_URL } from '../helpers/pg.js'
import { askAndAnswer, storesOnOneSchema, watchWire } from '../helpers/pg-store.js'

// Clicks that queue for the database go together: one transaction, one round trip, each with its
// own outcome and notifications. What fails on the server's word runs again alone; what may have
// committed never runs twice.

const stores = storesOnOneSchema()
const closing: Array<() => Promise<unknown>> = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(closing.splice(0).map((close) => close()))
  await stores.end()
})

const answering =
  (key: CallKey): CallStep =>
  (call: CallRecord | undefined) =>
    call?.state === 'open' ? [askAndAnswer(key).answered] : []

it('clicks that queue commit together in one round trip, each with its own outcome and notes', async () => {
  const store = await stores.open({ max: 4 })
  const other = await stores.open()
  const watcher = await stores.open()
  const heard: StoreChange[] = []
  const unwatch = watcher.watch((change) => {
    if (change.kind !== 'resync') heard.push(change)
  })
  closing.push(async () => unwatch())
  await watcher.watching()

  const keys = Array.from({ length: 6 }, (_, i): CallKey => ({ agentId: 'alice', callId: `call-${i}` }))
  for (const key of keys) {
    await store.append(askAndAnswer(key).asked)
    expect(await store.casCard(key, 0, { n: 0 })).toBe(1)
    await store.findCards(key.callId)
  }
  // call-4's card moves on elsewhere after this process read it: its click is a conflict.
  const moved = keys[4] as CallKey
  expect(await other.casCard(moved, 1, { n: 'elsewhere' })).toBe(2)
  // What was announced before the clicks has been heard (a later write's note comes after it).
  expect(await other.casCard({ agentId: 'alice', callId: 'before' }, 0, { n: 0 })).toBe(1)
  await vi.waitFor(() => expect(heard.some((c) => c.callId === 'before')).toBe(true))
  heard.splice(0)

  const sent = watchWire()
  // Six at once: two lanes go at once, each with one; the four that wait go together.
  const versions = await Promise.all(keys.map((key) => store.casCard(key, 1, { n: 1 }, [], answering(key))))
  vi.restoreAllMocks()
  expect(versions).toEqual([2, 2, 2, 2, undefined, 2])

  const clicks = sent.filter((q) => q.startsWith('BEGIN; SELECT pg_advisory_xact_lock'))
  const executes = clicks.map((q) => q.match(/EXECUTE askbridge_x_/g)?.length)
  expect(executes.sort()).toEqual([1, 1, 4])
  // Together: in the order of their calls, each one's mark kept apart before the next one's runs.
  const together = clicks.find((q) => q.match(/EXECUTE askbridge_x_/g)?.length === 4) ?? ''
  const order = [...together.matchAll(/hashtext\('(call-\d)'\)/g)].map((m) => m[1])
  expect(order).toEqual(['call-2', 'call-3', 'call-4', 'call-5'])
  expect(together.match(/set_config\('askbridge\.wrote_\d', current_setting/g)).toHaveLength(4)

  for (const key of keys) {
    const call = await store.getCall(key)
    expect(call?.state).toBe(key === moved ? 'open' : 'settled')
    expect((await store.events({ callId: key.callId })).map((e) => e.type)).toEqual(
      key === moved ? ['asked'] : ['asked', 'answered'],
    )
  }
  expect((await store.getCard(moved))?.state).toEqual({ n: 'elsewhere' })

  // Each written click's card and event are announced once; the conflict announces nothing.
  const last = await store.casCard({ agentId: 'alice', callId: 'sentinel' }, 0, { n: 0 })
  expect(last).toBe(1)
  await vi.waitFor(() => expect(heard.some((c) => c.callId === 'sentinel')).toBe(true))
  const about = (callId: string) =>
    heard.filter((c) => c.callId === callId).map((c) => (c.kind === 'card' ? 'card' : c.type))
  for (const key of keys) {
    expect(about(key.callId)).toEqual(key === moved ? [] : ['card', 'answered'])
  }
})

/** A pool on a fresh schema with a table `t`, a connection listening on a fresh channel, and what it hears. */
async function rig(): Promise<{
  pool: pg.Pool
  channel: string
  heard: string[]
  rows: () => Promise<string[]>
}> {
  const store = await stores.open()
  closing.push(() => store.close())
  await stores.query('CREATE TABLE t (k text NOT NULL, u text UNIQUE)')
  const schema = (await stores.query<{ s: string }>('SELECT current_schema() AS s'))[0]?.s
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2, options: `-c search_path=${schema}` })
  const listener = new pg.Client({ connectionString: PG_URL })
  closing.push(
    () => pool.end(),
    () => listener.end(),
  )
  const channel = `askbridge_t_${randomBytes(4).toString('hex')}`
  await listener.connect()
  const heard: string[] = []
  listener.on('notification', (m) => heard.push(m.payload ?? ''))
  await listener.query(`LISTEN "${channel}"`)
  return {
    pool,
    channel,
    heard,
    rows: async () => (await stores.query<{ k: string }>('SELECT k FROM t ORDER BY k')).map((r) => r.k),
  }
}

/** An insert of `k` whose note goes if it committed; with `written: false` its mark is not set. */
function member(channel: string, k: string, { unique = k, written = true } = {}) {
  const notes = new TransactionNotes()
  notes.add({ channel, payload: `${k}: committed` })
  const mark = notes.ifWritten([{ channel, payload: `${k}: written` }])
  const statements: OnceStatement[] = [
    { sql: `INSERT INTO t (k, u) VALUES ($1, $2)`, params: [k, unique] },
    { sql: `SELECT ${mark} WHERE ${written ? 'true' : 'false'}` },
  ]
  return { statements, notes }
}

it('a statement refused on the server rolls its group back, and each runs again alone', async () => {
  const { pool, channel, heard, rows } = await rig()
  // One lane: the first goes alone and holds it; the next three wait for it and go together.
  const batches = new OnceBatches(pool, 'test', 1)
  const sent = watchWire()
  const run = (k: string, options?: { unique?: string; written?: boolean }) => {
    const m = member(channel, k, options)
    return batches.run({ agentId: 'test', callId: k }, m.statements, m.notes)
  }
  const first = run('a')
  const group = [run('b', { written: false }), run('c', { unique: 'a' }), run('d')]
  const outcomes = await Promise.allSettled([first, ...group])
  vi.restoreAllMocks()
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
  expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' })
  // Each once: the group's inserts were rolled back with c's refusal, then b and d went alone.
  expect(await rows()).toEqual(['a', 'b', 'd'])
  const transactions = sent.filter((q) => q.startsWith('BEGIN'))
  expect(transactions.map((q) => q.match(/INSERT INTO t/g)?.length)).toEqual([1, 3, 1, 1, 1])
  // What committed is announced, once; b's write set no mark, so its "written" note never goes.
  await pool.query(`SELECT pg_notify('${channel}', 'sentinel')`)
  await vi.waitFor(() => expect(heard).toContain('sentinel'))
  expect(heard.sort()).toEqual(
    ['a: committed', 'a: written', 'b: committed', 'd: committed', 'd: written', 'sentinel'].sort(),
  )
})

it("a group's marks are kept apart: each note goes with its own write only", async () => {
  const { pool, channel, heard, rows } = await rig()
  const batches = new OnceBatches(pool, 'test', 1)
  const run = (k: string, written: boolean) => {
    const m = member(channel, k, { written })
    return batches.run({ agentId: 'test', callId: k }, m.statements, m.notes)
  }
  const results = await Promise.all([run('a', true), run('b', true), run('c', false), run('d', true)])
  // Each gets its own statements' results: the insert, then the mark's row (none when not written).
  expect(results.map((r) => r.map((q) => q.rowCount))).toEqual([
    [1, 1],
    [1, 1],
    [1, 0],
    [1, 1],
  ])
  expect(await rows()).toEqual(['a', 'b', 'c', 'd'])
  await pool.query(`SELECT pg_notify('${channel}', 'sentinel')`)
  await vi.waitFor(() => expect(heard).toContain('sentinel'))
  expect(heard.filter((n) => n.endsWith('written')).sort()).toEqual([
    'a: written',
    'b: written',
    'd: written',
  ])
})

it('a group that may have committed is never run again: a note refused after the COMMIT fails them all', async () => {
  const { pool, channel, rows } = await rig()
  const batches = new OnceBatches(pool, 'test', 1)
  const a = member(channel, 'a')
  const first = batches.run({ agentId: 'test', callId: 'a' }, a.statements, a.notes)
  const b = member(channel, 'b')
  // A notification longer than the server takes: refused after the COMMIT, which committed.
  const c = member(channel, 'c')
  c.notes.add({ channel, payload: 'x'.repeat(9000) })
  const sent = watchWire()
  const group = [
    batches.run({ agentId: 'test', callId: 'b' }, b.statements, b.notes),
    batches.run({ agentId: 'test', callId: 'c' }, c.statements, c.notes),
  ]
  const outcomes = await Promise.allSettled([first, ...group])
  vi.restoreAllMocks()
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected'])
  expect(await rows()).toEqual(['a', 'b', 'c'])
  // The first alone, then the group once, and nothing of it again.
  expect(sent.filter((q) => q.startsWith('BEGIN')).map((q) => q.match(/INSERT INTO t/g)?.length)).toEqual([
    1, 2,
  ])
})
