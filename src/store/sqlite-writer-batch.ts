import Database from 'better-sqlite3'
import { BACKSTOP_PAGES } from './sqlite-checkpoint.js'
import { PAGE_CACHE_KIB } from './sqlite-open.js'
import { WalSync } from './sqlite-sync.js'
import { type Outcome, SqliteWrites, toWire, type WireError, type WriteOp } from './sqlite-writes.js'

export type WriterRequest =
  | { type: 'open'; id: number; path: string; durable: boolean }
  | { type: 'commit'; id: number; batch: number; ops: WriteOp[] }
  | { type: 'close'; id: number }

export type WriterReply =
  | { type: 'committed'; id: number; batch: number; outcomes: Outcome[] }
  | { type: 'failed'; id: number; batch: number; error: WireError }
  | { type: 'closed'; id: number }

interface Connection {
  db: Database.Database
  writes: SqliteWrites
  wal: ReturnType<SyncOpener>
}

/** How a file is synced: the WAL's fdatasync (sqlite-sync.ts); tests count the calls. */
export type SyncOpener = (walPath: string | undefined) => Pick<WalSync, 'sync' | 'close'>

/**
 * What the writer thread does with the requests waiting for it (sqlite-writer.ts takes every one
 * its port holds): opens and closes writing connections, and commits each batch in the order sent,
 * each in a transaction of its own. Before it replies to any commit, each file written to is
 * synced once, so one fdatasync covers every batch taken together, and a sync that fails fails
 * every batch it covered (their writes may not be on disk), and none on another file.
 */
export class WriterBatches {
  readonly #connections = new Map<number, Connection | { error: WireError }>()
  readonly #openSync: SyncOpener

  constructor(openSync: SyncOpener = (walPath) => new WalSync(walPath)) {
    this.#openSync = openSync
  }

  /** Carry out `requests` in order; the replies, in the same order, once they may be sent. */
  handle(requests: WriterRequest[]): WriterReply[] {
    const replies: WriterReply[] = []
    const unsynced = new Map<Connection, number[]>()
    for (const request of requests) {
      if (request.type === 'open') {
        try {
          this.#connections.set(request.id, this.#open(request.path, request.durable))
        } catch (error) {
          this.#connections.set(request.id, { error: toWire(error) })
        }
      } else if (request.type === 'commit') {
        const { id, batch } = request
        const connection = this.#connections.get(id)
        if (!connection) {
          replies.push({ type: 'failed', id, batch, error: toWire(new Error('no such connection')) })
        } else if ('error' in connection) {
          replies.push({ type: 'failed', id, batch, error: connection.error })
        } else {
          try {
            replies.push({ type: 'committed', id, batch, outcomes: connection.writes.commit(request.ops) })
            const covered = unsynced.get(connection) ?? []
            covered.push(replies.length - 1)
            unsynced.set(connection, covered)
          } catch (error) {
            replies.push({ type: 'failed', id, batch, error: toWire(error) })
          }
        }
      } else {
        const connection = this.#connections.get(request.id)
        this.#connections.delete(request.id)
        if (connection && !('error' in connection)) {
          // Its commits taken with this close are synced before the file is let go.
          this.#sync(connection, unsynced, replies)
          connection.wal.close()
          connection.db.close()
        }
        replies.push({ type: 'closed', id: request.id })
      }
    }
    for (const connection of unsynced.keys()) this.#sync(connection, unsynced, replies)
    return replies
  }

  #sync(connection: Connection, unsynced: Map<Connection, number[]>, replies: WriterReply[]): void {
    const covered = unsynced.get(connection)
    if (!covered) return
    unsynced.delete(connection)
    try {
      connection.wal.sync()
    } catch (error) {
      const wire = toWire(error)
      for (const i of covered) {
        const { id, batch } = replies[i] as { id: number; batch: number }
        replies[i] = { type: 'failed', id, batch, error: wire }
      }
    }
  }

  #open(path: string, durable: boolean): Connection {
    const db = new Database(path, { fileMustExist: true })
    try {
      // Commits do not fsync: each group of batches is synced once, after its commits (sqlite-sync.ts).
      db.pragma('synchronous = NORMAL')
      db.pragma('busy_timeout = 5000')
      db.pragma(`cache_size = ${PAGE_CACHE_KIB}`)
      // This connection commits, so SQLite's own checkpoints would run here: only as the backstop
      // of the checkpointer thread (sqlite-checkpoint.ts).
      db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`)
      return { db, writes: new SqliteWrites(db), wal: this.#openSync(durable ? `${db.name}-wal` : undefined) }
    } catch (error) {
      db.close()
      throw error
    }
  }
}
