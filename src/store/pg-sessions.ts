import type { Queryable } from './pg-connect.js'
import type { SessionRecord } from './types.js'

/**
 * The PostgreSQL store's `askbridge_sessions` (inbox sign-in) and `askbridge_seen_once` (replay
 * guards): every replica sees a sign-out and a request seen once. The same rules as SQLite's
 * (sqlite-sessions.ts).
 */
export class PgSessions {
  constructor(private readonly db: Queryable) {}

  async put(session: SessionRecord, now: number): Promise<void> {
    await this.db.query('DELETE FROM askbridge_sessions WHERE expires_at <= $1', [now])
    await this.db.query(
      `INSERT INTO askbridge_sessions (id, data, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
      [session.id, JSON.stringify(session), session.expiresAt],
    )
  }

  async get(id: string, now: number): Promise<SessionRecord | undefined> {
    const r = await this.db.query<{ data: string }>(
      'SELECT data FROM askbridge_sessions WHERE id = $1 AND expires_at > $2',
      [id, now],
    )
    const row = r.rows[0]
    return row ? (JSON.parse(row.data) as SessionRecord) : undefined
  }

  async delete(id: string): Promise<void> {
    await this.db.query('DELETE FROM askbridge_sessions WHERE id = $1', [id])
  }

  /** One INSERT: two replicas remembering the same key at once, one of them wins. */
  async rememberOnce(key: string, until: number, now: number): Promise<boolean> {
    await this.db.query('DELETE FROM askbridge_seen_once WHERE until <= $1', [now])
    const r = await this.db.query(
      'INSERT INTO askbridge_seen_once (key, until) VALUES ($1, $2) ON CONFLICT DO NOTHING',
      [key, until],
    )
    return r.rowCount === 1
  }
}
