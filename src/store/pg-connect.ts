import { createHash } from 'node:crypto'
import pg from 'pg'
import { AskbridgeError } from '../errors.js'
import { fromPgError } from './pg-errors.js'
import { MIGRATIONS, type Migration } from './pg-migrations.js'
import { type PostgresTarget, parsePostgresUrl } from './pg-url.js'

/** What a read or a write needs of the pool or of one connection. */
export type Queryable = Pick<pg.PoolClient, 'query'>

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
 * `sql` with its parameters ($1, $2, …) written in as literals, for the simple protocol, which
 * takes no parameters but runs several statements in one round trip. Strings are quoted by the
 * driver's `escapeLiteral`; numbers and booleans go in bare, so they keep the type the column
 * gives a parameter; an array becomes the driver's array text, quoted (the statement casts it,
 * `$7::text[]`). Any other value is refused: it has no literal this can vouch for.
 */
export function inlineParams(sql: string, params: readonly unknown[]): string {
  const used = new Set<number>()
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    // As the server refuses a bind with too few values: a placeholder with none is a bug, not NULL.
    if (Number(n) < 1 || Number(n) > params.length) throw new RangeError(`parameter $${n}: no value given`)
    used.add(Number(n))
    return literalOf(params[Number(n) - 1], n)
  })
  // And with too many: a value no placeholder takes means the numbering drifted from the values.
  if (used.size < params.length) {
    const unused = params.findIndex((_, i) => !used.has(i + 1)) + 1
    throw new RangeError(`parameter $${unused}: given, but the statement has no $${unused}`)
  }
  return text
}

function literalOf(value: unknown, n: string): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'string') return pg.escapeLiteral(value)
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE'
  if (typeof value === 'number' && Number.isFinite(value)) return `(${String(value)})`
  if (Array.isArray(value)) return pg.escapeLiteral(arrayText(value, n))
  throw new TypeError(`parameter $${n}: no literal for a ${typeof value}`)
}

/** An array of strings and nulls in PostgreSQL's array text form: {"a",NULL,"b\"c"}. */
function arrayText(values: readonly unknown[], n: string): string {
  const items = values.map((v) => {
    if (v === null || v === undefined) return 'NULL'
    if (typeof v !== 'string') throw new TypeError(`parameter $${n}: an array holds only strings and nulls`)
    return `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`
  })
  return `{${items.join(',')}}`
}

/** A notification on the schema's channel (see pg-notify.ts). */
export interface Note {
  channel: string
  payload: string
}

/** Tells one mark from the ones before it on the same connection. */
let marks = 0

/**
 * Notifications go just after the COMMIT of what they announce, not from inside it: a transaction
 * that NOTIFYs holds one lock, for the whole server, from the start of its commit to the end of it,
 * WAL flush included, so such commits queue behind each other and cannot share a flush; a NOTIFY
 * in a transaction of its own writes nothing to flush. What committed is told apart by a mark: a
 * session setting set inside the transaction (a rollback undoes it), which the statement after the
 * COMMIT, in the same round trip, requires before it notifies.
 */
class Marked {
  readonly #setting: string
  readonly #token = String(++marks)
  constructor(setting: string) {
    this.#setting = setting
  }
  /** The expression that sets the mark. */
  get mark(): string {
    return `set_config('${this.#setting}', '${this.#token}', false)`
  }
  /** The mark's value, for a statement that takes it as a parameter ({@link markFrom}). */
  get token(): string {
    return this.#token
  }
  /** The expression that sets the mark to the value of `placeholder` (a prepared statement's `$n`). */
  markFrom(placeholder: string): string {
    return `set_config('${this.#setting}', ${placeholder}, false)`
  }
  /**
   * The statement that sends `notes` only if the mark is set (or was copied to `setting` by
   * {@link relay}).
   */
  send(notes: readonly Note[], setting = this.#setting): string {
    const sends = notes.map(
      (n) => `pg_notify(${pg.escapeLiteral(n.channel)}, ${pg.escapeLiteral(n.payload)})`,
    )
    return `SELECT ${sends.join(', ')} WHERE current_setting('${setting}', true) = '${this.#token}'`
  }
  /**
   * The statement that copies the mark's setting, as it is now, to `setting`: in a transaction of
   * several statements setting the same mark, the mark of each as it ran. A statement that did not
   * write left another mark's token (or none), which never equals its own.
   */
  relay(setting: string): string {
    return `SELECT set_config('${setting}', current_setting('${this.#setting}', true), false)`
  }
}

