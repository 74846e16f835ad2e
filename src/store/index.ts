import { StorageError } from './errors.js'
import { isPostgresUrl } from './pg-url.js'
import type { PostgresStoreOptions } from './postgres.js'
import { SqliteStore, type SqliteStoreOptions } from './sqlite.js'
import type { Store } from './types.js'

export * from './errors.js'
export * from './fold.js'
export * from './sqlite.js'
export * from './types.js'

/**
 * Open a store from an ASKBRIDGE_DB value: `sqlite:PATH`, a plain path, or `memory`
 * (`:memory:`, a throwaway SQLite database for tests).
 * @example openStore('sqlite:./askbridge.db')
 */
export function openStore(url: string, options: SqliteStoreOptions = {}): Store {
  if (url === 'memory' || url === ':memory:') return new SqliteStore(':memory:', options)
  if (isPostgresUrl(url)) throw new Error('ASKBRIDGE_DB: a PostgreSQL store opens with connectStore()')
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url
  try {
    return new SqliteStore(path, options)
  } catch (error) {
    // Name the setting and the path: "unable to open database file" alone sends nobody anywhere.
    const reason = error instanceof Error ? error.message : String(error)
    throw new StorageError(
      error instanceof StorageError ? error.fault : 'unavailable',
      `ASKBRIDGE_DB=${url}: ${reason}; check that the directory exists and is writable, and that the disk has space`,
      { cause: error },
    )
  }
}

/**
 * Open any store from an ASKBRIDGE_DB value, PostgreSQL included (`postgres://...`: connects
 * and migrates first, hence async). What `askbridge serve` uses.
 * @example await connectStore('postgres://askbridge@db/askbridge?schema=bridge')
 */
export async function connectStore(
  url: string,
  options: SqliteStoreOptions & PostgresStoreOptions = {},
): Promise<Store> {
  if (isPostgresUrl(url)) {
    // Loaded only here: a bridge on SQLite never loads the PostgreSQL driver (about 14 MiB of RSS).
    const { PostgresStore } = await import('./postgres.js')
    return PostgresStore.open(url, options)
  }
  return openStore(url, options)
}
