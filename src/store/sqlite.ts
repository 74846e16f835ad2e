/** The embedded SQLite store (SqliteStore): writes through group commit, reads in sqlite-reads.ts, opening in sqlite-open.ts. */
import type Database from 'better-sqlite3'
import type { UserQuestionProjectionView } from '../protocol/types.js'
import { fromSqliteError, StorageError } from './errors.js'
import { foldCall, ownEvents, statusOf } from './fold.js'
import { cardsOf } from './rows.js'
import type { Checkpointer } from './sqlite-checkpoint.js'
import { GroupCommit } from './sqlite-group.js'
import { openSqlite } from './sqlite-open.js'
import { SqlitePosts } from './sqlite-posts.js'
import * as reads from './sqlite-reads.js'
import { type CallRow, callRow, parseCalls } from './sqlite-schema.js'
import { SqliteSessions } from './sqlite-sessions.js'
import { type SqliteStatements, sqliteStatements } from './sqlite-statements.js'
import type { WalSync } from './sqlite-sync.js'

export { SQLITE_SCHEMA_VERSION } from './sqlite-schema.js'

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
    const opened = openSqlite(path, options)
    this.db = opened.db
    this.wal = opened.wal
    this.checkpointer = opened.checkpointer
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
    return this.group.run(() => this.decideInside(key, decide, 'transact'))
  }

  /** Read one call's row, decide, append (inside a transaction). */
  private decideInside<T>(key: CallKey, decide: Decision<T>, what: 'transact' | 'casCard'): T {
    let call = this.readCall(key)
    const { events, result } = decide(call ? structuredClone(call) : undefined)
    for (const event of ownEvents(key, events, what)) call = this.insert(event, call)
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
    return reads.listCalls(this.db, filter)
  }

  async projection(agentId?: string): Promise<UserQuestionProjectionView> {
    this.check()
    return reads.projection(this.db, this.stmts, agentId)
  }

  async projectionPage(filter: {
    agentId?: string
    limit: number
    afterSeq?: number
  }): Promise<{ view: UserQuestionProjectionView; next?: number }> {
    this.check()
    return reads.projectionPage(this.db, this.stmts, filter)
  }

  async events(
    filter: { agentId?: string; callId?: string; sinceSeq?: number } = {},
  ): Promise<StoredEvent[]> {
    this.check()
    return reads.events(this.stmts, filter)
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
      if (call) this.decideInside(key, (row) => ({ events: call(row), result: undefined }), 'casCard')
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
    return reads.listCards<T>(this.db, this.stmts, filter)
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
    return reads.listAudit(this.stmts, filter)
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
