import type Database from 'better-sqlite3'
import type { SessionRecord } from './types.js'

/**
 * The SQLite store's `sessions` (inbox sign-in) and `seen_once` (replay guards) tables. The same
 * rules as PostgreSQL's (pg-sessions.ts).
 */
export class SqliteSessions {
  private readonly stmts

  constructor(db: Database.Database) {
    this.stmts = {
      put: db.prepare(
        `INSERT INTO sessions (id, data, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
      ),
      expire: db.prepare('DELETE FROM sessions WHERE expires_at <= ?'),
      get: db.prepare('SELECT data FROM sessions WHERE id = ? AND expires_at > ?'),
      delete: db.prepare('DELETE FROM sessions WHERE id = ?'),
      forget: db.prepare('DELETE FROM seen_once WHERE until <= ?'),
      remember: db.prepare('INSERT INTO seen_once (key, until) VALUES (?, ?) ON CONFLICT DO NOTHING'),
    }
  }

  put(session: SessionRecord, now: number): void {
    this.stmts.expire.run(now)
    this.stmts.put.run(session.id, JSON.stringify(session), session.expiresAt)
  }

  get(id: string, now: number): SessionRecord | undefined {
    const row = this.stmts.get.get(id, now) as { data: string } | undefined
    return row ? (JSON.parse(row.data) as SessionRecord) : undefined
  }

  delete(id: string): void {
    this.stmts.delete.run(id)
  }

  rememberOnce(key: string, until: number, now: number): boolean {
    this.stmts.forget.run(now)
    return this.stmts.remember.run(key, until).changes === 1
  }
}