/**
 * The notifications of what a transaction wrote, sent just after its COMMIT, in the same round
 * trip. A write known to have written adds its notes (`add`): they go only if the COMMIT commits,
 * told by a mark set just before it (an aborted transaction skips the mark, and so the COMMIT and
 * the notes; a COMMIT that fails skips the notes). A statement that goes with the COMMIT, whose
 * write is known only once it has run (a compare-and-set), evaluates the mark `ifWritten` returns
 * when it writes: its notes go only if that mark is set once committed.
 */
export class TransactionNotes {
  readonly #notes: Note[] = []
  readonly #committed = new Marked('askbridge.committed')
  #written: { marked: Marked; notes: readonly Note[] } | undefined

  add(...notes: Note[]): void {
    this.#notes.push(...notes)
  }

  /** The mark for the statement whose write sends `notes`: one such statement per transaction. */
  ifWritten(notes: readonly Note[]): string {
    return this.#markWrite(notes).mark
  }

  /**
   * {@link ifWritten} for a prepared statement, whose text cannot carry the mark's value: the mark
   * sets the setting to `placeholder`'s value, and `token` is that value.
   */
  ifWrittenFrom(notes: readonly Note[], placeholder: string): { mark: string; token: string } {
    const marked = this.#markWrite(notes)
    return { mark: marked.markFrom(placeholder), token: marked.token }
  }

  #markWrite(notes: readonly Note[]): Marked {
    if (this.#written) throw new Error('TransactionNotes: one statement per transaction may mark its write')
    this.#written = { marked: new Marked('askbridge.wrote'), notes }
    return this.#written.marked
  }

  /**
   * How to end one transaction made of the statements of several (`members`, each with its own
   * notes, in order): after each member's statements, the statement that keeps its mark apart
   * from the next member's (`relays[i]`, or '' when it has none); then the COMMIT, every member's
   * notes around it, each sent as its own transaction would send it. One member ends as
   * {@link commit} ends it.
   */
  static ending(members: readonly TransactionNotes[]): { relays: string[]; commit: string } {
    const [only] = members
    if (only && members.length === 1) return { relays: [''], commit: only.commit() }
    const all = new TransactionNotes()
    const relays: string[] = []
    const sends: string[] = []
    members.forEach((member, i) => {
      all.add(...member.#notes)
      const written = member.#written
      if (!written || written.notes.length === 0) {
        relays.push('')
        return
      }
      const setting = `askbridge.wrote_${i}`
      relays.push(written.marked.relay(setting))
      sends.push(written.marked.send(written.notes, setting))
    })
    return { relays, commit: [all.commit(), ...sends].join('; ') }
  }

  /** The COMMIT, with the marks and notes around it. */
  commit(): string {
    const parts = ['COMMIT']
    if (this.#notes.length > 0) {
      parts.unshift(`SELECT ${this.#committed.mark}`)
      parts.push(this.#committed.send(this.#notes))
    }
    // No notes, no statement: `SELECT  WHERE …` would fail the COMMIT's round trip.
    if (this.#written && this.#written.notes.length > 0)
      parts.push(this.#written.marked.send(this.#written.notes))
    return parts.join('; ')
  }
}

/** What `fn` may do besides query (see `transaction`). */
export interface TransactionEnd {
  /** The transaction's notifications, sent once it has committed. */
  readonly notes: TransactionNotes
  /**
   * Run `sql` and COMMIT in one round trip (the parameters written in, see {@link inlineParams}),
   * the transaction's notes after it; `sql`'s result. The transaction is then over: `fn` returns
   * and nothing is committed again.
   */
  commitWith(sql: string, params: readonly unknown[]): Promise<pg.QueryResult>
}

/**
 * Run `fn` in one transaction on one connection; a broken connection is discarded. Driver
 * failures become StorageErrors; `fn`'s own errors (a decision's refusal) pass unchanged.
 * `opening`: statements (simple protocol, no parameters) sent with the BEGIN in the same round
 * trip; `fn` gets their results, in order. `fn` may send its last statement with the COMMIT
 * ({@link TransactionEnd.commitWith}): a transaction of one decision is then two round trips.
 * What `fn` adds to `end.notes` is sent once the transaction has committed.
 */
export async function transaction<T>(
  pool: pg.Pool,
  where: string,
  fn: (c: Queryable, opened: pg.QueryResult[], end: TransactionEnd) => Promise<T>,
  opening?: string,
): Promise<T> {
  return onClient(pool, where, async (client) => {
    let committed = false
    const notes = new TransactionNotes()
    const end: TransactionEnd = {
      notes,
      async commitWith(sql, params) {
        if (committed) throw new Error('commitWith: the transaction is already committed')
        committed = true
        // One simple query: if the statement fails, PostgreSQL skips the COMMIT (and what follows
        // it) and the transaction is aborted (rolled back below).
        const results = (await client.query(
          `${inlineParams(sql, params)}; ${notes.commit()}`,
        )) as unknown as pg.QueryResult[]
        return results[0] as pg.QueryResult
      },
    }
    // A string of several statements comes back as one result each, BEGIN's first.
    const begun: pg.QueryResult | pg.QueryResult[] = await client.query(
      opening ? `BEGIN; ${opening}` : 'BEGIN',
    )
    const result = await fn(preparing(client), Array.isArray(begun) ? begun.slice(1) : [], end)
    if (!committed) await client.query(notes.commit())
    return result
  })
}

/**
 * `fn` on one pooled connection, a transaction it may open rolled back if it throws; a broken
 * connection is discarded. Driver failures become StorageErrors; `fn`'s own errors (a decision's
 * refusal) pass unchanged.
 */
async function onClient<T>(
  pool: pg.Pool,
  where: string,
  fn: (client: pg.PoolClient) => Promise<T>,
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
    return await fn(client)
  } catch (error) {
    // Outside a transaction (it failed at BEGIN) this is a warning, not an error.
    await client.query('ROLLBACK').catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e))
    })
    throw fromPgError(error, where)
  } finally {
    client.off('error', onError)
    client.release(broken)
  }
}

