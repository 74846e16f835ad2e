import type Database from 'better-sqlite3'
import { foldAll } from './fold.js'
import type { CallRecord, StoredEvent, StoreEvent } from './types.js'

/*
 * The SQLite store's tables: the DDL, the migration from the first schema, and how rows map to
 * records. The store itself (sqlite.ts) is the queries and transactions over them.
 */

/** The schema version this code writes (`PRAGMA user_version`). 0: empty or pre-#16. */
export const SQLITE_SCHEMA_VERSION = 6

/** Copies being posted, by when their claim lapses: what a sweep for dead holders reads. */
const POST_CLAIMS_INDEX = `CREATE INDEX IF NOT EXISTS posts_claims ON posts(claim_until)
  WHERE claim_until IS NOT NULL;
`

/** Recently updated cards (start-up, the inbox's finished list) without reading the rest. */
const CARDS_UPDATED_INDEX = 'CREATE INDEX IF NOT EXISTS cards_updated ON cards(updated_at);\n'

/** Retention finds ended calls by when they ended, never by reading the rest. */
const RETENTION_INDEXES = `CREATE INDEX IF NOT EXISTS calls_ended ON calls(ended_at)
  WHERE state IN ('settled', 'dropped');
`

/** Schema 6: inbox sign-in sessions and replay-guard keys, shared by every process on the file. */
const SESSIONS = `CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  data TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_expires ON sessions(expires_at);
CREATE TABLE IF NOT EXISTS seen_once (
  key TEXT PRIMARY KEY,
  until INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS seen_once_until ON seen_once(until);
`

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_key ON events(agent_id, call_id, seq);
CREATE INDEX IF NOT EXISTS events_call ON events(call_id, seq);
CREATE TABLE IF NOT EXISTS calls (
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  state TEXT NOT NULL,
  timed INTEGER NOT NULL,
  asked_seq INTEGER NOT NULL,
  settled_seq INTEGER,
  data TEXT NOT NULL,
  ended_at INTEGER,
  PRIMARY KEY (agent_id, call_id)
);
CREATE INDEX IF NOT EXISTS calls_agent_state ON calls(agent_id, state, asked_seq);
CREATE INDEX IF NOT EXISTS calls_state ON calls(state, asked_seq);
CREATE INDEX IF NOT EXISTS calls_call ON calls(call_id);
CREATE INDEX IF NOT EXISTS calls_settled ON calls(timed, state, settled_seq);
${RETENTION_INDEXES}CREATE TABLE IF NOT EXISTS cards (
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  status TEXT,
  state TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (agent_id, call_id)
);
CREATE INDEX IF NOT EXISTS cards_status ON cards(status, updated_at);
CREATE INDEX IF NOT EXISTS cards_call ON cards(call_id);
${CARDS_UPDATED_INDEX}CREATE TABLE IF NOT EXISTS posts (
  agent_id TEXT NOT NULL,
  call_id TEXT NOT NULL,
  dest_key TEXT NOT NULL,
  platform TEXT NOT NULL,
  ref TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  claim_owner TEXT,
  claim_until INTEGER,
  PRIMARY KEY (agent_id, call_id, dest_key)
);
${POST_CLAIMS_INDEX}CREATE TABLE IF NOT EXISTS audit (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT,
  call_id TEXT,
  at INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_call ON audit(call_id, agent_id);
CREATE INDEX IF NOT EXISTS audit_at ON audit(at);
${SESSIONS}`

/**
 * Schema 3 to 4 (retention): when each call ended, backfilled from its record or its last event,
 * and the audit indexed by time.
 */
const MIGRATE_FROM_V3 = `
ALTER TABLE calls ADD COLUMN ended_at INTEGER;
UPDATE calls SET ended_at = COALESCE(json_extract(data, '$.settledAt'),
  (SELECT max(e.at) FROM events e WHERE e.agent_id = calls.agent_id AND e.call_id = calls.call_id))
  WHERE state IN ('settled', 'dropped');
UPDATE calls SET data = json_set(data, '$.endedAt', ended_at) WHERE ended_at IS NOT NULL;
${RETENTION_INDEXES}CREATE INDEX IF NOT EXISTS audit_at ON audit(at);
`

/** Schema 2 to 3: who is posting a copy, until when (a claim), so two bridges never both post it. */
const MIGRATE_FROM_V2 = `
ALTER TABLE posts ADD COLUMN claim_owner TEXT;
ALTER TABLE posts ADD COLUMN claim_until INTEGER;
${POST_CLAIMS_INDEX}`

/** The agent that asked `call_id` most recently at or before `seq` (pre-#16 rows name no agent). */
export const ASKER = (callIdSql: string, seqSql: string) => `(
  SELECT json_extract(a.data, '$.agentId') FROM events a
  WHERE a.call_id = ${callIdSql} AND a.type = 'asked' AND a.seq <= ${seqSql}
  ORDER BY a.seq DESC LIMIT 1)`

/**
 * Pre-#16 databases keyed calls by callId alone. Every row gets the agent that asked it: events
 * the latest asker at or before them, cards their own `agentId`, posts and audit their card's
 * agent (else the latest asker). The `calls` table is folded from the log once.
 */
export const MIGRATE_FROM_V0 = `
ALTER TABLE events ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';
UPDATE events SET agent_id = COALESCE(json_extract(data, '$.agentId'), ${ASKER('events.call_id', 'events.seq')}, 'default');
UPDATE events SET data = json_set(data, '$.agentId', agent_id);
DROP INDEX IF EXISTS events_call;
ALTER TABLE cards RENAME TO cards_v0;
ALTER TABLE posts RENAME TO posts_v0;
ALTER TABLE audit RENAME TO audit_v0;
DROP INDEX IF EXISTS audit_call;
${SCHEMA}
INSERT INTO cards (agent_id, call_id, version, status, state, updated_at)
  SELECT COALESCE(json_extract(state, '$.agentId'), ${ASKER('cards_v0.call_id', '9223372036854775807')}, 'default'),
    call_id, version, json_extract(state, '$.status'), state, updated_at FROM cards_v0;
INSERT INTO posts (agent_id, call_id, dest_key, platform, ref, created_at)
  SELECT COALESCE((SELECT c.agent_id FROM cards c WHERE c.call_id = posts_v0.call_id LIMIT 1),
      ${ASKER('posts_v0.call_id', '9223372036854775807')}, 'default'),
    call_id, dest_key, platform, ref, created_at FROM posts_v0 ORDER BY rowid;
INSERT INTO audit (seq, agent_id, call_id, at, data)
  SELECT seq, CASE WHEN call_id IS NULL THEN NULL ELSE COALESCE(
      (SELECT c.agent_id FROM cards c WHERE c.call_id = audit_v0.call_id LIMIT 1),
      ${ASKER('audit_v0.call_id', '9223372036854775807')}, 'default') END,
    call_id, at, data FROM audit_v0 ORDER BY seq;
UPDATE audit SET data = json_set(data, '$.agentId', agent_id) WHERE agent_id IS NOT NULL;
DROP TABLE cards_v0;
DROP TABLE posts_v0;
DROP TABLE audit_v0;
`

export type EventRow = { seq: number; agent_id: string; at: number; data: string }
export type CallRow = { data: string }

export function toEvent(row: EventRow): StoredEvent {
  return { ...(JSON.parse(row.data) as StoreEvent), agentId: row.agent_id, seq: row.seq, at: row.at }
}

export function parseCalls(rows: unknown[]): CallRecord[] {
  return (rows as CallRow[]).map((r) => JSON.parse(r.data) as CallRecord)
}

export function callRow(call: CallRecord) {
  return {
    agentId: call.agentId,
    callId: call.callId,
    state: call.state,
    timed: call.timed ? 1 : 0,
    askedSeq: call.askedSeq,
    settledSeq: call.settledSeq ?? null,
    endedAt: call.endedAt ?? null,
    data: JSON.stringify(call),
  }
}

/** Bring a database to this code's schema: create it, or migrate the first schema (one transaction). */
export function migrateSqlite(db: Database.Database, path: string): void {
  const version = () => db.pragma('user_version', { simple: true }) as number
  if (version() === SQLITE_SCHEMA_VERSION) return
  db.transaction(() => {
    const current = version()
    if (current === SQLITE_SCHEMA_VERSION) return
    if (current > SQLITE_SCHEMA_VERSION) {
      throw new Error(
        `database ${path} has schema version ${current}; this askbridge knows up to ${SQLITE_SCHEMA_VERSION}`,
      )
    }
    const old = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get()
    if (old && current >= 2) {
      if (current === 2) db.exec(MIGRATE_FROM_V2)
      if (current <= 3) db.exec(MIGRATE_FROM_V3)
      db.exec(CARDS_UPDATED_INDEX)
      db.exec(SESSIONS)
    } else if (old) {
      db.exec(MIGRATE_FROM_V0)
      rebuildCalls(db)
    } else {
      db.exec(SCHEMA)
    }
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`)
  }).immediate()
}

/** Fold the whole log into `calls` (a migration only; afterwards rows are kept up to date). */
function rebuildCalls(db: Database.Database): void {
  const rows = db.prepare('SELECT seq, agent_id, at, data FROM events ORDER BY seq').all() as EventRow[]
  const put = db.prepare(
    `INSERT INTO calls (agent_id, call_id, state, timed, asked_seq, settled_seq, ended_at, data)
     VALUES (@agentId, @callId, @state, @timed, @askedSeq, @settledSeq, @endedAt, @data)`,
  )
  for (const call of foldAll(rows.map(toEvent)).values()) put.run(callRow(call))
}
