/**
 * WAL checkpoints on a worker thread: the SQLite store's main connection commits, and a worker
 * with its own connection copies the log back into the database file, so the event loop never
 * waits for a checkpoint's writes and fsyncs (src/store/sqlite-checkpoint.ts).
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/store/sqlite.js'
import { BACKSTOP_PAGES, Checkpointer, COMMITS_PER_CHECKPOINT } from '../../src/store/sqlite-checkpoint.js'
import { tempDir } from '../helpers/service.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function file(): string {
  const dir = tempDir()
  cleanups.push(dir.cleanup)
  return join(dir.dir, 'checkpoint.db')
}

const card = (callId: string, status: string) => ({ callId, agentId: 'default', status, questions: [] })

/** A SQLite store on a new file, closed after the test, with its checkpointer. */
function fileStore() {
  const path = file()
  const store = new SqliteStore(path)
  cleanups.push(() => store.close())
  const checkpointer = store.checkpointer
  if (!checkpointer) throw new Error('a file store has a checkpointer')
  return { path, store, checkpointer }
}

describe('WAL checkpoints off the event loop', () => {
  it('a worker copies what the store committed into the database file while the store stays open', async () => {
    const { path, store, checkpointer } = fileStore()
    const before = statSync(path).size
    const checkpointed = checkpointer.checkpointed()
    for (let i = 0; i < COMMITS_PER_CHECKPOINT; i++)
      await store.casCard({ agentId: 'default', callId: `c${i}` }, 0, card(`c${i}`, 'open'))
    await checkpointed
    expect(checkpointer.completed).toBeGreaterThanOrEqual(1)
    // The worker's pass covered the commits that asked for it (a frame or more each) ...
    expect(checkpointer.last?.checkpointed).toBeGreaterThanOrEqual(COMMITS_PER_CHECKPOINT)
    // ... and wrote their pages into the database file, which only a checkpoint writes.
    expect(statSync(path).size).toBeGreaterThan(before)
    // Another connection sees every card.
    const db = new Database(path, { readonly: true })
    cleanups.push(() => {
      db.close()
    })
    expect((db.prepare('SELECT count(*) AS n FROM cards').get() as { n: number }).n).toBe(
      COMMITS_PER_CHECKPOINT,
    )
  })

  it('keeps the log short when commits come in bursts, far below the backstop', async () => {
    const { path, store, checkpointer } = fileStore()
    // 25 bursts of clicks, each followed by a pause in which the worker's checkpoint catches up;
    // the first commit after it starts the log over. Without the worker the log would grow to the
    // backstop's BACKSTOP_PAGES pages (16 MiB) before the main connection checkpointed.
    let n = 0
    for (let burst = 0; burst < 25; burst++) {
      const checkpointed = checkpointer.checkpointed()
      for (let i = 0; i < COMMITS_PER_CHECKPOINT; i++, n++) {
        const key = { agentId: 'default', callId: `c${n % 50}` }
        const current = await store.getCard(key)
        await store.casCard(key, current?.version ?? 0, card(key.callId, n % 2 ? 'open' : 'answered'), [
          { ...key, kind: 'interaction', detail: { n } },
        ])
      }
      await checkpointed
    }
    expect(checkpointer.completed).toBeGreaterThanOrEqual(25)
    expect(checkpointer.last?.checkpointed).toBe(checkpointer.last?.log)
    expect(statSync(`${path}-wal`).size).toBeLessThan((BACKSTOP_PAGES * 4096) / 4)
  })

  it('a checkpointer that cannot start says so once and leaves checkpoints to the main connection', async () => {
    const path = file()
    const db = new Database(path)
    cleanups.push(() => {
      db.close()
    })
    db.pragma('journal_mode = WAL')
    const warnings: Array<{ message: string }> = []
    const stopped = new Promise<void>((resolve) => {
      const checkpointer = new Checkpointer(db, join(path, 'not-a-database'), {
        commitsPerCheckpoint: 2,
        log: {
          warn: (message) => {
            warnings.push({ message })
            resolve()
          },
        },
      })
      cleanups.push(() => checkpointer.close())
      for (let i = 0; i < 10; i++) checkpointer.committed()
    })
    await stopped
    expect(warnings).toEqual([
      { message: 'the WAL checkpointer stopped; checkpoints run on the main thread' },
    ])
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_PAGES)
  })

  it('an in-memory store has no checkpointer (and no log)', async () => {
    const store = new SqliteStore(':memory:')
    cleanups.push(() => store.close())
    expect(store.checkpointer).toBeUndefined()
  })
})
