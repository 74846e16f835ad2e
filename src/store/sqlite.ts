/** The embedded SQLite store (SqliteStore): reads here and in sqlite-reads.ts, writes in sqlite-writes.ts through group commit, opening in sqlite-open.ts. */
import type Database from 'better-sqlite3'
import type { UserQuestionProjectionView } from '../protocol/types.js'
import { fromSqliteError, StorageError } from './errors.js'
import { callKeyOf, ownEvents, statusOf } from './fold.js'
import { cardsOf } from './rows.js'
import type { Checkpointer } from './sqlite-checkpoint.js'
import { GroupCommit, type Settled } from './sqlite-group.js'
import { openSqlite } from './sqlite-open.js'
import { SqlitePosts } from './sqlite-posts.js'
import * as reads from './sqlite-reads.js'
import { type CallRow, parseCalls } from './sqlite-schema.js'
import { SqliteSessions } from './sqlite-sessions.js'
import { type SqliteStatements, sqliteStatements } from './sqlite-statements.js'
import { type WriterConnection, writerConnection } from './sqlite-writer-thread.js'
import {
  type AuditRow,
  type DecidedEvents,
  fromWire,
  type Outcome,
  SqliteWrites,
  STALE,
  STEP_FAILED,
  type WriteOp,
} from './sqlite-writes.js'

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
import { WrittenCards } from './written.js'

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
 * How often one write is decided again because its call's row changed under it (another write of
 * the same batch, another process). Past this the row is changing faster than anyone can decide.
 */
const MAX_DECISIONS = 100

/**
 * The embedded default store: better-sqlite3 in WAL mode. Each call's folded state lives in the
 * `calls` table, written in the same transaction as its events, so reads are indexed queries
 * (another process writing the same file is seen at once) and nothing holds the history in
 * memory. `':memory:'` gives a throwaway store for tests.
 *
 * Reads run on this thread's connection. Writes are data (sqlite-writes.ts), batched per turn by
 * group commit and committed by the writer thread's connection (sqlite-writer.ts); an in-memory
 * database, which no second connection can open, commits them on this thread. A decision
 * (`transact`, `casCard`'s call step) is taken here on the row as read, and is applied only if the
 * row is still that one when it commits; otherwise it is taken again on the newer row.
 */
