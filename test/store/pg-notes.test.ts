import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterEach, expect, it, vi } from 'vitest'
import { TransactionNotes } from '../../src/store/pg-connect.js'
import type { StoreChange, StoreChangeListener } from '../../src/store/pg-notify.js'
import type { PostgresStore } from '../../src/store/postgres.js'
import type { CallKey, CallRecord, CallStep } from '../../src/store/types.js'
import { PG_URL, requirePostgres } from '../helpers/pg.js'
import { askAndAnswer, storesOnOneSchema, watchWire } from '../helpers/pg-store.js'

// A write that ends its transaction in one round trip sends its notifications just after the
// COMMIT, in the same round trip: only what committed is announced, and only once it has.

const key: CallKey = { agentId: 'alice', callId: 'call-1' }
const { asked, answered } = askAndAnswer(key)
const answering: CallStep = (call: CallRecord | undefined) => (call?.state === 'open' ? [answered] : [])

const stores = storesOnOneSchema()
const open = stores.open
const closing: Array<() => Promise<unknown>> = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(closing.splice(0).map((close) => close()))
  await stores.end()
})

/** What another process hears, until a note for `sentinel` (sent last) has come. */
async function hear(
  watcher: PostgresStore,
): Promise<{ heard: StoreChange[]; until: (callId: string) => Promise<void> }> {
  const heard: StoreChange[] = []
  const listener: StoreChangeListener = (change) => {
    if (change.kind !== 'resync') heard.push(change)
  }
  closing.push(async () => unwatch())
  const unwatch = watcher.watch(listener)
  await watcher.watching()
  return {
    heard,
    until: (callId) => vi.waitFor(() => expect(heard.some((c) => c.callId === callId)).toBe(true)),
  }
}

/** A card write on another call, whose note comes after any the writes before it sent. */
async function sentinel(store: PostgresStore): Promise<string> {
  const callId = `sentinel-${randomBytes(3).toString('hex')}`
  expect(await store.casCard({ agentId: 'alice', callId }, 0, { sentinel: true })).toBe(1)
  return callId
}

const aboutKey = (heard: StoreChange[]) =>
  heard.filter((c) => c.callId === key.callId).map((c) => (c.kind === 'card' ? 'card' : c.type))

/** A fresh channel, a connection listening on it (what it hears) and one to write with. */
async function channelAndWriter(): Promise<{ channel: string; writer: pg.Client; heard: string[] }> {
  await requirePostgres()
  const channel = `askbridge_t_${randomBytes(4).toString('hex')}`
  const listener = new pg.Client({ connectionString: PG_URL })
  const writer = new pg.Client({ connectionString: PG_URL })
  closing.push(
    () => listener.end(),
    () => writer.end(),
  )
  await Promise.all([listener.connect(), writer.connect()])
  const heard: string[] = []
  listener.on('notification', (m) => heard.push(m.payload ?? ''))
  await listener.query(`LISTEN "${channel}"`)
  return { channel, writer, heard }
}

it('the notes go after the COMMIT, only when the mark their write set committed', async () => {
  const { channel, writer, heard } = await channelAndWriter()

  const rolledBack = new TransactionNotes()
  const rolledBackMark = rolledBack.ifWritten([{ channel, payload: 'rolled back' }])
  await writer.query(`BEGIN; SELECT ${rolledBackMark}; ROLLBACK; BEGIN; ${rolledBack.commit()}`)
  const committed = new TransactionNotes()
  const committedMark = committed.ifWritten([
    { channel, payload: "committed, it's" },
    { channel, payload: 'and its second note' },
  ])
  await writer.query(`BEGIN; SELECT ${committedMark}; ${committed.commit()}`)
  // One statement per transaction marks its write.
  expect(() => committed.ifWritten([])).toThrow(/one statement/)
  // A mark still set on the connection does not send another write's notes.
  const unmarked = new TransactionNotes()
  unmarked.ifWritten([{ channel, payload: 'never marked' }])
  await writer.query(`BEGIN; SELECT 1; ${unmarked.commit()}`)
  await writer.query(`BEGIN; ${rolledBack.commit()}`)
  await writer.query(`SELECT pg_notify('${channel}', 'sentinel')`)
  await vi.waitFor(() => expect(heard).toContain('sentinel'))
  expect(heard).toEqual(["committed, it's", 'and its second note', 'sentinel'])
})

