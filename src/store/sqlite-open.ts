/** Opening the SQLite store's file: a private (0600) file, WAL and its pragmas, the migrations and the checkpointer. */
import { closeSync, openSync } from 'node:fs'
import Database from 'better-sqlite3'
import type { Logger } from '../log.js'
import { fromSqliteError, StorageError } from './errors.js'
import { Checkpointer } from './sqlite-checkpoint.js'
import { migrateSqlite } from './sqlite-schema.js'

/** The page cache of the store's connection, in KiB (negative: SQLite's unit for KiB). */
export const PAGE_CACHE_KIB = -2000

export interface OpenedSqlite {
  db: Database.Database
  checkpointer: Checkpointer | undefined
}

/** Open (creating and migrating) the database; a failure is a StorageError naming the path. */
export function openSqlite(path: string, options: { log?: Pick<Logger, 'warn'> }): OpenedSqlite {
  let db: Database.Database | undefined
  try {
    createPrivate(path)
    db = new Database(path)
    const inMemory = db.memory
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.pragma('busy_timeout = 5000')
    // SQLite's own default page cache (2 MiB), not better-sqlite3's 16 MiB: the cache fills as
    // the database grows (about 2 KiB a question), and was most of what 10k open questions
    // added to the process's RSS. Pages beyond it come from the OS page cache.
    db.pragma(`cache_size = ${PAGE_CACHE_KIB}`)
    migrateSqlite(db, path)
    // From here this connection only reads (or, in memory, commits what needs no sync): a file's
    // writer thread syncs the WAL after each commit (sqlite-writer.ts).
    db.pragma('synchronous = NORMAL')
    const checkpointer = inMemory
      ? undefined
      : new Checkpointer(db, db.name, options.log ? { log: options.log } : {})
    return { db, checkpointer }
  } catch (error) {
    db?.close()
    const fault = fromSqliteError(error)
    const reason = error instanceof Error ? error.message : String(error)
    throw new StorageError(
      fault instanceof StorageError ? fault.fault : 'unavailable',
      `cannot open the SQLite database at ${path}: ${reason}`,
      { cause: error },
    )
  }
}

/**
 * Create the database file readable and writable by its owner only (0600), whatever the umask:
 * it holds tool inputs, answers and the audit. SQLite gives the `-wal` and `-shm` files it creates
 * later the database file's mode. An existing file keeps its mode; a special name is left alone.
 */
function createPrivate(path: string): void {
  if (path === '' || path === ':memory:' || path.startsWith('file:')) return
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch {
    // Already there, or it cannot be created: SQLite says why when it opens it.
  }
}
