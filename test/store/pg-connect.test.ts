import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { parseConfig, secretsOf } from '../../src/config/env.js'
import {
  inlineParams,
  migrate,
  openPostgres,
  preparing,
  StoreOpenError,
  transaction,
  transactOnce,
} from '../../src/store/pg-connect.js'
import { MIGRATIONS } from '../../src/store/pg-migrations.js'
import { parsePostgresUrl } from '../../src/store/pg-url.js'
import { PG_URL, type TestSchema, testSchema } from '../helpers/pg.js'

describe('ASKBRIDGE_DB postgres URLs', () => {
  it('accepts postgres:// and postgresql://, keeps ?schema= for itself and hides the password', () => {
    for (const scheme of ['postgres', 'postgresql']) {
      const parsed = parsePostgresUrl(
        `${scheme}://bridge:s3cr%40t@db.internal:6432/approvals?schema=bridge&sslmode=require`,
      )
      if (!('target' in parsed)) throw new Error(parsed.problem)
      expect(parsed.target.schema).toBe('bridge')
      expect(parsed.target.password).toBe('s3cr@t')
      expect(parsed.target.redacted).toBe(
        `${scheme}://bridge:***@db.internal:6432/approvals?schema=bridge&sslmode=require`,
      )
      expect(parsed.target.connectionString).not.toContain('schema=')
      expect(parsed.target.connectionString).toContain('sslmode=require')
    }
  })

  it('names what is wrong without echoing the password', () => {
    const cases: Array<[string, RegExp]> = [
      ['postgres://', /not a valid postgres:\/\/ URL|names no host/],
      ['postgres://u:pw@/db', /not a valid postgres:\/\/ URL/],
      ['postgres:///db', /names no host/],
      ['postgres://u:pw@db/x?schema=1bad;drop', /schema must be/],
    ]
    for (const [value, problem] of cases) {
      const parsed = parsePostgresUrl(value)
      expect('problem' in parsed && parsed.problem).toMatch(problem)
      if ('problem' in parsed) expect(parsed.problem).not.toContain('pw')
    }
  })

  it('configuration names a bad URL under ASKBRIDGE_DB and keeps its password out of logs', () => {
    expect(() => parseConfig({ ASKBRIDGE_DB: 'postgres://u:pw@db/x?schema=no-dash' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_DB schema must be/,
    )
    const config = parseConfig({ ASKBRIDGE_DB: 'sqlite::memory:' }, PLATFORMS)
    expect(secretsOf({ ...config, ASKBRIDGE_DB: 'postgres://u:hunter22@db/x' }, PLATFORMS)).toContain(
      'hunter22',
    )
  })
})

describe('opening PostgreSQL', () => {
  let schemas: TestSchema[] = []
  const fresh = async () => {
    const s = await testSchema()
    schemas.push(s)
    return s
  }
  afterEach(async () => {
    await Promise.all(schemas.map((s) => s.drop()))
    schemas = []
  })

  it('creates the schema on first start and finds nothing to do on the next', async () => {
    const s = await fresh()
    const first = await openPostgres(s.url)
    expect(first.applied).toEqual(MIGRATIONS.map((m) => m.version))
    await first.pool.end()
    const second = await openPostgres(s.url)
    expect(second.applied).toEqual([])
    await second.pool.end()
    const rows = await s.query<{ version: number }>(
      'SELECT version FROM askbridge_migrations ORDER BY version',
    )
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
    const tables = await s.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [s.schema],
    )
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['askbridge_events', 'askbridge_calls', 'askbridge_cards', 'askbridge_posts']),
    )
  })

  it('three replicas starting at once migrate once', async () => {
    const s = await fresh()
    // Each "replica" has its own pool and connections, as three processes would.
    const opened = await Promise.all([openPostgres(s.url), openPostgres(s.url), openPostgres(s.url)])
    await Promise.all(opened.map((o) => o.pool.end()))
    const applied = opened.map((o) => o.applied)
    expect(applied.filter((a) => a.length > 0)).toEqual([MIGRATIONS.map((m) => m.version)])
    expect(applied.filter((a) => a.length === 0)).toHaveLength(2)
    const rows = await s.query<{ n: string }>('SELECT count(*) AS n FROM askbridge_migrations')
    expect(Number(rows[0]?.n)).toBe(MIGRATIONS.length)
  })

  it('a later release adds its step once, and a failing step leaves nothing half done', async () => {
    const s = await fresh()
    const opened = await openPostgres(s.url)
    try {
      const next = [
        ...MIGRATIONS,
        { version: 1000, name: 'test step', sql: 'CREATE TABLE step_1000 (x INT)' },
      ]
      expect(await migrate(opened.pool, opened.target, next)).toEqual([1000])
      expect(await migrate(opened.pool, opened.target, next)).toEqual([])
      const broken = [
        ...next,
        {
          version: 1001,
          name: 'broken step',
          sql: 'CREATE TABLE step_1001 (x INT); SELECT no_such_column FROM step_1001',
        },
      ]
      const error = await migrate(opened.pool, opened.target, broken).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(StoreOpenError)
      expect((error as Error).message).toMatch(
        /ASKBRIDGE_DB .*migration 1001 \(broken step\) failed: .*no_such_column/,
      )
      const left = await s.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'step_1001'")
      expect(left).toEqual([])
      const versions = await s.query<{ version: number }>('SELECT version FROM askbridge_migrations')
      expect(versions.map((v) => v.version)).not.toContain(1001)
    } finally {
      await opened.pool.end()
    }
  })

  it('an unreachable server is named under ASKBRIDGE_DB with the refusal and without the password', async () => {
    const error = await openPostgres('postgres://postgres:topsecret@127.0.0.1:1/test', {
      connectTimeoutMs: 3000,
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreOpenError)
    const message = (error as Error).message
    expect(message).toMatch(
      /^ASKBRIDGE_DB \(postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test\): cannot open/,
    )
    expect(message).toMatch(/ECONNREFUSED/)
    expect(message).not.toContain('topsecret')
  })

  it("the server's own refusal is passed on (no such database)", async () => {
    const url = new URL(PG_URL)
    url.password = 'topsecret'
    url.pathname = '/askbridge_no_such_database'
    const error = await openPostgres(url.toString()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreOpenError)
    const message = (error as Error).message
    expect(message).toMatch(/ASKBRIDGE_DB .*database "askbridge_no_such_database" does not exist/)
    expect(message).not.toContain('topsecret')
  })
})

