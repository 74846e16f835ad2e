import { closeSync, openSync } from 'node:fs'
import Database from 'better-sqlite3'
import type { UserQuestionProjectionView } from '../protocol/types.js'
import { fromSqliteError, StorageError } from './errors.js'
import { foldCall, pageOf, statusOf } from './fold.js'
import { cardsOf, listedCardsOf } from './rows.js'
import { Checkpointer } from './sqlite-checkpoint.js'
import { GroupCommit } from './sqlite-group.js'
import { SqlitePosts } from './sqlite-posts.js'
import { type CallRow, callRow, type EventRow, migrateSqlite, parseCalls, toEvent } from './sqlite-schema.js'
import { SqliteSessions } from './sqlite-sessions.js'
import { type SqliteStatements, sqliteStatements } from './sqlite-statements.js'
import { WalSync } from './sqlite-sync.js'

export { SQLITE_SCHEMA_VERSION } from './sqlite-schema.js'

/** The page cache of the store's connection, in KiB (negative: SQLite's unit for KiB). */
const PAGE_CACHE_KIB = -2000

import type { Logger } from '../log.js'
import type {
  AuditEntry,
  CallKey,
  CallRecord,
  CallState,
  CallStep,
  CardFilter,
  Decision,
  ListedCard,
  PostClaim,
  PostRecord,
  SessionRecord,
  Store,
  StoredAuditEntry,
  StoredEvent,
  StoreEvent,
  VersionedCard,
} from './types.js'

export interface SqliteStoreOptions {
  /** Clock for event timestamps. @default Date.now */
  now?: () => number
  /**
   * `full` (default): every commit is fsynced, so an acknowledged answer survives power loss.
   * `normal`: WAL's default; survives a process crash, may lose the last commits on power loss.
   */
  durability?: 'full' | 'normal'
  /** Where a checkpointer that fails says so. */
  log?: Pick<Logger, 'warn'>
}

/**
 * The embedded default store: better-sqlite3 in WAL mode. Each call's folded state lives in the
 * `calls` table, written in the same transaction as its events, so reads are indexed queries
 * (another process writing the same file is seen at once) and nothing holds the history in
 * memory. `':memory:'` gives a throwaway store for tests.
 */
