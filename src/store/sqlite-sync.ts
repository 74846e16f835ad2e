import { close, fdatasync, openSync } from 'node:fs'
import { StorageError } from './errors.js'

/**
 * How many fdatasyncs of the WAL may run at once. A sync asked for while one runs starts at once
 * beside it instead of waiting for it: both return when the disk has flushed, so a commit made
 * during a slow sync waits for about that one sync, not for it and then one more. The limit keeps
 * libuv's thread pool (4 threads by default) free for other file work.
 */
export const MAX_PARALLEL_SYNCS = 2

/**
 * Durability without blocking the event loop. With `synchronous = FULL`, better-sqlite3 fsyncs the
 * WAL inside every commit, on the one thread that also parses every click: a slow disk stalls all
 * of them. Instead the store commits with `synchronous = NORMAL` (in WAL mode: no fsync at commit,
 * checkpoints still sync) and then calls `sync()`, which fdatasyncs the WAL file on libuv's thread
 * pool. A write's promise settles only after a sync that began after its commit has finished, so
 * what a caller is told is written is on disk, as before; meanwhile the loop goes on serving.
 *
 * Up to {@link MAX_PARALLEL_SYNCS} syncs run at once; past that, the syncs asked for share one
 * that starts as soon as a running one ends (it covers every commit made before it starts), so a
 * burst of commits costs a few fdatasyncs, not one each.
 */
export class WalSync {
  readonly #fd: number | undefined
  #running = 0
  /** The sync waiting for a free place, and what starts it. */
  #queued: { done: Promise<void>; start: () => void } | undefined
  /** Who waits for nothing to run or wait any more (close). */
  #drained: Array<() => void> = []

  /** `walPath` undefined: nothing to sync (an in-memory database). */
  constructor(walPath: string | undefined) {
    // The WAL file exists once the database is in WAL mode and has been written (the migration);
    // SQLite keeps it, truncated or reused but never removed, while this connection is open.
    // Read-write although nothing is written through it: Windows flushes only a writable handle.
    this.#fd = walPath === undefined ? undefined : openSync(walPath, 'r+')
  }

  /** Settles once every commit made before this call is durable. */
  sync(): Promise<void> {
    const fd = this.#fd
    if (fd === undefined) return Promise.resolve()
    if (this.#running < MAX_PARALLEL_SYNCS) return this.#start(fd)
    if (this.#queued === undefined) {
      let start = () => {}
      const done = new Promise<void>((resolve, reject) => {
        start = () => this.#start(fd).then(resolve, reject)
      })
      this.#queued = { done, start }
    }
    return this.#queued.done
  }

  /** How many syncs run now (tests). */
  get running(): number {
    return this.#running
  }

  #start(fd: number): Promise<void> {
    this.#running++
    return new Promise<void>((resolve, reject) => {
      fdatasync(fd, (error) => {
        this.#running--
        const queued = this.#queued
        this.#queued = undefined
        queued?.start()
        if (this.#running === 0) for (const drained of this.#drained.splice(0)) drained()
        if (error) reject(syncFault(error))
        else resolve()
      })
    })
  }

  /** Waits for the syncs under way, then closes the file. */
  async close(): Promise<void> {
    const fd = this.#fd
    if (fd === undefined) return
    if (this.#running > 0) await new Promise<void>((resolve) => this.#drained.push(resolve))
    await new Promise<void>((resolve) => close(fd, () => resolve()))
  }
}

/** A failed fdatasync: the commits it covered may not be on disk, so their writers are told. */
function syncFault(error: NodeJS.ErrnoException): StorageError {
  const full = error.code === 'ENOSPC' || error.code === 'EDQUOT'
  return new StorageError(
    full ? 'full' : 'io',
    `storage unavailable: ${full ? 'the disk holding the database is full' : 'the database could not be written to disk'} [${error.code ?? 'sync'}]`,
    { cause: error },
  )
}