/**
 * A whole transaction as one simple query, one round trip: `BEGIN`, `statements` (the parameters
 * written in, see {@link inlineParams}) and `COMMIT`, with `notes` around it; the statements'
 * results, in order. If a statement fails, PostgreSQL skips the rest and the transaction is rolled
 * back here; failures become StorageErrors, and a broken connection is discarded.
 */
export async function transactOnce(
  pool: pg.Pool,
  where: string,
  statements: ReadonlyArray<OnceStatement>,
  notes = new TransactionNotes(),
): Promise<pg.QueryResult[]> {
  const together = await transactTogether(pool, where, [{ statements, notes }])
  // Alone, a refused statement is thrown as it is: only a group says it was rolled back.
  if ('rolledBack' in together) throw fromPgError(together.rolledBack, where)
  return together[0] ?? []
}

/** One transaction's part in {@link transactTogether}. */
export interface OnceTransaction {
  statements: ReadonlyArray<OnceStatement>
  notes: TransactionNotes
}

/**
 * Several transactions of {@link transactOnce}'s kind as one, in one round trip: one BEGIN, each
 * one's statements in turn, one COMMIT, each one's notes sent as if it had committed alone. Each
 * one's results, in order. They commit or fail together; `rolledBack` (several only): the server
 * refused a statement, and none of them committed.
 */
