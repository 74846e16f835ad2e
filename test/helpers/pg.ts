import { randomBytes } from 'node:crypto'
import pg from 'pg'

/**
 * The PostgreSQL server the tests use: every machine the project runs on has one at
 * 127.0.0.1:5432 (trust auth, database `test`). ASKBRIDGE_TEST_PG points elsewhere.
 */
export const PG_URL = process.env.ASKBRIDGE_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test'

let reachable: Promise<void> | undefined

/**
 * Fail loudly when the server is unreachable: the PostgreSQL tests never skip silently.
 * (`.ci/run` starts the server when it is down.)
 */
export function requirePostgres(): Promise<void> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 5000 })
    try {
      await client.connect()
      await client.query('SELECT 1')
    } catch (error) {
      const why = error instanceof Error ? error.message || error.name : String(error)
      throw new Error(
        `PostgreSQL is not reachable at ${PG_URL} (${why}). The PostgreSQL tests need it: start it ` +
          '(pg_ctlcluster 15 main start, or run .ci/run which does) or set ASKBRIDGE_TEST_PG.',
      )
    } finally {
      await client.end().catch(() => {})
    }
  })()
  return reachable
}

/** A fresh schema of its own for one test: `url` selects it; `drop()` removes it and all in it. */
export interface TestSchema {
  schema: string
  /** ASKBRIDGE_DB for this schema (`?schema=`). */
  url: string
  /** Run SQL in the schema, outside any store (to inspect or to break things). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>
  drop(): Promise<void>
}

export async function testSchema(): Promise<TestSchema> {
  await requirePostgres()
  const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`
  const admin = new pg.Pool({ connectionString: PG_URL, max: 2, options: `-c search_path=${schema}` })
  admin.on('error', () => {})
  await admin.query(`CREATE SCHEMA "${schema}"`)
  return {
    schema,
    url,
    async query(sql, params) {
      return (await admin.query(sql, params)).rows
    },
    async drop() {
      try {
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await admin.end()
      }
    },
  }
}