it("a transaction's notes go only with a COMMIT that commits: not after an aborted transaction's", async () => {
  const { channel, writer, heard } = await channelAndWriter()

  expect(new TransactionNotes().commit()).toBe('COMMIT')
  // A write that marks itself but has nothing to announce adds no statement after the COMMIT.
  const nothing = new TransactionNotes()
  nothing.ifWritten([])
  expect(nothing.commit()).toBe('COMMIT')
  // A statement failed and its error was not passed on: a bare COMMIT would end the transaction
  // as a rollback without an error, and a NOTIFY after it would still run.
  const aborted = new TransactionNotes()
  aborted.add({ channel, payload: 'aborted' })
  await writer.query('BEGIN')
  await writer.query('SELECT 1/0').catch(() => undefined)
  await expect(writer.query(aborted.commit())).rejects.toThrow(/aborted/)
  await writer.query('ROLLBACK')
  const committed = new TransactionNotes()
  committed.add({ channel, payload: 'committed' }, { channel, payload: "and it's second" })
  await writer.query('BEGIN')
  await writer.query(committed.commit())
  await writer.query(`SELECT pg_notify('${channel}', 'sentinel')`)
  await vi.waitFor(() => expect(heard).toContain('sentinel'))
  expect(heard).toEqual(['committed', "and it's second", 'sentinel'])
})

it('a completing click commits and notifies in one round trip; a click on a card that moved notifies nothing', async () => {
  const store = await open()
  const other = await open()
  const { heard, until } = await hear(other)
  await store.append(asked)
  expect(await store.casCard(key, 0, { n: 0 })).toBe(1)

  // Decided on version 1 as read, but the card moved on elsewhere: nothing written, nothing said.
  await store.findCards(key.callId)
  expect(await other.casCard(key, 1, { n: 'other' })).toBe(2)
  expect(await store.casCard(key, 1, { n: 'late' }, [], answering)).toBeUndefined()
  await until(await sentinel(store))
  // `other` does not hear its own write: what it heard of the call is the ask and the first card.
  expect(aboutKey(heard)).toEqual(['asked', 'card'])

  await store.findCards(key.callId)
  const sent = watchWire()
  expect(await store.casCard(key, 2, { n: 1 }, [], answering)).toBe(3)
  vi.restoreAllMocks()
  expect(sent).toHaveLength(1)
  expect(sent[0]).toMatch(
    /; COMMIT; SELECT pg_notify\(.*WHERE current_setting\('askbridge\.wrote', true\) = '\d+'$/s,
  )
  await until(await sentinel(store))
  expect(aboutKey(heard)).toEqual(['asked', 'card', 'card', 'answered'])
  expect((await store.getCall(key))?.state).toBe('settled')
})

it('a card write of its own notifies once written, and not when its compare-and-set fails', async () => {
  const store = await open()
  const other = await open()
  const { heard, until } = await hear(other)
  expect(await store.casCard(key, 0, { n: 0 })).toBe(1)
  expect(await store.casCard(key, 1, { n: 1 })).toBe(2)
  expect(await store.casCard(key, 1, { n: 'stale' })).toBeUndefined()
  await until(await sentinel(store))
  expect(aboutKey(heard)).toEqual(['card', 'card'])
  expect((await store.getCard(key))?.state).toEqual({ n: 1 })
})

it('a transaction of several statements notifies after its COMMIT, once it has committed, and not when rolled back', async () => {
  const store = await open()
  const other = await open()
  const { heard, until } = await hear(other)

  // An ask: two round trips. The call's lock, its row and the event's seq; then the event, the call
  // row and the lease in one statement with the COMMIT, its note after the COMMIT.
  const sent = watchWire()
  await store.append(asked)
  vi.restoreAllMocks()
  expect(sent).toEqual([
    expect.stringMatching(/^BEGIN; SELECT pg_advisory_xact_lock.*; SELECT record .*; SELECT nextval/s),
    expect.stringMatching(
      /^WITH event AS \(\s*INSERT INTO askbridge_events .*INSERT INTO askbridge_calls .*lease_owner, lease_until.*; SELECT set_config\('askbridge\.committed', '(\d+)', false\); COMMIT; SELECT pg_notify\(.*WHERE current_setting\('askbridge\.committed', true\) = '\1'$/s,
    ),
  ])
  const rows = await stores.query(
    'SELECT lease_owner, lease_until FROM askbridge_calls WHERE agent_id = $1 AND call_id = $2',
    [key.agentId, key.callId],
  )
  expect(rows).toEqual([{ lease_owner: expect.any(String), lease_until: expect.anything() }])
  // No statement before the COMMIT notifies.
  expect(sent.filter((q) => q.includes('pg_notify') && !q.includes('; COMMIT; '))).toEqual([])

  // A card written and then its call step refused: rolled back, so nothing is said of the card.
  expect(await store.casCard(key, 0, { n: 0 })).toBe(1)
  const refused = store.casCard(key, 1, { n: 'refused' }, [], () => {
    throw new Error('refused')
  })
  await expect(refused).rejects.toThrow('refused')
  expect((await store.getCard(key))?.version).toBe(1)

  // The card and its call step in one transaction (the step's row was not the one read with the
  // card): the card's note and the event's, after the COMMIT.
  expect(await store.casCard(key, 1, { n: 1 }, [], answering)).toBe(2)
  await until(await sentinel(store))
  expect(aboutKey(heard)).toEqual(['asked', 'card', 'card', 'answered'])
  expect((await store.getCall(key))?.state).toBe('settled')
})
