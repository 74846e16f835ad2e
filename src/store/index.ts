import { isPostgresUrl } from './pg-url.js'
import { PostgresStore, type PostgresStoreOptions } from './postgres.js'
import { SqliteStore, type SqliteStoreOptions } from './sqlite.js'
import type { Store } from './types.js'

export * from './fold.js'
export * from './postgres.js'
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
  return new SqliteStore(url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url, options)
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
  if (isPostgresUrl(url)) return PostgresStore.open(url, options)
  return openStore(url, options)
}
