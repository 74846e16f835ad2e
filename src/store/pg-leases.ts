/** Timed waits across PostgreSQL replicas: the per-call advisory lock, lease renewal, and finding lapsed deadlines to take over. */
import pg from 'pg'
import { callKeyString } from './fold.js'
import type { Queryable } from './pg-connect.js'
import type { CallKey, CallRecord } from './types.js'

/**
 * How long a timed wait stays this process's without renewal (renewed every third of it). With
 * the takeover pass every second (service/replicas.ts), a wait whose process died turns pending
 * by its deadline + 4 s at the latest, as every other process sees it.
 */
export const DEFAULT_LEASE_MS = 3000

/** Serialize every decision on one call across processes, until the transaction ends. */
export async function lockCall(c: Queryable, key: CallKey): Promise<void> {
  await c.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [key.agentId, key.callId])
}

/**
 * `items` in the order their calls' locks are taken wherever one transaction takes several (that of
 * the calls' keys): two such transactions then wait for each other, and never deadlock.
 */
export function inLockOrder<T>(items: readonly T[], keyOf: (item: T) => CallKey): T[] {
  const keyed = items.map((item) => ({ item, key: callKeyString(keyOf(item)) }))
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  return keyed.map((k) => k.item)
}

/** {@link lockCall} as a statement of a simple query (the ids quoted as literals). */
export function lockStatement(key: CallKey): string {
  return `SELECT pg_advisory_xact_lock(hashtext(${pg.escapeLiteral(key.agentId)}), hashtext(${pg.escapeLiteral(key.callId)}))`
}

/**
 * {@link lockCall}, then the call's row, as statements to send with the transaction's BEGIN (one
 * round trip instead of three). They go as one simple query, in which each statement takes its own
 * snapshot, so the row read is the one the lock now guards; the ids are quoted as literals.
 */
export function lockAndReadCall(key: CallKey, reserveSeq = false): string {
  const agent = pg.escapeLiteral(key.agentId)
  const call = pg.escapeLiteral(key.callId)
  const lockAndRead = `${lockStatement(key)}; SELECT record FROM askbridge_calls WHERE agent_id = ${agent} AND call_id = ${call}`
  // The seq of the event the transaction will append, drawn now so that its call row can be
  // folded before the write that stores both (a seq not used is a gap, as after a rollback).
  return reserveSeq
    ? `${lockAndRead}; SELECT nextval(pg_get_serial_sequence('askbridge_events', 'seq')) AS seq`
    : lockAndRead
}

/** The seq reserved by {@link lockAndReadCall}, from its results. */
export function seqOfOpening(opened: pg.QueryResult[]): number | undefined {
  const seq = (opened[2]?.rows[0] as { seq?: string } | undefined)?.seq
  return seq === undefined ? undefined : Number(seq)
}

/** The call's row from the results of {@link lockAndReadCall}. */
export function callOfOpening(opened: pg.QueryResult[]): CallRecord | undefined {
  const record = (opened[1]?.rows[0] as { record?: string } | undefined)?.record
  return record === undefined ? undefined : (JSON.parse(record) as CallRecord)
}

/** Extend the leases of this process's live timed waits to `until`. */
export async function renewLeases(db: Queryable, until: number, owner: string): Promise<void> {
  await db.query(
    `UPDATE askbridge_calls SET lease_until = $1 WHERE lease_owner = $2 AND state = 'open' AND timed`,
    [until, owner],
  )
}

/**
 * Timed calls still open past their deadline whose lease has lapsed, each locked for this
 * transaction (`FOR UPDATE SKIP LOCKED`: two processes scanning at once take different rows; a
 * call whose decision is in progress elsewhere is left to that one).
 */
export async function lapsedDeadlines(c: Queryable, now: number, limit: number): Promise<CallKey[]> {
  const { rows } = await c.query<{ agent_id: string; call_id: string }>(
    `SELECT agent_id, call_id FROM askbridge_calls
     WHERE state = 'open' AND timed AND deadline <= $1 AND (lease_until IS NULL OR lease_until < $1)
     ORDER BY deadline LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [now, limit],
  )
  const locked: CallKey[] = []
  for (const row of rows) {
    const key = { agentId: row.agent_id, callId: row.call_id }
    // A decision in progress on this call (transact) holds its lock: leave it to that one.
    const { rows: got } = await c.query<{ ok: boolean }>(
      'SELECT pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) AS ok',
      [key.agentId, key.callId],
    )
    if (got[0]?.ok) locked.push(key)
  }
  return locked
}