export function transactTogether(
  pool: pg.Pool,
  where: string,
  transactions: ReadonlyArray<OnceTransaction>,
): Promise<pg.QueryResult[][] | { rolledBack: pg.DatabaseError }> {
  return onClient(pool, where, async (client) => {
    for (const t of transactions) for (const s of t.statements) if (s.prepared) await prepareOn(client, s.sql)
    const { relays, commit } = TransactionNotes.ending(transactions.map((t) => t.notes))
    const parts = ['BEGIN']
    transactions.forEach((t, i) => {
      parts.push(...t.statements.map(onceText))
      if (relays[i]) parts.push(relays[i])
    })
    // What tells, should the round trip fail, whether it failed before the COMMIT or after it (a
    // notification refused): set in the transaction, so only a COMMIT keeps it.
    const together = transactions.length > 1 ? String(++marks) : undefined
    if (together) parts.push(`SELECT set_config('askbridge.together', '${together}', false)`)
    parts.push(commit)
    let results: pg.QueryResult[]
    try {
      results = (await client.query(parts.join('; '))) as unknown as pg.QueryResult[]
    } catch (error) {
      if (together && error instanceof pg.DatabaseError) {
        await client.query('ROLLBACK')
        const { rows } = await client.query<{ t: string | null }>(
          `SELECT current_setting('askbridge.together', true) AS t`,
        )
        if (rows[0]?.t !== together) return { rolledBack: error }
      }
      throw error
    }
    let at = 1
    return transactions.map((t, i) => {
      const own = results.slice(at, at + t.statements.length)
      at += t.statements.length + (relays[i] ? 1 : 0)
      return own
    })
  })
}

/**
 * A statement of {@link transactOnce}. `prepared`: the connection prepares it once (PREPARE, its
 * parameter types inferred from the statement) and the transaction runs it by name (EXECUTE, the
 * parameters written in), so the server neither parses nor plans it again on each call.
 */
export interface OnceStatement {
  sql: string
  params?: readonly unknown[]
  prepared?: boolean
}

function onceText(s: OnceStatement): string {
  if (!s.params) return s.sql
  const name = s.prepared ? statementName(s.sql, SQL_PREPARED) : undefined
  if (name === undefined) return inlineParams(s.sql, s.params)
  const args = s.params.map((value, i) => literalOf(value, String(i + 1)))
  return `EXECUTE ${name}(${args.join(', ')})`
}

/** The statements each connection has prepared with PREPARE. */
const preparedOn = new WeakMap<pg.ClientBase, Set<string>>()

async function prepareOn(client: pg.PoolClient, sql: string): Promise<void> {
  const name = statementName(sql, SQL_PREPARED)
  if (name === undefined) return
  const prepared = preparedOn.get(client) ?? new Set<string>()
  preparedOn.set(client, prepared)
  if (prepared.has(name)) return
  try {
    await client.query(`PREPARE ${name} AS ${sql}`)
  } catch (error) {
    // Already prepared on this session (its name is its text's): nothing to do.
    if ((error as { code?: string }).code !== '42P05') throw error
  }
  prepared.add(name)
}

/** Digests of the statement texts named so far: a bounded set, as the texts are the store's own. */
const digests = new Map<string, string>()
/**
 * The prefixes of the two kinds of name, which share one namespace in a session: node-postgres's
 * (the extended protocol's Parse) and PREPARE's. Apart, neither can take a name the other holds.
 */
const PROTOCOL_PREPARED = 'askbridge_'
const SQL_PREPARED = 'askbridge_x_'
/**
 * More texts than the store writes would mean some carry data: each would stay prepared on every
 * connection, so past this many new texts go unnamed.
 */
const MAX_NAMES = 1000

/**
 * A statement's name on the server, the same on every connection: a digest of its text, so a
 * name always stands for one text (a new release's text gets a new name). Undefined once
 * {@link MAX_NAMES} texts are named and this one is new.
 */
function statementName(sql: string, prefix: string): string | undefined {
  let digest = digests.get(sql)
  if (digest === undefined) {
    if (digests.size >= MAX_NAMES) return undefined
    digest = createHash('sha256').update(sql).digest('hex').slice(0, 24)
    digests.set(sql, digest)
  }
  return `${prefix}${digest}`
}

/**
 * A parameterized query as a named prepared statement: each connection parses and plans it
 * once (node-postgres prepares a name on first use per connection), not on every call.
 */
function named(text: string, values: readonly unknown[]): pg.QueryConfig {
  const name = statementName(text, PROTOCOL_PREPARED)
  return { ...(name === undefined ? {} : { name }), text, values: [...values] }
}

/** `db` (the pool, or a transaction's connection) whose parameterized queries go {@link named}. */
export function preparing(db: Queryable): Queryable {
  return {
    query: ((text: string, values?: readonly unknown[]) =>
      values ? db.query(named(text, values)) : db.query(text)) as Queryable['query'],
  }
}
