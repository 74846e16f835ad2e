import type Database from 'better-sqlite3'
import { type PostRow, postOf } from './rows.js'
import type { CallKey, PostClaim, PostRecord } from './types.js'

/**
 * The SQLite store's `posts` table: one copy per call and destination, and the claim of the
 * process posting it (see Store.claimPost). The same rules as PostgreSQL's (pg-posts.ts).
 */
export class SqlitePosts {
  private readonly stmts

  constructor(db: Database.Database) {
    const key = 'agent_id = ? AND call_id = ? AND dest_key = ?'
    this.stmts = {
      add: db.prepare(
        `INSERT INTO posts (agent_id, call_id, dest_key, platform, ref, created_at, claim_owner, claim_until)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      // Take over an intent still unposted whose holder is gone (or is this owner).
      takeOver: db.prepare(
        `UPDATE posts SET claim_owner = ?, claim_until = ?
         WHERE ${key} AND ref = ? AND (claim_until IS NULL OR claim_until < ? OR claim_owner = ?)
         RETURNING created_at`,
      ),
      renew: db.prepare('UPDATE posts SET claim_until = ? WHERE claim_owner = ? AND claim_until IS NOT NULL'),
      release: db.prepare(
        `UPDATE posts SET claim_owner = NULL, claim_until = NULL WHERE ${key} AND claim_owner = ?`,
      ),
      lapsed: db.prepare('SELECT * FROM posts WHERE claim_until < ? ORDER BY claim_until LIMIT ?'),
      update: db.prepare(`UPDATE posts SET ref = ?, claim_owner = NULL, claim_until = NULL WHERE ${key}`),
      list: db.prepare('SELECT * FROM posts WHERE agent_id = ? AND call_id = ? ORDER BY created_at, rowid'),
    }
  }

  add(post: PostRecord, claim?: PostClaim): boolean {
    const ref = JSON.stringify(post.ref ?? null)
    const { agentId, callId, destKey, platform, createdAt } = post
    const owner = claim?.owner ?? null
    return (
      this.stmts.add.run(agentId, callId, destKey, platform, ref, createdAt, owner, claim?.until ?? null)
        .changes === 1
    )
  }

  /** One statement each: the database serializes them, so one claimant wins. */
  claim(post: PostRecord, claim: PostClaim): { createdAt: number; taken: boolean } | undefined {
    if (this.add(post, claim)) return { createdAt: post.createdAt, taken: false }
    const { agentId, callId, destKey } = post
    const row = this.stmts.takeOver.get(
      claim.owner,
      claim.until,
      agentId,
      callId,
      destKey,
      JSON.stringify(post.ref ?? null),
      claim.now,
      claim.owner,
    ) as { created_at: number } | undefined
    return row ? { createdAt: Number(row.created_at), taken: true } : undefined
  }

  renew(owner: string, until: number): void {
    this.stmts.renew.run(until, owner)
  }

  release(key: CallKey, destKey: string, owner: string): void {
    this.stmts.release.run(key.agentId, key.callId, destKey, owner)
  }

  lapsed(now: number, limit: number): PostRecord[] {
    return (this.stmts.lapsed.all(now, limit) as PostRow[]).map(postOf)
  }

  update(key: CallKey, destKey: string, ref: unknown): void {
    this.stmts.update.run(JSON.stringify(ref ?? null), key.agentId, key.callId, destKey)
  }

  list(key: CallKey): PostRecord[] {
    return (this.stmts.list.all(key.agentId, key.callId) as PostRow[]).map(postOf)
  }
}
