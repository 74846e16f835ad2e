/**
 * The SQLite writer thread: it holds the writing connection of every database file the process
 * has open and commits their batches of writes (sqlite-writes.ts), then makes each durable
 * (sqlite-sync.ts) before it replies. The main thread only decides and reads, so a commit's
 * statements, page writes and savepoints no longer take turns with the requests it serves.
 * Started by sqlite-writer-thread.ts; the messages are `WriterRequest` and `WriterReply`.
 */
import { parentPort } from 'node:worker_threads'
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
  wal: WalSync
}

const port = parentPort
if (!port) throw new Error('sqlite-writer runs as a worker thread')
const connections = new Map<number, Connection | { error: WireError }>()

function open(path: string, durable: boolean): Connection {
  const db = new Database(path, { fileMustExist: true })
  try {
    // Commits do not fsync: each batch is synced below, off this thread's turn (sqlite-sync.ts).
    db.pragma('synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    db.pragma(`cache_size = ${PAGE_CACHE_KIB}`)
    // This connection commits, so SQLite's own checkpoints would run here: only as the backstop
    // of the checkpointer thread (sqlite-checkpoint.ts).
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`)
    return { db, writes: new SqliteWrites(db), wal: new WalSync(durable ? `${db.name}-wal` : undefined) }
  } catch (error) {
    db.close()
    throw error
  }
}

async function commit(id: number, batch: number, ops: WriteOp[]): Promise<WriterReply> {
  const connection = connections.get(id)
  if (!connection) return { type: 'failed', id, batch, error: toWire(new Error('no such connection')) }
  if ('error' in connection) return { type: 'failed', id, batch, error: connection.error }
  try {
    const outcomes = connection.writes.commit(ops)
    await connection.wal.sync()
    return { type: 'committed', id, batch, outcomes }
  } catch (error) {
    return { type: 'failed', id, batch, error: toWire(error) }
  }
}

port.on('message', (request: WriterRequest) => {
  switch (request.type) {
    case 'open':
      try {
        connections.set(request.id, open(request.path, request.durable))
      } catch (error) {
        connections.set(request.id, { error: toWire(error) })
      }
      return
    case 'commit':
      // Committed now, in arrival order; the reply waits for the sync while the next batch commits.
      void commit(request.id, request.batch, request.ops).then((reply) => port.postMessage(reply))
      return
    case 'close': {
      const connection = connections.get(request.id)
      connections.delete(request.id)
      const closing =
        connection && !('error' in connection)
          ? connection.wal.close().finally(() => connection.db.close())
          : Promise.resolve()
      void closing.then(
        () => port.postMessage({ type: 'closed', id: request.id } satisfies WriterReply),
        () => port.postMessage({ type: 'closed', id: request.id } satisfies WriterReply),
      )
      return
    }
  }
})
