import { closeSync, fdatasyncSync, openSync } from 'node:fs'
import { StorageError } from './errors.js'

/**
 * Durability off the event loop. With `synchronous = FULL`, SQLite fsyncs the WAL inside every
 * commit. Instead the writer thread (sqlite-writer.ts) commits with `synchronous = NORMAL` (in WAL
 * mode: no fsync at commit, checkpoints still sync), commits every batch waiting for it, and
 * then calls `sync()` once: one fdatasync of the WAL file covers all of them. No reply is sent
 * before that, so what a caller is told is written is on disk. The sync blocks only the writer
 * thread, which has nothing else to do meanwhile; batches sent during it wait in its port and
 * share the next one.
 */
export class WalSync {
  #fd: number | undefined

  /** `walPath` undefined: nothing to sync (an in-memory database). */
  constructor(walPath: string | undefined) {
    // The WAL file exists once the database is in WAL mode and has been written (the migration);
    // SQLite keeps it, truncated or reused but never removed, while this connection is open.
    // Read-write although nothing is written through it: Windows flushes only a writable handle.
    this.#fd = walPath === undefined ? undefined : openSync(walPath, 'r+')
  }

  /** Returns once every commit made before this call is durable; a failure is a StorageError. */
  sync(): void {
    if (this.#fd === undefined) return
    try {
      fdatasyncSync(this.#fd)
    } catch (error) {
      throw syncFault(error as NodeJS.ErrnoException)
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
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
