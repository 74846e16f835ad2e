import pg from 'pg'
import { AskbridgeError } from '../errors.js'
import { fromPgError } from './pg-errors.js'
import { MIGRATIONS, type Migration } from './pg-migrations.js'
import { type PostgresTarget, parsePostgresUrl } from './pg-url.js'

/** The database could not be opened at start: the message names ASKBRIDGE_DB and the server's refusal. */
export class StoreOpenError extends AskbridgeError {
  override readonly name = 'StoreOpenError'
  readonly code = 'STORE_OPEN_FAILED'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

export interface PostgresPoolOptions {
  /** Most connections this process holds. @default 10 */
  max?: number
  /** Shown in pg_stat_activity. @default 'askbridge' */
  applicationName?: string
  /** Give up connecting after this long. @default 10000 */
  connectTimeoutMs?: number
}

/** What {@link openPostgres} did. */
export interface OpenedPostgres {
  pool: pg.Pool
  target: PostgresTarget
  /** Migration versions this process applied (empty when another replica already had). */
  applied: number[]
}

/** How every connection of this process is made (the pool's and the LISTEN connection). */
export function clientConfig(target: PostgresTarget, options: PostgresPoolOptions = {}): pg.ClientConfig {
  return {
    connectionString: target.connectionString,
    application_name: options.applicationName ?? 'askbridge',
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    ...(target.schema ? { options: `-c search_path=${target.schema}` } : {}),
  }
}

/**
 * Connect to PostgreSQL and bring the schema up to date. Several processes starting at once
 * migrate once: migrations run under an advisory lock held for the schema.
 * Throws a StoreOpenError naming ASKBRIDGE_DB (without the password) and the server's refusal.
 */
export async function openPostgres(
  value: string,
  options: PostgresPoolOptions & { migrations?: readonly Migration[] } = {},
): Promise<OpenedPostgres> {
  const parsed = parsePostgresUrl(value)
  if ('problem' in parsed) throw new StoreOpenError(`ASKBRIDGE_DB ${parsed.problem}`)
  const { target } = parsed
  const pool = new pg.Pool({ ...clientConfig(target, options), max: options.max ?? 10 })
  // An idle client whose server went away emits 'error' on the pool; without a listener that
  // would crash the process. The next query reconnects.
  pool.on('error', () => {})
  try {
    const applied = await migrate(pool, target, options.migrations ?? MIGRATIONS)
    return { pool, target, applied }
  } catch (error) {
    await pool.end().catch(() => {})
    if (error instanceof StoreOpenError) throw error
    throw new StoreOpenError(
      `ASKBRIDGE_DB (${target.redacted}): cannot open the PostgreSQL database: ${refusal(error, target)}`,
      { cause: error },
    )
  }
}

/** The server's (or the socket's) own words, with the password cut out should it appear. */
function refusal(error: unknown, target: PostgresTarget): string {
  const e = error as { message?: string; code?: string; errors?: Array<{ message?: string }> }
  // A refused connection to a name with several addresses is an AggregateError with no message.
  let text = e.message || e.errors?.map((x) => x.message).join('; ') || e.code || String(error)
  if (target.password) text = text.split(target.password).join('***')
  return text
}

const MIGRATION_LOCK = 'askbridge.migrate'

/**
 * Apply every migration the database lacks, each in its own transaction, under a session
 * advisory lock keyed by the schema: a second process waits, then finds nothing to do.
 * Returns the versions applied by this call.
 */
export async function migrate(
  pool: pg.Pool,
  target: PostgresTarget,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const client = await pool.connect()
  try {
    if (target.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${target.schema}"`)
    const { rows } = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema')
    const schema = rows[0]?.schema
    if (!schema) {
      throw new StoreOpenError(
        `ASKBRIDGE_DB (${target.redacted}): the search_path names no existing schema; add ?schema=NAME`,
      )
    }
    await client.query('SELECT pg_advisory_lock(hashtext($1), hashtext($2))', [MIGRATION_LOCK, schema])
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS askbridge_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`)
      const done = new Set(
        (await client.query<{ version: number }>('SELECT version FROM askbridge_migrations')).rows.map(
          (r) => r.version,
        ),
      )
      const applied: number[] = []
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(m.version)) continue
        await client.query('BEGIN')
        try {
          await client.query(m.sql)
          await client.query('INSERT INTO askbridge_migrations (version, name) VALUES ($1, $2)', [
            m.version,
            m.name,
          ])
          await client.query('COMMIT')
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {})
          throw new StoreOpenError(
            `ASKBRIDGE_DB (${target.redacted}): migration ${m.version} (${m.name}) failed: ${refusal(error, target)}`,
            { cause: error },
          )
        }
        applied.push(m.version)
      }
      return applied
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1), hashtext($2))', [MIGRATION_LOCK, schema])
    }
  } finally {
    client.release()
  }
}

/**
 * Run `fn` in one transaction on one connection; a broken connection is discarded. Driver
 * failures become StorageErrors; `fn`'s own errors (a decision's refusal) pass unchanged.
 * `opening`: statements (simple protocol, no parameters) sent with the BEGIN in the same round
 * trip; `fn` gets their results, in order.
 */
export async function transaction<T>(
  pool: pg.Pool,
  where: string,
  fn: (c: pg.PoolClient, opened: pg.QueryResult[]) => Promise<T>,
  opening?: string,
): Promise<T> {
  const client = await pool.connect().catch((error: unknown) => {
    throw fromPgError(error, where)
  })
  let broken: Error | undefined
  // A connection lost between two statements errors on the client itself: mark it broken
  // (the next statement fails and is reported) rather than leave the error unhandled.
  const onError = (error: Error) => {
    broken = error
  }
  client.on('error', onError)
  try {
    // A string of several statements comes back as one result each, BEGIN's first.
    const begun: pg.QueryResult | pg.QueryResult[] = await client.query(
      opening ? `BEGIN; ${opening}` : 'BEGIN',
    )
    try {
      const result = await fn(client, Array.isArray(begun) ? begun.slice(1) : [])
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e))
      })
      throw error
    }
  } catch (error) {
    throw fromPgError(error, where)
  } finally {
    client.off('error', onError)
    client.release(broken)
  }
}
