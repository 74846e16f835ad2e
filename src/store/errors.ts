import { AskbridgeError } from '../errors.js'

/**
 * What went wrong with the storage underneath, in words an operator acts on. Every store maps
 * its driver's errors to one of these so callers (the HTTP API, the adapters) treat a full disk
 * on SQLite and a lost PostgreSQL connection alike: "not stored, try again", never "applied".
 */
export type StorageFault =
  /** No space left (SQLITE_FULL, ENOSPC, PostgreSQL 53100). */
  | 'full'
  /** The database or its directory cannot be written (SQLITE_READONLY, EROFS, EACCES). */
  | 'read_only'
  /** Another writer holds the lock past the busy timeout (SQLITE_BUSY / SQLITE_LOCKED). */
  | 'locked'
  /** The database cannot be reached or opened (SQLITE_CANTOPEN, a PostgreSQL connection error). */
  | 'unavailable'
  /** Any other I/O failure of the storage (SQLITE_IOERR, a dropped connection mid-query). */
  | 'io'

/** The one error code every storage fault carries; HTTP answers it with 503. */
export const STORAGE_UNAVAILABLE = 'STORAGE_UNAVAILABLE' as const

/**
 * A write or read that did not happen because of the storage, not because of the request.
 * Nothing was changed by the failing operation; the same request can be retried once the
 * storage recovers. `fault` says which way it failed (for logs and metrics).
 */
export class StorageError extends AskbridgeError {
  override readonly name = 'StorageError' as const
  readonly code = STORAGE_UNAVAILABLE
  readonly fault: StorageFault

  constructor(fault: StorageFault, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.fault = fault
  }

  override toJSON(): { name: 'StorageError'; code: typeof STORAGE_UNAVAILABLE; message: string } {
    return { name: this.name, code: this.code, message: this.message }
  }
}

export function isStorageError(error: unknown): error is StorageError {
  return (
    error instanceof StorageError ||
    (typeof error === 'object' &&
      error !== null &&
      (error as { name?: unknown }).name === 'StorageError' &&
      (error as { code?: unknown }).code === STORAGE_UNAVAILABLE)
  )
}

const SQLITE_FAULTS: Array<[RegExp, StorageFault, string]> = [
  [/^SQLITE_FULL/, 'full', 'the disk holding the database is full'],
  [/^SQLITE_READONLY/, 'read_only', 'the database is read-only'],
  [/^SQLITE_(BUSY|LOCKED)/, 'locked', 'the database is locked by another writer'],
  [/^SQLITE_CANTOPEN/, 'unavailable', 'the database file cannot be opened'],
  [/^SQLITE_(IOERR|CORRUPT|NOTADB|PERM|AUTH)/, 'io', 'the database could not be read or written'],
]

/**
 * Map a better-sqlite3 error (its `code` is `SQLITE_*`) to a StorageError; anything else
 * (a programming error, a constraint we rely on) is returned unchanged.
 */
export function fromSqliteError(error: unknown, path?: string): unknown {
  if (isStorageError(error)) return error
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return error
  for (const [pattern, fault, words] of SQLITE_FAULTS) {
    if (pattern.test(code)) {
      const where = path === undefined || path === ':memory:' ? '' : ` (${path})`
      return new StorageError(fault, `storage unavailable: ${words}${where} [${code}]`, { cause: error })
    }
  }
  return error
}
