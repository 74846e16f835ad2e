import type { Queryable } from './pg-connect.js'

/*
 * Retention on PostgreSQL: one batch per transaction (the store's `tx`), found through
 * askbridge_calls_ended and deleted by key, so a batch costs the same at any history size.
 */

/**
 * Delete up to `limit` settled or dropped calls that ended before `before`, with their events,
 * card and posts. Several processes may run this at once: `FOR UPDATE SKIP LOCKED` gives each
 * its own rows, and a call whose advisory lock is held (a decision in progress, which may be
 * about to ask it again under the same key) is left for the next batch. A decision that comes
 * after finds no call, as for a call never asked.
 */
export async function pruneCalls(c: Queryable, before: number, limit: number): Promise<number> {
  const { rows } = await c.query<{ agent_id: string; call_id: string }>(
    `SELECT agent_id, call_id FROM askbridge_calls
     WHERE state IN ('settled', 'dropped') AND ended_at < $1
     ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [before, limit],
  )
  if (rows.length === 0) return 0
  const { rows: free } = await c.query<{ a: string; c: string }>(
    `SELECT a, c FROM unnest($1::text[], $2::text[]) AS k(a, c)
     WHERE pg_try_advisory_xact_lock(hashtext(a), hashtext(c))`,
    [rows.map((r) => r.agent_id), rows.map((r) => r.call_id)],
  )
  if (free.length === 0) return 0
  const keys = [free.map((k) => k.a), free.map((k) => k.c)]
  for (const table of ['askbridge_events', 'askbridge_cards', 'askbridge_posts', 'askbridge_calls']) {
    await c.query(
      `DELETE FROM ${table} t USING unnest($1::text[], $2::text[]) AS k(a, c)
       WHERE t.agent_id = k.a AND t.call_id = k.c`,
      keys,
    )
  }
  return free.length
}

/** Delete up to `limit` audit entries older than `before`; concurrent runs take different rows. */
export async function pruneAudit(c: Queryable, before: number, limit: number): Promise<number> {
  const result = await c.query(
    `DELETE FROM askbridge_audit WHERE seq IN (
       SELECT seq FROM askbridge_audit WHERE at < $1 ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [before, limit],
  )
  return result.rowCount ?? 0
}
