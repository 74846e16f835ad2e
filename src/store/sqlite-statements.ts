import type Database from 'better-sqlite3'

/** What the store uses of a prepared statement. */
interface Prepared {
  /** The SQL (tests check its query plan). */
  readonly source: string
  run(...params: unknown[]): Database.RunResult
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
}

/**
 * The SQLite store's prepared statements, by job: the log, call rows, cards, posts, audit and
 * retention. Prepared once per connection.
 */
export function sqliteStatements(database: Database.Database) {
  const db = { prepare: (sql: string): Prepared => database.prepare(sql) }
  const calls = 'SELECT data FROM calls'
  return {
    insertEvent: db.prepare('INSERT INTO events (agent_id, call_id, type, at, data) VALUES (?, ?, ?, ?, ?)'),
    eventsSince: db.prepare('SELECT seq, agent_id, at, data FROM events WHERE seq > ? ORDER BY seq'),
    eventsOfCall: db.prepare(
      'SELECT seq, agent_id, at, data FROM events WHERE call_id = ? AND seq > ? ORDER BY seq',
    ),
    eventsOfAgent: db.prepare(
      'SELECT seq, agent_id, at, data FROM events WHERE agent_id = ? AND seq > ? ORDER BY seq',
    ),
    eventsOfKey: db.prepare(
      'SELECT seq, agent_id, at, data FROM events WHERE agent_id = ? AND call_id = ? AND seq > ? ORDER BY seq',
    ),
    getCall: db.prepare(`${calls} WHERE agent_id = ? AND call_id = ?`),
    findCalls: db.prepare(`${calls} WHERE call_id = ? ORDER BY asked_seq`),
    putCall: db.prepare(
      `INSERT INTO calls (agent_id, call_id, state, timed, asked_seq, settled_seq, ended_at, data)
       VALUES (@agentId, @callId, @state, @timed, @askedSeq, @settledSeq, @endedAt, @data)
       ON CONFLICT (agent_id, call_id) DO UPDATE SET state = excluded.state, timed = excluded.timed,
         asked_seq = excluded.asked_seq, settled_seq = excluded.settled_seq,
         ended_at = excluded.ended_at, data = excluded.data`,
    ),
    active: db.prepare(`${calls} WHERE state IN ('open', 'continued') AND timed = 1 ORDER BY asked_seq`),
    activeOfAgent: db.prepare(
      `${calls} WHERE agent_id = ? AND state IN ('open', 'continued') AND timed = 1 ORDER BY asked_seq`,
    ),
    settled: db.prepare(`${calls} WHERE timed = 1 AND state = 'settled' ORDER BY settled_seq`),
    settledOfAgent: db.prepare(
      `${calls} WHERE agent_id = ? AND state = 'settled' AND timed = 1 ORDER BY settled_seq`,
    ),
    settledPage: db.prepare(
      `${calls} WHERE timed = 1 AND state = 'settled' AND settled_seq > ? ORDER BY settled_seq LIMIT ?`,
    ),
    settledPageOfAgent: db.prepare(
      `${calls} WHERE agent_id = ? AND state = 'settled' AND timed = 1 AND settled_seq > ? ORDER BY settled_seq LIMIT ?`,
    ),
    getCard: db.prepare('SELECT version, state FROM cards WHERE agent_id = ? AND call_id = ?'),
    insertCard: db.prepare(
      'INSERT INTO cards (agent_id, call_id, version, status, state, updated_at) VALUES (?, ?, 1, ?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    updateCard: db.prepare(
      'UPDATE cards SET version = version + 1, status = ?, state = ?, updated_at = ? WHERE agent_id = ? AND call_id = ? AND version = ?',
    ),
    findCards: db.prepare(
      'SELECT agent_id, call_id, version, state FROM cards WHERE call_id = ? ORDER BY rowid',
    ),
    listCards: db.prepare(
      'SELECT agent_id, call_id, version, state, updated_at FROM cards ORDER BY updated_at, rowid',
    ),
    audit: db.prepare('INSERT INTO audit (agent_id, call_id, at, data) VALUES (?, ?, ?, ?)'),
    auditAll: db.prepare('SELECT seq, at, data FROM audit WHERE at >= ? ORDER BY seq'),
    auditCall: db.prepare('SELECT seq, at, data FROM audit WHERE call_id = ? AND at >= ? ORDER BY seq'),
    auditKey: db.prepare(
      'SELECT seq, at, data FROM audit WHERE call_id = ? AND agent_id = ? AND at >= ? ORDER BY seq',
    ),
    auditAgent: db.prepare('SELECT seq, at, data FROM audit WHERE agent_id = ? AND at >= ? ORDER BY seq'),
    // Retention: the oldest ended calls through calls_ended, then each one's rows by key.
    endedCalls: db.prepare(
      // INDEXED BY: left to itself, SQLite reads calls_state and sorts every ended call (~30 ms
      // at 100k, on the event loop); the partial index gives the oldest ones in order.
      `SELECT agent_id, call_id FROM calls INDEXED BY calls_ended
       WHERE state IN ('settled', 'dropped') AND ended_at < ? ORDER BY ended_at LIMIT ?`,
    ),
    deleteEvents: db.prepare('DELETE FROM events WHERE agent_id = ? AND call_id = ?'),
    deleteCard: db.prepare('DELETE FROM cards WHERE agent_id = ? AND call_id = ?'),
    deletePosts: db.prepare('DELETE FROM posts WHERE agent_id = ? AND call_id = ?'),
    deleteCall: db.prepare('DELETE FROM calls WHERE agent_id = ? AND call_id = ?'),
    pruneAudit: db.prepare(
      'DELETE FROM audit WHERE seq IN (SELECT seq FROM audit WHERE at < ? ORDER BY at LIMIT ?)',
    ),
  }
}

export type SqliteStatements = ReturnType<typeof sqliteStatements>
