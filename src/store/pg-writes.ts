import { statusOf } from './fold.js'
import type { Queryable } from './pg-reads.js'
import type { AuditEntry, CallKey, CallRecord, StoreEvent } from './types.js'

/*
 * The PostgreSQL store's writes, one statement each, on the pool or inside a transaction. The
 * store (postgres.ts) decides what to write and when to notify.
 */

/** Append one event to the log; returns its seq. */
export async function writeEvent(c: Queryable, event: StoreEvent, at: number): Promise<number> {
  const { rows } = await c.query<{ seq: string }>(
    'INSERT INTO askbridge_events (agent_id, call_id, type, at, data) VALUES ($1, $2, $3, $4, $5) RETURNING seq',
    [event.agentId, event.callId, event.type, at, JSON.stringify(event)],
  )
  return Number(rows[0]?.seq)
}

/** Write a call's folded row. */
export async function writeCall(c: Queryable, call: CallRecord): Promise<void> {
  await c.query(
    `INSERT INTO askbridge_calls (agent_id, call_id, state, timed, deadline, asked_seq, settled_seq, has_reply, ended_at, record)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (agent_id, call_id) DO UPDATE SET state = excluded.state, timed = excluded.timed,
       deadline = excluded.deadline, asked_seq = excluded.asked_seq, settled_seq = excluded.settled_seq,
       has_reply = excluded.has_reply, ended_at = excluded.ended_at, record = excluded.record`,
    [
      call.agentId,
      call.callId,
      call.state,
      call.timed,
      call.deadline ?? null,
      call.askedSeq,
      call.settledSeq ?? null,
      call.queuedReply !== undefined,
      call.endedAt ?? null,
      JSON.stringify(call),
    ],
  )
}

/** This process waits on a timed call: its deadline is this process's until `until`. */
export async function takeLease(c: Queryable, key: CallKey, owner: string, until: number): Promise<void> {
  await c.query(
    'UPDATE askbridge_calls SET lease_owner = $1, lease_until = $2 WHERE agent_id = $3 AND call_id = $4',
    [owner, until, key.agentId, key.callId],
  )
}

/** Card compare-and-set: true when the card was at `expectedVersion` (0: absent) and is now written. */
export async function writeCard(
  c: Queryable,
  key: CallKey,
  expectedVersion: number,
  state: unknown,
  at: number,
): Promise<boolean> {
  const json = JSON.stringify(state)
  const result =
    expectedVersion === 0
      ? await c.query(
          `INSERT INTO askbridge_cards (agent_id, call_id, version, status, state, updated_at)
           VALUES ($1, $2, 1, $3, $4, $5) ON CONFLICT DO NOTHING`,
          [key.agentId, key.callId, statusOf(state), json, at],
        )
      : await c.query(
          `UPDATE askbridge_cards SET version = version + 1, status = $1, state = $2, updated_at = $3
           WHERE agent_id = $4 AND call_id = $5 AND version = $6`,
          [statusOf(state), json, at, key.agentId, key.callId, expectedVersion],
        )
  return result.rowCount === 1
}

export async function writeAudit(c: Queryable, entry: AuditEntry, at: number): Promise<void> {
  await c.query('INSERT INTO askbridge_audit (agent_id, call_id, at, data) VALUES ($1, $2, $3, $4)', [
    entry.agentId ?? null,
    entry.callId ?? null,
    at,
    JSON.stringify(entry),
  ])
}
