/**
 * Group commit on the SQLite store: writes asked for in one turn share one transaction, each
 * settles only after it is committed and synced to disk, one failing write is rolled back alone,
 * and a decision taken on a row that changed before its commit is taken again.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { isStorageError, StorageError } from '../../src/store/errors.js'
import { SqliteStore } from '../../src/store/sqlite.js'
import { GroupCommit, type Settled } from '../../src/store/sqlite-group.js'
import { migrateSqlite } from '../../src/store/sqlite-schema.js'
import { WalSync } from '../../src/store/sqlite-sync.js'
import { WriterBatches, type WriterRequest } from '../../src/store/sqlite-writer-batch.js'
import { SqliteWrites, STALE, STEP_FAILED } from '../../src/store/sqlite-writes.js'
import type { StoreEvent } from '../../src/store/types.js'
import { tempDir } from '../helpers/service.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c()
})

function file(): string {
  const dir = tempDir()
  cleanups.push(dir.cleanup)
  return join(dir.dir, 'group.db')
}

const k1 = { agentId: 'a', callId: 'c1' }
const k2 = { agentId: 'a', callId: 'c2' }
const asked = (key: typeof k1): StoreEvent => ({
  type: 'asked',
  ...key,
  questions: [{ id: 'go', question: 'Go?', options: [{ label: 'Yes' }, { label: 'No' }] }],
  timed: false,
})
const answered: StoreEvent = { type: 'answered', ...k1, answers: [{ id: 'go', selected: ['Yes'] }] }

/** A WAL-mode database file with one table `t (x INTEGER PRIMARY KEY)`. */
function walTable(): { path: string; db: Database.Database } {
  const path = file()
  const db = new Database(path)
  cleanups.push(() => db.close())
  db.pragma('journal_mode = WAL')
  db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)')
  return { path, db }
}

/** A migrated database file in WAL mode, closed again (the writer thread opens it). */
function migrated(): string {
  const path = file()
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  migrateSqlite(db, path)
  db.close()
  return path
}