export class SqliteStore implements Store {
  readonly path: string
  private readonly db: Database.Database
  private readonly now: () => number
  private closed = false
  private readonly stmts: SqliteStatements
  private readonly posts: SqlitePosts
  private readonly sessions: SqliteSessions
  /** Every write goes through it: one commit for the writes of one turn (see sqlite-group.ts). */
  private readonly group: GroupCommit<WriteOp>
  /** The writer thread's connection; none in memory. */
  private readonly writer: WriterConnection | undefined
  /** Checkpoints the WAL off the event loop (see sqlite-checkpoint.ts); none in memory. */
  readonly checkpointer: Checkpointer | undefined

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path
    this.now = options.now ?? Date.now
    const opened = openSqlite(path, options)
    this.db = opened.db
    this.checkpointer = opened.checkpointer
    this.posts = new SqlitePosts(this.db)
    this.sessions = new SqliteSessions(this.db)
    this.stmts = sqliteStatements(this.db)
    const checkpointer = this.checkpointer
    if (this.db.memory) {
      const writes = new SqliteWrites(this.db)
      this.group = new GroupCommit(async (ops) => {
        // In memory: nothing to sync, durable once committed.
        return writes.commit(ops).map(settled)
      })
    } else {
      const writer = writerConnection(this.db.name, options.durability !== 'normal')
      this.writer = writer
      this.group = new GroupCommit(async (ops) => {
        const outcomes = await writer.commit(ops)
        checkpointer?.committed()
        return outcomes.map(settled)
      })
    }
  }

  private check(): void {
    if (this.closed) throw new StorageError('unavailable', 'storage unavailable: the store is closed')
  }

  private readRow(key: CallKey): CallRow | undefined {
    return this.stmts.getCall.get(key.agentId, key.callId) as CallRow | undefined
  }

  private readCall(key: CallKey): CallRecord | undefined {
    const row = this.readRow(key)
    return row ? (JSON.parse(row.data) as CallRecord) : undefined
  }

  /**
   * Decide on the call's row as read here, and commit `write` of that decision; decide again while
   * the row it was taken on changed before the commit (`STALE`).
   */
  private async decided<T>(
    key: CallKey,
    decide: (call: CallRecord | undefined) => T,
    events: (decision: T) => StoreEvent[],
    write: (decided: DecidedEvents, failed: boolean) => WriteOp,
    what: 'transact' | 'casCard',
  ): Promise<{ decision: T; value: unknown }> {
    for (let attempt = 0; attempt < MAX_DECISIONS; attempt++) {
      const row = this.readRow(key)
      const expect = row?.data ?? null
      let decision: { ok: true; value: T } | { ok: false; error: unknown }
      try {
        const value = decide(row ? (JSON.parse(row.data) as CallRecord) : undefined)
        ownEvents(key, events(value), what)
        decision = { ok: true, value }
      } catch (error) {
        decision = { ok: false, error }
      }
      // A decision that threw is checked against the row too: it stands only if taken on the latest.
      const decided = decision.ok ? events(decision.value) : []
      const value = await this.group.run<unknown>(
        write({ expect, events: decided, at: decided.map(() => this.now()) }, !decision.ok),
      )
      if (value === STALE) continue
      if (!decision.ok) {
        if (value === STEP_FAILED || what === 'transact') throw decision.error
        return { decision: undefined as T, value }
      }
      return { decision: decision.value, value }
    }
    throw new StorageError(
      'locked',
      `storage unavailable: the call ${key.agentId}/${key.callId} kept changing`,
    )
  }

  async append(...events: StoreEvent[]): Promise<void> {
    this.check()
    await this.group.run({ op: 'append', events, at: events.map(() => this.now()) })
  }

  async transact<T>(key: CallKey, decide: Decision<T>): Promise<T> {
    this.check()
    const { decision } = await this.decided(
      key,
      decide,
      (d) => d.events,
      (decided) => ({ op: 'decide', key: callKeyOf(key), ...decided }),
      'transact',
    )
    return decision.result
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
    return this.readCard<T>(key)
  }

  private readCard<T>(key: CallKey): VersionedCard<T> | undefined {
    const row = this.stmts.getCard.get(key.agentId, key.callId) as
      | { version: number; state: string }
      | undefined
    return row ? { version: row.version, state: JSON.parse(row.state) as T } : undefined
  }

  async getCardWithPosts<T>(key: CallKey): Promise<(VersionedCard<T> & { posts: PostRecord[] }) | undefined> {
    this.check()
    // One read transaction: one snapshot, whatever the writer commits meanwhile.
    return this.db.transaction(() => {
      const card = this.readCard<T>(key)
      return card && { ...card, posts: this.posts.list(key) }
    })()
  }

  async casCard<T>(
    key: CallKey,
    expectedVersion: number,
    state: T,
    audit: AuditEntry[] = [],
    call?: CallStep,
  ): Promise<number | undefined> {
    this.check()
    const at = this.now()
    const card = {
      op: 'card' as const,
      key: callKeyOf(key),
      expectedVersion,
      status: statusOf(state),
      state: JSON.stringify(state),
      at,
      audit: audit.map((entry) => auditRow(entry, at)),
    }
    return this.#written.writing(key, card.state, async () => {
      // The call step throws on a row it refuses: the card is then not written, unless it had
      // moved on anyway (a conflict, undefined), which the commit tells.
      const version = call
        ? ((
            await this.decided(
              key,
              call,
              (events) => events,
              (decided, failed) => ({ ...card, step: { ...decided, failed } }),
              'casCard',
            )
          ).value as number | undefined)
        : await this.group.run<number | undefined>(card)
      return version === undefined ? undefined : { version }
    })
  }

  async findCards<T>(callId: string): Promise<Array<VersionedCard<T> & CallKey>> {
    this.check()
    return cardsOf<T>(this.stmts.findCards.all(callId))
  }

  /**
   * The cards this process wrote last: a click on one is decided without reading it back. Nothing
   * else writes this file while a bridge serves it, and a card made again under a key after
   * retention is made by this process too, so no card identity is kept: another process's write
   * at a later version is caught by the compare-and-set.
   */
  readonly #written = new WrittenCards()

  writtenCards<T>(callId: string): Array<VersionedCard<T> & CallKey> {
    this.check()
    return this.#written.cards<T>(callId)
  }

  async listCards<T>(filter: CardFilter = {}): Promise<Array<ListedCard<T>>> {
    this.check()
    return reads.listCards<T>(this.db, this.stmts, filter)
  }

  async addPost(post: PostRecord): Promise<boolean> {
    this.check()
    return this.group.run({ op: 'addPost', post })
  }

  async claimPost(
    post: PostRecord,
    claim: PostClaim,
  ): Promise<{ createdAt: number; taken: boolean } | undefined> {
    this.check()
    return this.group.run({ op: 'claimPost', post, claim })
  }

  async renewPostClaims(owner: string, until: number): Promise<void> {
    this.check()
    await this.group.run({ op: 'renewPosts', owner, until })
  }

  async releasePost(key: CallKey, destKey: string, owner: string): Promise<void> {
    this.check()
    await this.group.run({ op: 'releasePost', key: callKeyOf(key), destKey, owner })
  }

  async lapsedPosts(now: number, limit: number): Promise<PostRecord[]> {
    this.check()
    return this.posts.lapsed(now, limit)
  }

  async updatePost(key: CallKey, destKey: string, ref: unknown): Promise<void> {
    this.check()
    await this.group.run({ op: 'updatePost', key: callKeyOf(key), destKey, ref })
  }

  async listPosts(key: CallKey): Promise<PostRecord[]> {
    this.check()
    return this.posts.list(key)
  }

  async audit(entry: AuditEntry): Promise<void> {
    this.check()
    await this.group.run({ op: 'audit', row: auditRow(entry, this.now()) })
  }

  async listAudit(
    filter: { agentId?: string; callId?: string; since?: number } = {},
  ): Promise<StoredAuditEntry[]> {
    this.check()
    return reads.listAudit(this.stmts, filter)
  }

  async pruneCalls(before: number, limit: number): Promise<number> {
    this.check()
    return this.group.run({ op: 'pruneCalls', before, limit })
  }

  async pruneAudit(before: number, limit: number): Promise<number> {
    this.check()
    return this.group.run({ op: 'pruneAudit', before, limit })
  }

  async putSession(session: SessionRecord, now: number): Promise<void> {
    this.check()
    await this.group.run({ op: 'putSession', session, now })
  }

  async getSession(id: string, now: number): Promise<SessionRecord | undefined> {
    this.check()
    return this.sessions.get(id, now)
  }

  async deleteSession(id: string): Promise<void> {
    this.check()
    await this.group.run({ op: 'deleteSession', id })
  }

  async rememberOnce(key: string, until: number, now: number): Promise<boolean> {
    this.check()
    return this.group.run({ op: 'rememberOnce', key, until, now })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    // Whatever was asked for before closing is committed (or fails) first.
    await this.group.flush().catch(() => undefined)
    await this.writer?.close()
    await this.checkpointer?.close()
    this.db.close()
  }
}

/** An audit entry as its row: the call it belongs to, when, and the entry. */
function auditRow(entry: AuditEntry, at: number): AuditRow {
  return { agentId: entry.agentId ?? null, callId: entry.callId ?? null, at, data: JSON.stringify(entry) }
}

/** A write's outcome from the writing connection, errors rebuilt as coded ones. */
function settled(outcome: Outcome): Settled {
  return outcome.ok ? outcome : { ok: false, error: fromWire(outcome.error) }
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