describe('a transaction that ends with its last statement', () => {
  let pool: pg.Pool
  let s: TestSchema
  beforeAll(async () => {
    s = await testSchema()
    pool = (await openPostgres(s.url)).pool
    await pool.query('CREATE TABLE inline_t (n BIGINT, f DOUBLE PRECISION, b BOOLEAN, t TEXT, a TEXT[])')
  })
  afterAll(async () => {
    await pool.end()
    await s.drop()
  })

  const hostile = [
    "it's",
    "back\\slash \\' and \\\\",
    "E'x' -- ; DROP TABLE inline_t; --",
    '$1 $2 $$ $tag$ dollar',
    '"quoted" {braces,commas} NULL',
    'ünïcödé ✓ \u{1F600}',
    'line\nbreak\ttab\r',
    '',
  ]

  it('writes in each value exactly as a bound parameter would carry it', async () => {
    const sql =
      'INSERT INTO inline_t (n, f, b, t, a) SELECT $1, $2, $3, $4, $5::text[] FROM (SELECT 1) AS one'
    for (const [i, text] of hostile.entries()) {
      const params = [i - 3, i + 0.25, i % 2 === 0, text, [text, null, `${text}"`, '\\']]
      await transaction(pool, 'test', async (_c, _opened, end) => {
        await end.commitWith(sql, params)
      })
      const { rows } = await pool.query('SELECT n, f, b, t, a FROM inline_t WHERE f = $1', [i + 0.25])
      expect(rows).toEqual([{ n: String(i - 3), f: i + 0.25, b: i % 2 === 0, t: text, a: params[4] }])
    }
    const nulls = inlineParams('SELECT $1, $2::text[]', [null, undefined])
    expect(nulls).toBe('SELECT NULL, NULL::text[]')
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM inline_t')
    expect(rows[0].n).toBe(hostile.length)
  })

  it('refuses a value it has no literal for, before anything is sent', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, { a: 1 }, 10n, [1, 2]]) {
      expect(() => inlineParams('SELECT $1', [bad])).toThrow(/parameter \$1/)
    }
    expect(() => inlineParams('SELECT $1, $2', ['one'])).toThrow(/parameter \$2: no value given/)
    // As the server refuses a bind with more values than the statement takes.
    expect(() => inlineParams('SELECT $1, $3', ['one', 'two', 'three'])).toThrow(
      /parameter \$2: given, but the statement has no \$2/,
    )
    expect(() => inlineParams('SELECT $1', ['one', 'two'])).toThrow(/parameter \$2: given/)
    expect(inlineParams('SELECT $1, $1', ['one'])).toBe("SELECT 'one', 'one'")
  })

  it('commits with the statement in one round trip, and a failing statement commits nothing', async () => {
    const sent: string[] = []
    const watched = new pg.Pool({ connectionString: PG_URL, max: 1, options: `-c search_path=${s.schema}` })
    watched.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown
      ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
        sent.push(String(args[0]))
        return query(...args)
      }
    })
    try {
      await transaction(
        watched,
        'test',
        async (_c, _opened, end) => {
          await end.commitWith('INSERT INTO inline_t (n, t) VALUES ($1, $2)', [1000, 'one trip'])
        },
        'SELECT 1',
      )
      expect(sent).toEqual([
        'BEGIN; SELECT 1',
        "INSERT INTO inline_t (n, t) VALUES ((1000), 'one trip'); COMMIT",
      ])
      const failed = await transaction(watched, 'test', async (c, _opened, end) => {
        await c.query('INSERT INTO inline_t (n, t) VALUES ($1, $2)', [1001, 'before the failure'])
        await end.commitWith('INSERT INTO inline_t (n, t) VALUES ($1, $2::int::text)', [1002, 'not a number'])
      }).catch((e: unknown) => e)
      expect((failed as Error).message).toMatch(/invalid input syntax for type integer/)
      const { rows } = await pool.query('SELECT n FROM inline_t WHERE n >= 1000 ORDER BY n')
      expect(rows).toEqual([{ n: '1000' }])
      // The connection is back in the pool and works.
      expect((await watched.query('SELECT 1 AS x')).rows).toEqual([{ x: 1 }])
    } finally {
      await watched.end()
    }
  })
})

