/**
 * Group commit on the SQLite store: writes asked for in one turn share one transaction, each
 * settles only after it is committed and synced to disk, and one failing write is rolled back alone.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { isStorageError } from '../../src/store/errors.js'
import { SqliteStore } from '../../src/store/sqlite.js'
import { GroupCommit } from '../../src/store/sqlite-group.js'
import { MAX_PARALLEL_SYNCS, WalSync } from '../../src/store/sqlite-sync.js'
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

/** A WAL-mode database file with one table `t (x INTEGER PRIMARY KEY)`. */
function walTable(): { path: string; db: Database.Database } {
  const path = file()
  const db = new Database(path)
  cleanups.push(() => db.close())
  db.pragma('journal_mode = WAL')
  db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)')
  return { path, db }
}

describe('group commit', () => {
  it('commits one turn of writes in one transaction; a failing write is rolled back alone', async () => {
    const { path, db } = walTable()
    // Another connection: sees only what is committed.
    const reader = new Database(path, { readonly: true })
    cleanups.push(() => reader.close())
    const count = () => (reader.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n
    const group = new GroupCommit(db, async () => {})
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
    // What the other connection sees while each write runs: writes of one turn are one commit.
    const seen: number[] = []
    const writes = [1, 2, 1, 3].map((x) =>
      group.run(() => {
        seen.push(count())
        insert.run(x)
        return x
      }),
    )
    // Nothing is written before the turn ends.
    expect(count()).toBe(0)
    const settled = await Promise.allSettled(writes)
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect(String((settled[2] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/)
    expect(seen).toEqual([0, 0, 0, 0])
    expect(count()).toBe(3)
    // The next turn is a new commit, which sees the last one.
    await group.run(() => seen.push(count()))
    expect(seen.at(-1)).toBe(3)
  })

  it('no write settles before its commit is durable; a failed sync fails every write it covered', async () => {
    const { db } = walTable()
    const syncs: Array<{ resolve: () => void; reject: (error: Error) => void }> = []
    const group = new GroupCommit(
      db,
      () => new Promise<void>((resolve, reject) => syncs.push({ resolve, reject })),
    )
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
    const settled: number[] = []
    const first = [1, 2].map((x) => group.run(() => insert.run(x)).then(() => settled.push(x)))
    // Committed (the turn ended and the sync was asked for) but not yet durable: nobody settles.
    await new Promise((resolve) => setImmediate(resolve))
    expect(syncs).toHaveLength(1)
    expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(2)
    await Promise.resolve()
    expect(settled).toEqual([])
    syncs[0]?.resolve()
    await Promise.all(first)
    expect(settled).toEqual([1, 2])
    // The next turn's sync fails: its writes are told so, none of them succeeded as far as they know.
    const second = [3, 4].map((x) => group.run(() => insert.run(x)))
    await new Promise((resolve) => setImmediate(resolve))
    syncs[1]?.reject(new Error('EIO'))
    const outcomes = await Promise.allSettled(second)
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected'])
  })

  it('WAL sync: a second sync runs beside the first; past the limit they share one started when a place frees', async () => {
    const { path } = walTable()
    const wal = new WalSync(`${path}-wal`)
    // Up to MAX_PARALLEL_SYNCS start at once: a commit made during a slow sync does not wait for it.
    const parallel = Array.from({ length: MAX_PARALLEL_SYNCS }, () => wal.sync())
    expect(new Set(parallel).size).toBe(MAX_PARALLEL_SYNCS)
    expect(wal.running).toBe(MAX_PARALLEL_SYNCS)
    // Past the limit: every one asked for meanwhile shares one sync, not started yet.
    const queued = [wal.sync(), wal.sync(), wal.sync()]
    expect(queued[1]).toBe(queued[0])
    expect(queued[2]).toBe(queued[0])
    expect(parallel).not.toContain(queued[0])
    expect(wal.running).toBe(MAX_PARALLEL_SYNCS)
    // It starts when a running one ends (so it began after every commit it covers), and never
    // past the limit.
    await parallel[0]
    expect(wal.running).toBeGreaterThan(0)
    expect(wal.running).toBeLessThanOrEqual(MAX_PARALLEL_SYNCS)
    await Promise.all([...parallel, ...queued])
    expect(wal.running).toBe(0)
    // Idle again: the next caller starts a sync of its own.
    const alone = wal.sync()
    expect(queued).not.toContain(alone)
    expect(wal.running).toBe(1)
    await alone
    await wal.close()
    // A sync the file cannot take (Linux refuses fdatasync on /dev/null) rejects with a coded
    // storage error, never a bare errno.
    const refused = new WalSync('/dev/null')
    const failed = await refused.sync().then(
      () => undefined,
      (error: unknown) => error,
    )
    await refused.close()
    expect(isStorageError(failed)).toBe(true)
    expect(String((failed as Error).message)).toMatch(/could not be written to disk \[EINVAL\]/)
    // Nothing to sync for an in-memory database.
    await new WalSync(undefined).sync()
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
