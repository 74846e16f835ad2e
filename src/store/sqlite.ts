import Database from 'better-sqlite3'
import type { UserQuestionProjectionView } from '../protocol/types.js'
import { foldEvent, projectionOf } from './fold.js'
import type {
  AuditEntry,
  CallRecord,
  CallState,
  Decision,
  PostRecord,
  Store,
  StoredAuditEntry,
  StoredEvent,
  StoreEvent,
  VersionedCard,
} from './types.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  call_id TEXT NOT NULL,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_call ON events(call_id);
CREATE TABLE IF NOT EXISTS cards (
  call_id TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  state TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS posts (
  call_id TEXT NOT NULL,
  dest_key TEXT NOT NULL,
  platform TEXT NOT NULL,
  ref TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (call_id, dest_key)
);
CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  call_id TEXT,
  at INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_call ON audit(call_id);
`

export interface SqliteStoreOptions {
  /** Clock for event timestamps. @default Date.now */
  now?: () => number
  /**
   * `full`: every commit is fsynced, so an acknowledged answer survives power loss.
   * `normal`: WAL's default; survives a process crash, may lose the last commits on power loss.
   * @default 'full'
   */
  durability?: 'full' | 'normal'
}

/**
 * The embedded default store: better-sqlite3 in WAL mode. The folded call map is cached in
 * memory and caught up from the log before every read, so another process appending to the
 * same file is seen. `':memory:'` gives a throwaway store for tests.
 */
export class SqliteStore implements Store {
  readonly path: string
  private readonly db: Database.Database
  private readonly now: () => number
  private readonly calls = new Map<string, CallRecord>()
  private lastSeq = 0
  private closed = false
  private readonly stmts

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path
    this.now = options.now ?? Date.now
    this.db = new Database(path)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma(`synchronous = ${options.durability === 'normal' ? 'NORMAL' : 'FULL'}`)
    this.db.pragma('busy_timeout = 5000')
    this.db.exec(SCHEMA)
    this.stmts = {
      insertEvent: this.db.prepare('INSERT INTO events (call_id, type, at, data) VALUES (?, ?, ?, ?)'),
      eventsSince: this.db.prepare('SELECT seq, at, data FROM events WHERE seq > ? ORDER BY seq'),
      eventsOfCall: this.db.prepare(
        'SELECT seq, at, data FROM events WHERE call_id = ? AND seq > ? ORDER BY seq',
      ),
      getCard: this.db.prepare('SELECT version, state FROM cards WHERE call_id = ?'),
      insertCard: this.db.prepare(
        'INSERT INTO cards (call_id, version, state, updated_at) VALUES (?, 1, ?, ?) ON CONFLICT DO NOTHING',
      ),
      updateCard: this.db.prepare(
        'UPDATE cards SET version = version + 1, state = ?, updated_at = ? WHERE call_id = ? AND version = ?',
      ),
      listCards: this.db.prepare('SELECT call_id, version, state FROM cards ORDER BY updated_at'),
      addPost: this.db.prepare(
        'INSERT INTO posts (call_id, dest_key, platform, ref, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      updatePost: this.db.prepare('UPDATE posts SET ref = ? WHERE call_id = ? AND dest_key = ?'),
      listPosts: this.db.prepare('SELECT * FROM posts WHERE call_id = ? ORDER BY created_at, rowid'),
      audit: this.db.prepare('INSERT INTO audit (call_id, at, data) VALUES (?, ?, ?)'),
      auditAll: this.db.prepare('SELECT seq, at, data FROM audit WHERE at >= ? ORDER BY seq'),
      auditCall: this.db.prepare(
        'SELECT seq, at, data FROM audit WHERE call_id = ? AND at >= ? ORDER BY seq',
      ),
    }
    this.catchUp()
  }

  private catchUp(): void {
    const rows = this.stmts.eventsSince.all(this.lastSeq) as Array<{ seq: number; at: number; data: string }>
    for (const row of rows) {
      foldEvent(this.calls, { ...(JSON.parse(row.data) as StoreEvent), seq: row.seq, at: row.at })
      this.lastSeq = row.seq
    }
  }

  private insert(events: StoreEvent[]): void {
    for (const event of events) {
      this.stmts.insertEvent.run(event.callId, event.type, this.now(), JSON.stringify(event))
    }
  }

  private check(): void {
    if (this.closed) throw new Error('store is closed')
  }

  async append(...events: StoreEvent[]): Promise<void> {
    await this.transact(() => ({ events, result: undefined }))
  }

  async transact<T>(decide: Decision<T>): Promise<T> {
    this.check()
    // IMMEDIATE takes the write lock first, so a decision always sees the latest log.
    const run = this.db.transaction(() => {
      this.catchUp()
      const { events, result } = decide(this.calls)
      this.insert(events)
      return result
    })
    const result = run.immediate()
    this.catchUp()
    return result
  }

  async getCall(callId: string): Promise<CallRecord | undefined> {
    this.check()
    this.catchUp()
    const call = this.calls.get(callId)
    return call ? structuredClone(call) : undefined
  }

  async listCalls(filter: { agentId?: string; states?: CallState[] } = {}): Promise<CallRecord[]> {
    this.check()
    this.catchUp()
    return [...this.calls.values()]
      .filter((c) => filter.agentId === undefined || c.agentId === filter.agentId)
      .filter((c) => filter.states === undefined || filter.states.includes(c.state))
      .sort((a, b) => a.askedSeq - b.askedSeq)
      .map((c) => structuredClone(c))
  }

  async projection(agentId?: string): Promise<UserQuestionProjectionView> {
    this.check()
    this.catchUp()
    return structuredClone(projectionOf(this.calls.values(), agentId))
  }

  async events(filter: { callId?: string; sinceSeq?: number } = {}): Promise<StoredEvent[]> {
    this.check()
    const since = filter.sinceSeq ?? 0
    const rows = (
      filter.callId === undefined
        ? this.stmts.eventsSince.all(since)
        : this.stmts.eventsOfCall.all(filter.callId, since)
    ) as Array<{ seq: number; at: number; data: string }>
    return rows.map((r) => ({ ...(JSON.parse(r.data) as StoreEvent), seq: r.seq, at: r.at }))
  }

  async getCard<T>(callId: string): Promise<VersionedCard<T> | undefined> {
    this.check()
    const row = this.stmts.getCard.get(callId) as { version: number; state: string } | undefined
    return row ? { version: row.version, state: JSON.parse(row.state) as T } : undefined
  }

  async casCard<T>(callId: string, expectedVersion: number, state: T): Promise<number | undefined> {
    this.check()
    const json = JSON.stringify(state)
    const result =
      expectedVersion === 0
        ? this.stmts.insertCard.run(callId, json, this.now())
        : this.stmts.updateCard.run(json, this.now(), callId, expectedVersion)
    return result.changes === 1 ? expectedVersion + 1 : undefined
  }

  async listCards<T>(): Promise<Array<VersionedCard<T> & { callId: string }>> {
    this.check()
    const rows = this.stmts.listCards.all() as Array<{ call_id: string; version: number; state: string }>
    return rows.map((r) => ({ callId: r.call_id, version: r.version, state: JSON.parse(r.state) as T }))
  }

  async addPost(post: PostRecord): Promise<boolean> {
    this.check()
    const r = this.stmts.addPost.run(
      post.callId,
      post.destKey,
      post.platform,
      JSON.stringify(post.ref ?? null),
      post.createdAt,
    )
    return r.changes === 1
  }

  async updatePost(callId: string, destKey: string, ref: unknown): Promise<void> {
    this.check()
    this.stmts.updatePost.run(JSON.stringify(ref ?? null), callId, destKey)
  }

  async listPosts(callId: string): Promise<PostRecord[]> {
    this.check()
    const rows = this.stmts.listPosts.all(callId) as Array<{
      call_id: string
      dest_key: string
      platform: string
      ref: string
      created_at: number
    }>
    return rows.map((r) => ({
      callId: r.call_id,
      destKey: r.dest_key,
      platform: r.platform,
      ref: JSON.parse(r.ref) as unknown,
      createdAt: r.created_at,
    }))
  }

  async audit(entry: AuditEntry): Promise<void> {
    this.check()
    this.stmts.audit.run(entry.callId ?? null, this.now(), JSON.stringify(entry))
  }

  async listAudit(filter: { callId?: string; since?: number } = {}): Promise<StoredAuditEntry[]> {
    this.check()
    const since = filter.since ?? 0
    const rows = (
      filter.callId === undefined
        ? this.stmts.auditAll.all(since)
        : this.stmts.auditCall.all(filter.callId, since)
    ) as Array<{ seq: number; at: number; data: string }>
    return rows.map((r) => ({ ...(JSON.parse(r.data) as AuditEntry), seq: r.seq, at: r.at }))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.db.close()
  }
}