/** How many events a file holds, as another connection sees what is committed. */
function eventsIn(path: string): number {
  const reader = new Database(path, { readonly: true })
  try {
    return (reader.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n
  } finally {
    reader.close()
  }
}

describe('group commit', () => {
  it("sends one turn's writes as one batch; nothing settles before its commit; a failed commit fails them all", async () => {
    const batches: string[][] = []
    const commits: Array<{ resolve: () => void; reject: (error: Error) => void }> = []
    const group = new GroupCommit<string>(
      (ops) =>
        new Promise<Settled[]>((resolve, reject) => {
          batches.push(ops)
          const outcomes = ops.map(
            (op): Settled =>
              op === 'bad' ? { ok: false, error: new Error('bad') } : { ok: true, value: op.toUpperCase() },
          )
          commits.push({ resolve: () => resolve(outcomes), reject })
        }),
    )
    const settled: string[] = []
    const first = ['a', 'bad', 'b'].map((op) =>
      group.run<string>(op).then(
        (value) => settled.push(value),
        (error: Error) => settled.push(`rejected ${error.message}`),
      ),
    )
    // Nothing is sent before the turn ends; then the whole turn goes as one batch, in order.
    expect(batches).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(batches).toEqual([['a', 'bad', 'b']])
    // Sent but not yet committed: nobody settles.
    await Promise.resolve()
    expect(settled).toEqual([])
    commits[0]?.resolve()
    await Promise.all(first)
    expect(settled).toEqual(['A', 'rejected bad', 'B'])
    // The next turn's commit fails: its writes are told so, none of them succeeded as far as they know.
    const second = ['c', 'd'].map((op) => group.run(op))
    await new Promise((resolve) => setImmediate(resolve))
    expect(batches).toHaveLength(2)
    const flushed = group.flush()
    commits[1]?.reject(new Error('EIO'))
    const outcomes = await Promise.allSettled(second)
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])
    // flush (what close waits for) settles once every batch sent has.
    await flushed
  })

  it('the writes: one batch is one transaction, one failing write is rolled back alone', () => {
    const path = file()
    const db = new Database(path)
    cleanups.push(() => db.close())
    db.pragma('journal_mode = WAL')
    migrateSqlite(db, path)
    // Another connection: sees only what is committed.
    const reader = new Database(path, { readonly: true })
    cleanups.push(() => reader.close())
    const events = () => (reader.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n
    const writes = new SqliteWrites(db)
    const outcomes = writes.commit([
      { op: 'append', events: [asked(k1)], at: [1000] },
      // No agent: the events table refuses it (NOT NULL), inside this write's savepoint only.
      { op: 'append', events: [asked({ ...k2, agentId: null as unknown as string })], at: [1001] },
      { op: 'append', events: [asked(k2)], at: [1002] },
    ])
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true])
    expect(outcomes[1]).toMatchObject({ ok: false, error: { code: 'SQLITE_CONSTRAINT_NOTNULL' } })
    expect(events()).toBe(2)
  })

  it('a decision applies only to the row it was taken on: otherwise it is stale and writes nothing, its card neither', () => {
    const path = file()
    const db = new Database(path)
    cleanups.push(() => db.close())
    db.pragma('journal_mode = WAL')
    migrateSqlite(db, path)
    const writes = new SqliteWrites(db)
    const row = () =>
      (
        db.prepare('SELECT data FROM calls WHERE agent_id = ? AND call_id = ?').get(k1.agentId, k1.callId) as
          | { data: string }
          | undefined
      )?.data ?? null
    const card = (expect: string | null, failed = false) => ({
      op: 'card' as const,
      key: k1,
      expectedVersion: 0,
      status: 'answered',
      state: '{}',
      at: 2000,
      audit: [],
      step: { expect, events: failed ? [] : [answered], at: failed ? [] : [2000], failed },
    })
    const cards = () => (db.prepare('SELECT count(*) AS n FROM cards').get() as { n: number }).n
    // Decided on "no such call", committed after the call was asked: stale.
    const [first, second] = writes.commit([
      { op: 'append', events: [asked(k1)], at: [1000] },
      { op: 'decide', key: k1, expect: null, events: [answered], at: [1001] },
    ])
    expect(first).toEqual({ ok: true, value: undefined })
    expect(second).toEqual({ ok: true, value: STALE })
    expect(JSON.parse(row() ?? '{}').state).toBe('open')
    // A card whose call step was decided on an old row: the card is not written either.
    expect(writes.commit([card(null)])).toEqual([{ ok: true, value: STALE }])
    expect(cards()).toBe(0)
    // A step that refused (threw) on the latest row: the card is not written, and the store rethrows.
    expect(writes.commit([card(row(), true)])).toEqual([{ ok: true, value: STEP_FAILED }])
    expect(cards()).toBe(0)
    // On the latest row: card and answer together.
    expect(writes.commit([card(row())])).toEqual([{ ok: true, value: 1 }])
    expect(cards()).toBe(1)
    expect(JSON.parse(row() ?? '{}').state).toBe('settled')
  })

  it('the store: decisions raced on one call in one turn each see the one before (decided again when stale)', async () => {
    const store = new SqliteStore(file())
    await store.append(asked(k1))
    // Ten answers to one call at once: each decision reads the row, the first commits, the rest
    // were taken on the old row and are taken again, now refusing.
    const won = await Promise.all(
      Array.from({ length: 10 }, () =>
        store.transact(k1, (call) =>
          call?.state === 'open' ? { events: [answered], result: true } : { events: [], result: false },
        ),
      ),
    )
    expect(won.filter(Boolean)).toHaveLength(1)
    expect((await store.events({ callId: k1.callId })).map((e) => e.type)).toEqual(['asked', 'answered'])
    // A refusal thrown on an old row is decided again; thrown on the latest, it reaches the caller.
    const refusal = await store
      .transact(k1, (call) => {
        if (call?.state === 'settled') throw new Error('already answered')
        return { events: [], result: false }
      })
      .catch((error: Error) => error.message)
    expect(refusal).toBe('already answered')
    await store.close()
  })

  it('WAL sync: returns once synced; a file that cannot be synced is a coded storage error', () => {
    const { path } = walTable()
    const wal = new WalSync(`${path}-wal`)
    wal.sync()
    wal.close()
    // Linux refuses fdatasync on /dev/null: a coded storage error, never a bare errno.
    const refused = new WalSync('/dev/null')
    let failed: unknown
    try {
      refused.sync()
    } catch (error) {
      failed = error
    }
    refused.close()
    expect(isStorageError(failed)).toBe(true)
    expect(String((failed as Error).message)).toMatch(/could not be written to disk \[EINVAL\]/)
    // Nothing to sync for an in-memory database.
    new WalSync(undefined).sync()
  })

  it('the writer thread: batches taken together are committed in order, then each file is synced once before any reply', () => {
    const files = [migrated(), migrated()]
    // Each sync counts, and reads what is committed to its file when it runs.
    const syncs: Array<{ file: string; events: number }> = []
    let failing: string | undefined
    const batches = new WriterBatches((walPath) => ({
      sync: () => {
        const file = String(walPath).replace(/-wal$/, '')
        syncs.push({ file, events: eventsIn(file) })
        if (file === failing) throw new StorageError('io', 'storage unavailable: the disk failed [EIO]')
      },
      close: () => {},
    }))
    const append = (id: number, batch: number, key: typeof k1, at: number): WriterRequest => ({
      type: 'commit',
      id,
      batch,
      ops: [{ op: 'append', events: [asked(key)], at: [at] }],
    })
    const opened = batches.handle([
      { type: 'open', id: 1, path: files[0] as string, durable: true },
      { type: 'open', id: 2, path: files[1] as string, durable: true },
    ])
    expect(opened).toEqual([])
    const replies = batches.handle([append(1, 0, k1, 1), append(2, 0, k1, 2), append(1, 1, k2, 3)])
    expect(replies.map((r) => [r.type, r.id, 'batch' in r ? r.batch : undefined])).toEqual([
      ['committed', 1, 0],
      ['committed', 2, 0],
      ['committed', 1, 1],
    ])
    // One sync per file, after every batch to it was committed.
    expect(syncs).toEqual([
      { file: files[0], events: 2 },
      { file: files[1], events: 1 },
    ])
    // A sync that fails fails every batch it covered, and none on the other file.
    failing = files[0]
    const failed = batches.handle([append(1, 2, { ...k1, callId: 'c3' }, 4), append(2, 1, k2, 5)])
    expect(failed[0]).toMatchObject({
      type: 'failed',
      id: 1,
      batch: 2,
      error: { code: 'STORAGE_UNAVAILABLE', fault: 'io' },
    })
    expect(failed[1]).toMatchObject({ type: 'committed', id: 2, batch: 1 })
    // A close syncs what was committed before it in the same group, then lets the file go.
    failing = undefined
    syncs.length = 0
    const closed = batches.handle([append(2, 2, { ...k2, callId: 'c4' }, 6), { type: 'close', id: 2 }])
    expect(closed.map((r) => r.type)).toEqual(['committed', 'closed'])
    expect(syncs).toEqual([{ file: files[1], events: 3 }])
    expect(batches.handle([append(2, 3, k1, 7)])[0]).toMatchObject({
      type: 'failed',
      error: { message: 'no such connection' },
    })
    batches.handle([{ type: 'close', id: 1 }])
  })

  it('the store: concurrent compare-and-sets and audits of one turn all land, each settling after the commit', async () => {
    const path = file()
    const store = new SqliteStore(path)
    const keys = Array.from({ length: 20 }, (_, i) => ({ agentId: 'a', callId: `c${i}` }))
    const versions = await Promise.all(
      keys.map((k) => store.casCard(k, 0, { status: 'open' }, [{ ...k, kind: 'asked' }])),
    )
    expect(versions).toEqual(keys.map(() => 1))
    // Losers in the same turn as the winner: exactly one write per card, the others undefined.
    const again = await Promise.all(
      keys.flatMap((k) => [1, 2].map((n) => store.casCard(k, 1, { status: 'open', n }))),
    )
    expect(again.filter((v) => v === 2)).toHaveLength(20)
    expect(again.filter((v) => v === undefined)).toHaveLength(20)
    await store.close()
    // Reopened: everything acknowledged is there.
    const reopened = new SqliteStore(path)
    expect((await reopened.listAudit()).length).toBe(20)
    expect((await reopened.getCard(keys[0] as (typeof keys)[0]))?.version).toBe(2)
    await reopened.close()
  })
})