export class SqliteStore implements Store {
  readonly path: string
  private readonly db: Database.Database
  private readonly now: () => number
  private closed = false
  private readonly stmts: SqliteStatements
  private readonly posts: SqlitePosts
  private readonly sessions: SqliteSessions
  /**
   * Every write goes through it, so durability is decided in one place: one commit for the writes
   * of one turn, each settled once that commit is synced (see sqlite-group.ts).
   */
  private readonly group: GroupCommit
  /** Makes commits durable off the event loop (see sqlite-sync.ts). */
  private readonly wal: WalSync
  /** Checkpoints the WAL off the event loop (see sqlite-checkpoint.ts); none in memory. */
  readonly checkpointer: Checkpointer | undefined

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path
    this.now = options.now ?? Date.now
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
      this.db = db
      migrateSqlite(db, path)
      // From here commits do not fsync; `full` durability syncs the WAL after each (sqlite-sync.ts).
      db.pragma('synchronous = NORMAL')
      this.wal = new WalSync(options.durability === 'normal' || inMemory ? undefined : `${db.name}-wal`)
      this.checkpointer = inMemory
        ? undefined
        : new Checkpointer(db, db.name, options.log ? { log: options.log } : {})
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
    this.posts = new SqlitePosts(this.db)
    this.sessions = new SqliteSessions(this.db)
    const checkpointer = this.checkpointer
    this.group = new GroupCommit(
      this.db,
      () => this.wal.sync(),
      () => checkpointer?.committed(),
    )
    this.stmts = sqliteStatements(this.db)
  }

  private check(): void {
    if (this.closed) throw new StorageError('unavailable', 'storage unavailable: the store is closed')
  }

  private readCall(key: CallKey): CallRecord | undefined {
    const row = this.stmts.getCall.get(key.agentId, key.callId) as CallRow | undefined
    return row ? (JSON.parse(row.data) as CallRecord) : undefined
  }

  /** Append one event and fold it into its call's row (inside a transaction). */
  private insert(event: StoreEvent, call: CallRecord | undefined): CallRecord | undefined {
    const at = this.now()
    const { lastInsertRowid } = this.stmts.insertEvent.run(
      event.agentId,
      event.callId,
      event.type,
      at,
      JSON.stringify(event),
    )
    const next = foldCall(call, { ...event, seq: Number(lastInsertRowid), at })
    if (next) this.stmts.putCall.run(callRow(next))
    return next
  }

  async append(...events: StoreEvent[]): Promise<void> {
    this.check()
    await this.group.run(() => {
      for (const event of events) this.insert(event, this.readCall(event))
    })
  }

  async transact<T>(key: CallKey, decide: Decision<T>): Promise<T> {
    this.check()
    // Group commit's transaction is IMMEDIATE: the write lock comes first, so a decision always
    // sees the latest row.
    return this.group.run(() => this.decideInside(key, decide))
  }

  /** Read one call's row, decide, append (inside a transaction). */
  private decideInside<T>(key: CallKey, decide: Decision<T>): T {
    let call = this.readCall(key)
    const { events, result } = decide(call ? structuredClone(call) : undefined)
    for (const event of events) {
      if (event.agentId !== key.agentId || event.callId !== key.callId) {
        throw new Error(`transact on ${key.agentId}/${key.callId} cannot append an event for another call`)
      }
      call = this.insert(event, call)
    }
    return result
  }

  async getCall(key: CallKey): Promise<CallRecord | undefined> {
    this.check()
    return this.readCall(key)
  }

  async findCalls(callId: string): Promise<CallRecord[]> {
    this.check()
    return parseCalls(this.stmts.findCalls.all(callId))
  }

  async listCalls(
    filter: { agentId?: string; states?: CallState[]; timed?: boolean } = {},
  ): Promise<CallRecord[]> {
    this.check()
    const where: string[] = []
    const args: unknown[] = []
    if (filter.agentId !== undefined) {
      where.push('agent_id = ?')
      args.push(filter.agentId)
    }
    if (filter.states !== undefined) {
      if (filter.states.length === 0) return []
      where.push(`state IN (${filter.states.map(() => '?').join(', ')})`)
      args.push(...filter.states)
    }
    if (filter.timed !== undefined) {
      where.push('timed = ?')
      args.push(filter.timed ? 1 : 0)
    }
    const sql = `SELECT data FROM calls${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY asked_seq`
    return parseCalls(this.db.prepare(sql).all(...args))
  }

  async projection(agentId?: string): Promise<UserQuestionProjectionView> {
    this.check()
    const read = this.db.transaction(() => {
      const active = parseCalls(
        agentId === undefined ? this.stmts.active.all() : this.stmts.activeOfAgent.all(agentId),
      )
      const settled = parseCalls(
        agentId === undefined ? this.stmts.settled.all() : this.stmts.settledOfAgent.all(agentId),
      )
      return {
        active: active.map((c) => ({
          callId: c.callId,
          questions: c.questions,
          state: c.state as 'open' | 'continued',
        })),
        settled: settled.map((c) => ({ callId: c.callId, answers: c.answers ?? [] })),
      }
    })
    return read()
  }

  async projectionPage(filter: {
    agentId?: string
    limit: number
    afterSeq?: number
  }): Promise<{ view: UserQuestionProjectionView; next?: number }> {
    this.check()
    const { agentId, limit } = filter
    const after = filter.afterSeq ?? 0
    const read = this.db.transaction(() => {
      const active = parseCalls(
        agentId === undefined ? this.stmts.active.all() : this.stmts.activeOfAgent.all(agentId),
      )
      const settled = parseCalls(
        agentId === undefined
          ? this.stmts.settledPage.all(after, limit + 1)
          : this.stmts.settledPageOfAgent.all(agentId, after, limit + 1),
      )
      return { active, settled }
    })
    const { active, settled } = read()
    return pageOf(active, settled, limit)
  }

  async events(
    filter: { agentId?: string; callId?: string; sinceSeq?: number } = {},
  ): Promise<StoredEvent[]> {
    this.check()
    const since = filter.sinceSeq ?? 0
    const { agentId, callId } = filter
    const rows = (
      agentId !== undefined && callId !== undefined
        ? this.stmts.eventsOfKey.all(agentId, callId, since)
        : callId !== undefined
          ? this.stmts.eventsOfCall.all(callId, since)
          : agentId !== undefined
            ? this.stmts.eventsOfAgent.all(agentId, since)
            : this.stmts.eventsSince.all(since)
    ) as EventRow[]
    return rows.map(toEvent)
  }

  async getCard<T>(key: CallKey): Promise<VersionedCard<T> | undefined> {
    this.check()
    const row = this.stmts.getCard.get(key.agentId, key.callId) as
      | { version: number; state: string }
      | undefined
    return row ? { version: row.version, state: JSON.parse(row.state) as T } : undefined
  }

  async casCard<T>(
    key: CallKey,
    expectedVersion: number,
    state: T,
    audit: AuditEntry[] = [],
    call?: CallStep,
  ): Promise<number | undefined> {
    this.check()
    const json = JSON.stringify(state)
    const status = statusOf(state)
    const at = this.now()
    return this.group.run(() => {
      const result =
        expectedVersion === 0
          ? this.stmts.insertCard.run(key.agentId, key.callId, status, json, at)
          : this.stmts.updateCard.run(status, json, at, key.agentId, key.callId, expectedVersion)
      if (result.changes !== 1) return undefined
      // In this write's savepoint: a decision that throws takes the card write back with it.
      if (call) this.decideInside(key, (row) => ({ events: call(row), result: undefined }))
      for (const entry of audit) this.writeAudit(entry, at)
      return expectedVersion + 1
    })
  }

  async findCards<T>(callId: string): Promise<Array<VersionedCard<T> & CallKey>> {
    this.check()
    return cardsOf<T>(this.stmts.findCards.all(callId))
  }

  async listCards<T>(filter: CardFilter = {}): Promise<Array<ListedCard<T>>> {
    this.check()
    const { statuses, notStatuses, callStates, updatedSince, latest } = filter
    if (statuses?.length === 0 || callStates?.length === 0) return []
    if (Object.values(filter).every((v) => v === undefined))
      return listedCardsOf<T>(this.stmts.listCards.all())
    const where: string[] = []
    const args: unknown[] = []
    const list = (values: string[]) => {
      args.push(...values)
      return values.map(() => '?').join(', ')
    }
    // With `latest`, walk cards_updated newest first: `+status` keeps the status index out of it.
    const status = latest === undefined ? 'c.status' : '+c.status'
    if (statuses) where.push(`${status} IN (${list(statuses)})`)
    if (notStatuses?.length) where.push(`(c.status IS NULL OR +c.status NOT IN (${list(notStatuses)}))`)
    if (callStates) where.push(`k.state IN (${list(callStates)})`)
    if (updatedSince !== undefined) {
      where.push('c.updated_at >= ?')
      args.push(updatedSince)
    }
    // The calls in those states first (live ones, through calls_state), then their cards by key.
    const from = callStates
      ? 'calls k CROSS JOIN cards c ON c.agent_id = k.agent_id AND c.call_id = k.call_id'
      : 'cards c'
    const order = latest === undefined ? 'c.updated_at, c.rowid' : 'c.updated_at DESC, c.rowid DESC LIMIT ?'
    if (latest !== undefined) args.push(latest)
    const sql = `SELECT c.agent_id, c.call_id, c.version, c.state, c.updated_at FROM ${from}
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order}`
    return listedCardsOf<T>(this.db.prepare(sql).all(...args))
  }

  async addPost(post: PostRecord): Promise<boolean> {
    this.check()
    return this.group.run(() => this.posts.add(post))
  }

  async claimPost(
    post: PostRecord,
    claim: PostClaim,
  ): Promise<{ createdAt: number; taken: boolean } | undefined> {
    this.check()
    return this.group.run(() => this.posts.claim(post, claim))
  }

  async renewPostClaims(owner: string, until: number): Promise<void> {
    this.check()
    await this.group.run(() => this.posts.renew(owner, until))
  }

  async releasePost(key: CallKey, destKey: string, owner: string): Promise<void> {
    this.check()
    await this.group.run(() => this.posts.release(key, destKey, owner))
  }

  async lapsedPosts(now: number, limit: number): Promise<PostRecord[]> {
    this.check()
    return this.posts.lapsed(now, limit)
  }

  async updatePost(key: CallKey, destKey: string, ref: unknown): Promise<void> {
    this.check()
    await this.group.run(() => this.posts.update(key, destKey, ref))
  }

  async listPosts(key: CallKey): Promise<PostRecord[]> {
    this.check()
    return this.posts.list(key)
  }

  async audit(entry: AuditEntry): Promise<void> {
    this.check()
    await this.group.run(() => this.writeAudit(entry, this.now()))
  }

  private writeAudit(entry: AuditEntry, at: number): void {
    this.stmts.audit.run(entry.agentId ?? null, entry.callId ?? null, at, JSON.stringify(entry))
  }

  async listAudit(
    filter: { agentId?: string; callId?: string; since?: number } = {},
  ): Promise<StoredAuditEntry[]> {
    this.check()
    const since = filter.since ?? 0
    const { agentId, callId } = filter
    const rows = (
      callId !== undefined && agentId !== undefined
        ? this.stmts.auditKey.all(callId, agentId, since)
        : callId !== undefined
          ? this.stmts.auditCall.all(callId, since)
          : agentId !== undefined
            ? this.stmts.auditAgent.all(agentId, since)
            : this.stmts.auditAll.all(since)
    ) as Array<{ seq: number; at: number; data: string }>
    return rows.map((r) => ({ ...(JSON.parse(r.data) as AuditEntry), seq: r.seq, at: r.at }))
  }

  async pruneCalls(before: number, limit: number): Promise<number> {
    this.check()
    const { endedCalls, deleteEvents, deleteCard, deletePosts, deleteCall } = this.stmts
    // In group commit's IMMEDIATE transaction: no decision on these calls can interleave; another
    // process's pruning waits.
    return this.group.run(() => {
      const victims = endedCalls.all(before, limit) as Array<{ agent_id: string; call_id: string }>
      for (const { agent_id, call_id } of victims) {
        for (const stmt of [deleteEvents, deleteCard, deletePosts, deleteCall]) stmt.run(agent_id, call_id)
      }
      return victims.length
    })
  }

  async pruneAudit(before: number, limit: number): Promise<number> {
    this.check()
    return this.group.run(() => this.stmts.pruneAudit.run(before, limit).changes)
  }

  async putSession(session: SessionRecord, now: number): Promise<void> {
    this.check()
    await this.group.run(() => this.sessions.put(session, now))
  }

  async getSession(id: string, now: number): Promise<SessionRecord | undefined> {
    this.check()
    return this.sessions.get(id, now)
  }

  async deleteSession(id: string): Promise<void> {
    this.check()
    await this.group.run(() => this.sessions.delete(id))
  }

  async rememberOnce(key: string, until: number, now: number): Promise<boolean> {
    this.check()
    return this.group.run(() => this.sessions.rememberOnce(key, until, now))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.group.flush()
    await this.checkpointer?.close()
    this.db.close()
    await this.wal.close()
  }
}
// Every driver failure of a store method (disk full, read-only, locked) reaches the caller as a
// StorageError; a decision's own error (a UserQuestionError) and programming errors pass as they
// are. Wrapping the async methods once keeps each of them free of the same try/catch.
for (const name of Object.getOwnPropertyNames(SqliteStore.prototype)) {
  const original: unknown = Reflect.get(SqliteStore.prototype, name)
  if (typeof original !== 'function' || original.constructor.name !== 'AsyncFunction') continue
  const method = original as (this: SqliteStore, ...args: unknown[]) => Promise<unknown>
  Reflect.set(SqliteStore.prototype, name, async function (this: SqliteStore, ...args: unknown[]) {
    try {
      return await method.apply(this, args)
    } catch (error) {
      throw fromSqliteError(error, this.path)
    }
  })
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
