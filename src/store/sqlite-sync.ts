import { close, fdatasync, openSync } from 'node:fs'
import { StorageError } from './errors.js'

/**
 * Durability without blocking the event loop. With `synchronous = FULL`, better-sqlite3 fsyncs the
 * WAL inside every commit, on the one thread that also parses every click: a slow disk stalls all
 * of them. Instead the store commits with `synchronous = NORMAL` (in WAL mode: no fsync at commit,
 * checkpoints still sync) and then calls `sync()`, which fdatasyncs the WAL file on libuv's thread
 * pool. A write's promise settles only after a sync that began after its commit has finished, so
 * what a caller is told is written is on disk, as before; meanwhile the loop goes on serving.
 *
 * Syncs are shared: a sync asked for while one is running waits for that one and then for one more
 * (which covers every commit made in between), so a burst of commits costs two fdatasyncs, not one
 * each.
 */
export class WalSync {
  readonly #fd: number | undefined
  #running: Promise<void> | undefined
  #next: Promise<void> | undefined

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
    if (this.#running === undefined) return this.#start(fd)
    this.#next ??= this.#running.then(
      () => this.#startNext(fd),
      () => this.#startNext(fd),
    )
    return this.#next
  }

  #startNext(fd: number): Promise<void> {
    this.#next = undefined
    return this.#start(fd)
  }

  #start(fd: number): Promise<void> {
    const run = new Promise<void>((resolve, reject) => {
      fdatasync(fd, (error) => {
        if (this.#running === run) this.#running = undefined
        if (error) reject(syncFault(error))
        else resolve()
      })
    })
    this.#running = run
    return run
  }

  /** Waits for the syncs under way, then closes the file. */
  async close(): Promise<void> {
    const fd = this.#fd
    if (fd === undefined) return
    while (this.#running !== undefined || this.#next !== undefined) {
      await (this.#next ?? this.#running)?.catch(() => {})
    }
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
