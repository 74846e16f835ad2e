import type { Queryable } from './pg-connect.js'
import { type PostRow, postOf } from './rows.js'
import type { CallKey, PostClaim, PostRecord } from './types.js'

const KEY = 'agent_id = $1 AND call_id = $2 AND dest_key = $3'
/** A copy's columns, named: the statements are prepared, and a column added later must not change their rows. */
const POST = 'agent_id, call_id, dest_key, platform, ref, created_at'
/** The order `listPosts` gives a card's copies in. */
const POSTS_ORDER = 'created_at, ord'

/**
 * A card's copies as one JSON array of post rows ({@link POST}), in `listPosts`' order: a column
 * of a statement reading `askbridge_cards c` (see pg-reads.ts, getCardWithPosts).
 */
export const POSTS_OF_CARD = `(SELECT json_agg(json_build_object(${POST.split(', ')
  .map((column) => `'${column}', p.${column}`)
  .join(', ')}) ORDER BY ${POSTS_ORDER.replace(/(\w+)/g, 'p.$1')})
  FROM askbridge_posts p WHERE p.agent_id = c.agent_id AND p.call_id = c.call_id) AS posts`

/**
 * The PostgreSQL store's `askbridge_posts`: one copy per call and destination, and the claim of
 * the replica posting it (see Store.claimPost). The same rules as SQLite's (sqlite-posts.ts).
 */
export class PgPosts {
  constructor(private readonly db: Queryable) {}

  async add(post: PostRecord, claim?: PostClaim): Promise<boolean> {
    const r = await this.db.query(
      `INSERT INTO askbridge_posts (agent_id, call_id, dest_key, platform, ref, created_at, claim_owner, claim_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
      [
        post.agentId,
        post.callId,
        post.destKey,
        post.platform,
        JSON.stringify(post.ref ?? null),
        post.createdAt,
        claim?.owner ?? null,
        claim?.until ?? null,
      ],
    )
    return r.rowCount === 1
  }

  /**
   * Insert, else take over: each is one statement. Two replicas taking over at once both match
   * the row, but the second re-reads it after the first commits (READ COMMITTED) and no longer
   * matches, so one claimant wins.
   */
  async claim(
    post: PostRecord,
    claim: PostClaim,
  ): Promise<{ createdAt: number; taken: boolean } | undefined> {
    if (await this.add(post, claim)) return { createdAt: post.createdAt, taken: false }
    const { rows } = await this.db.query<{ created_at: string }>(
      `UPDATE askbridge_posts SET claim_owner = $4, claim_until = $5
       WHERE ${KEY} AND ref = $6 AND (claim_until IS NULL OR claim_until < $7 OR claim_owner = $4)
       RETURNING created_at`,
      [
        post.agentId,
        post.callId,
        post.destKey,
        claim.owner,
        claim.until,
        JSON.stringify(post.ref ?? null),
        claim.now,
      ],
    )
    return rows[0] ? { createdAt: Number(rows[0].created_at), taken: true } : undefined
  }

  async renew(owner: string, until: number): Promise<void> {
    await this.db.query(
      'UPDATE askbridge_posts SET claim_until = $1 WHERE claim_owner = $2 AND claim_until IS NOT NULL',
      [until, owner],
    )
  }

  async release(key: CallKey, destKey: string, owner: string): Promise<void> {
    await this.db.query(
      `UPDATE askbridge_posts SET claim_owner = NULL, claim_until = NULL WHERE ${KEY} AND claim_owner = $4`,
      [key.agentId, key.callId, destKey, owner],
    )
  }

  async lapsed(now: number, limit: number): Promise<PostRecord[]> {
    const { rows } = await this.db.query<PostRow>(
      `SELECT ${POST} FROM askbridge_posts WHERE claim_until < $1 ORDER BY claim_until LIMIT $2`,
      [now, limit],
    )
    return rows.map(postOf)
  }

  async update(key: CallKey, destKey: string, ref: unknown): Promise<void> {
    await this.db.query(
      `UPDATE askbridge_posts SET ref = $4, claim_owner = NULL, claim_until = NULL WHERE ${KEY}`,
      [key.agentId, key.callId, destKey, JSON.stringify(ref ?? null)],
    )
  }

  async list(key: CallKey): Promise<PostRecord[]> {
    const { rows } = await this.db.query<PostRow>(
      `SELECT ${POST} FROM askbridge_posts WHERE agent_id = $1 AND call_id = $2 ORDER BY ${POSTS_ORDER}`,
      [key.agentId, key.callId],
    )
    return rows.map(postOf)
  }
}