describe('named statements', () => {
  it('names a parameterized text by its digest, the same each time; past a thousand texts, new ones go unnamed', async () => {
    const sent: Array<string | pg.QueryConfig> = []
    const db = preparing({
      query: (async (config: string | pg.QueryConfig) => {
        sent.push(config)
        return { rows: [] }
      }) as never,
    })
    await db.query('SELECT $1::int AS n', [1])
    await db.query('SELECT $1::int AS n', [2])
    await db.query('SELECT 1')
    const [first, second, bare] = sent as [pg.QueryConfig, pg.QueryConfig, string]
    expect(first.name).toMatch(/^askbridge_[0-9a-f]{24}$/)
    expect(second).toEqual({ name: first.name, text: 'SELECT $1::int AS n', values: [2] })
    expect(bare).toBe('SELECT 1')
    // Texts that carry data would each stay prepared on every connection: the names run out.
    for (let i = 0; i < 1000; i++) await db.query(`SELECT $1::int + ${i}`, [i])
    const last = sent.at(-1) as pg.QueryConfig
    expect(last.name).toBeUndefined()
    expect(last.values).toEqual([999])
    await db.query('SELECT $1::int AS n', [3])
    expect((sent.at(-1) as pg.QueryConfig).name).toBe(first.name)
  })

  it('one text prepared by PREPARE and by the driver on the same connection: the two names do not clash', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 })
    try {
      const sql = 'SELECT $1::int + 40 AS n'
      const [once] = await transactOnce(pool, 'test', [{ sql, params: [1], prepared: true }])
      expect(once?.rows).toEqual([{ n: 41 }])
      const byDriver = await preparing(pool).query<{ n: number }>(sql, [2])
      expect(byDriver.rows).toEqual([{ n: 42 }])
      const [again] = await transactOnce(pool, 'test', [{ sql, params: [3], prepared: true }])
      expect(again?.rows).toEqual([{ n: 43 }])
    } finally {
      await pool.end()
    }
  })
})
