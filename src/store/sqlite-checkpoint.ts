import { once } from 'node:events'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type Database from 'better-sqlite3'
import type { Logger } from '../log.js'

/**
 * WAL checkpoints off the event loop.
 *
 * In WAL mode SQLite copies the log back into the database file (a checkpoint) once the log holds
 * `wal_autocheckpoint` pages, and by default it does so inside the commit that crossed the line,
 * on the thread that committed: the one that also reads every click. A checkpoint writes those
 * pages and fsyncs the log and the database file, so under load every hundred or so commits froze
 * every request in flight for the length of two fsyncs.
 *
 * Here a worker thread with a connection of its own runs PASSIVE checkpoints instead: it copies
 * what is committed while the main connection goes on committing (a PASSIVE checkpoint takes no
 * lock a writer waits for, and waits for none), and the next write after a complete checkpoint
 * starts the log over. The main connection keeps automatic checkpoints, at {@link BACKSTOP_PAGES},
 * only as a backstop for a checkpointer that cannot keep up or has failed.
 *
 * The worker starts with the first checkpoint asked for, so a store that writes little (most
 * tests, the CLI) never starts one. It is unref'd: it never keeps a process alive.
 */

/** Commits between two checkpoints asked of the worker (about ten pages each for a click). */
export const COMMITS_PER_CHECKPOINT = 64
/** The main connection checkpoints by itself only past this many log pages (16 MiB at 4 KiB). */
export const BACKSTOP_PAGES = 4000

/**
 * The worker, as a CommonJS script (`eval`), so the same code runs from the compiled package and
 * from the TypeScript sources under test; better-sqlite3 is resolved by the main thread.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.path, { fileMustExist: true })
// A checkpoint syncs the log before copying it and the database file after.
db.pragma('synchronous = NORMAL')
db.pragma('busy_timeout = 0')
// A checkpoint copies log frames to the database file and reads few pages: a small page cache,
// not better-sqlite3's 16 MiB, which would stay resident in this thread once filled.
db.pragma('cache_size = -256')
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    parentPort.close()
    return
  }
  try {
    // Commits made during a pass are copied by the next; the log starts over only once a pass
    // has caught up with the last commit, so a few short passes follow a long one.
    let row = db.pragma('wal_checkpoint(PASSIVE)')[0]
    for (let pass = 1; pass < 4 && row.checkpointed < row.log; pass++) row = db.pragma('wal_checkpoint(PASSIVE)')[0]
    parentPort.postMessage({ ok: true, log: row.log, checkpointed: row.checkpointed })
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message ? error.message : error) })
  }
})
`

type Reply = { ok: true; log: number; checkpointed: number } | { ok: false; message: string }

export interface CheckpointerOptions {
  /** @default COMMITS_PER_CHECKPOINT */
  commitsPerCheckpoint?: number
  log?: Pick<Logger, 'warn'>
}

export class Checkpointer {
  readonly #path: string
  readonly #every: number
  readonly #log: Pick<Logger, 'warn'> | undefined
  #worker: Worker | undefined
  #commits = 0
  /** A checkpoint is running in the worker; one more is asked for when it ends, if due. */
  #running = false
  #closed = false
  #failed = false
  /** Checkpoints completed, and the last one's figures (tests, metrics). */
  completed = 0
  last: { log: number; checkpointed: number } | undefined
  readonly #waiters: Array<() => void> = []

  /** `db`: the main connection, whose own checkpoints become the backstop. */
  constructor(db: Database.Database, path: string, options: CheckpointerOptions = {}) {
    this.#path = path
    this.#every = options.commitsPerCheckpoint ?? COMMITS_PER_CHECKPOINT
    this.#log = options.log
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`)
  }

  /** A commit was made: every so many, the worker checkpoints what is committed. */
  committed(): void {
    if (this.#closed || this.#failed) return
    this.#commits++
    if (this.#commits >= this.#every && !this.#running) this.#start()
  }

  /** Resolves after the next checkpoint completes (tests). */
  checkpointed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  #start(): void {
    this.#commits = 0
    this.#running = true
    try {
      this.#worker ??= this.#spawn()
      this.#worker.postMessage('checkpoint')
    } catch (error) {
      this.#fail(error)
    }
  }

  #spawn(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3')
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path: this.#path } })
    worker.unref()
    worker.on('message', (reply: Reply) => this.#done(reply))
    worker.on('error', (error) => this.#fail(error))
    return worker
  }

  #done(reply: Reply): void {
    this.#running = false
    if (!reply.ok) {
      // Busy or locked now (a long read, another process): try again after the next commits.
      this.#log?.warn('WAL checkpoint failed; retrying later', { reason: reply.message })
    } else {
      this.completed++
      this.last = { log: reply.log, checkpointed: reply.checkpointed }
      for (const resolve of this.#waiters.splice(0)) resolve()
    }
    if (!this.#closed && this.#commits >= this.#every) this.#start()
  }

  /** The worker could not start or died: the main connection's backstop checkpoints from now on. */
  #fail(error: unknown): void {
    this.#running = false
    this.#failed = true
    this.#worker = undefined
    if (!this.#closed)
      this.#log?.warn('the WAL checkpointer stopped; checkpoints run on the main thread', { error })
  }

  /** Stops the worker (its connection closed) before the main connection closes. */
  async close(): Promise<void> {
    this.#closed = true
    const worker = this.#worker
    this.#worker = undefined
    if (!worker) return
    // A worker that fails while closing has exited all the same: closing the store goes on.
    const exited = once(worker, 'exit').catch(() => undefined)
    worker.postMessage('close')
    const timer = setTimeout(() => void worker.terminate(), 5000)
    try {
      await exited
    } finally {
      clearTimeout(timer)
    }
  }
}
