import { SqliteStore, type SqliteStoreOptions } from './sqlite.js'
import type { Store } from './types.js'

export * from './fold.js'
export { migrate, openPostgres, StoreOpenError } from './pg-connect.js'
export { isPostgresUrl, parsePostgresUrl } from './pg-url.js'
export * from './sqlite.js'
export * from './types.js'

/**
 * Open a store from an ASKBRIDGE_DB value: `sqlite:PATH`, a plain path, or `memory`
 * (`:memory:`, a throwaway SQLite database for tests).
 * @example openStore('sqlite:./askbridge.db')
 */
export function openStore(url: string, options: SqliteStoreOptions = {}): Store {
  if (url === 'memory' || url === ':memory:') return new SqliteStore(':memory:', options)
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    throw new Error('ASKBRIDGE_DB: PostgreSQL is not supported yet; use sqlite:PATH')
  }
  return new SqliteStore(url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url, options)
}
