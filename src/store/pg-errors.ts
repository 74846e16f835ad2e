import pg from 'pg'
import { isStorageError, StorageError, type StorageFault } from './errors.js'

/** Socket-level failures: the server is not there (or no longer). */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
])

/** node-postgres's own words for a connection that is gone or cannot be had. */
const LOST =
  /Connection terminated|connection error|timeout exceeded when trying to connect|Client was closed|Cannot use a pool after calling end/i

/** SQLSTATE -> fault, by exact code or by class (first two characters). */
function faultOfSqlState(code: string): StorageFault | undefined {
  if (code === '53100') return 'full' // disk_full
  if (code === '25006') return 'read_only' // read_only_sql_transaction (a standby, a read-only database)
  if (code === '40001' || code === '40P01' || code === '55P03') return 'locked'
  if (code.startsWith('08') || code.startsWith('57P') || code === '53300' || code === '53200')
    return 'unavailable'
  if (code.startsWith('58') || code === 'XX001' || code === 'XX002') return 'io'
  return undefined
}

const WORDS: Record<StorageFault, string> = {
  full: 'the PostgreSQL server has no disk space left',
  read_only: 'the PostgreSQL database is read-only',
  locked: 'the PostgreSQL database is busy',
  unavailable: 'the PostgreSQL server cannot be reached',
  io: 'the PostgreSQL server could not read or write',
}

/**
 * Map a node-postgres failure to a StorageError (503 STORAGE_UNAVAILABLE: not stored, retry);
 * anything else (a bug, a constraint we rely on) is returned unchanged. `where` names the
 * database without its password.
 */
export function fromPgError(error: unknown, where: string): unknown {
  if (isStorageError(error)) return error
  const e = error as { code?: unknown; message?: unknown; errors?: unknown } | null
  const code = typeof e?.code === 'string' ? e.code : undefined
  const message = typeof e?.message === 'string' ? e.message : ''
  let fault: StorageFault | undefined
  if (error instanceof pg.DatabaseError) fault = code ? faultOfSqlState(code) : undefined
  else if (code && NETWORK.has(code)) fault = 'unavailable'
  else if (error instanceof Error && (LOST.test(message) || error instanceof AggregateError))
    fault = 'unavailable'
  if (!fault) return error
  return new StorageError(
    fault,
    `storage unavailable: ${WORDS[fault]} (${where})${code ? ` [${code}]` : ''}`,
    {
      cause: error,
    },
  )
}
