import { statusOf } from './fold.js'
import type { OnceBatches } from './pg-batches.js'
import {
  type Note,
  type OnceStatement,
  type Queryable,
  type TransactionEnd,
  TransactionNotes,
} from './pg-connect.js'
import type { AuditEntry, CallKey, CallRecord, StoreEvent } from './types.js'

/*
 * The PostgreSQL store's writes, one statement each, on the pool or inside a transaction. The
 * store (postgres.ts) decides what to write and when to notify: every notification goes just after
 * the COMMIT of what it announces (pg-connect.ts, TransactionNotes).
 */

/** Append one event to the log (inside a transaction, whose `notes` then send `note`); returns its seq. */
export async function writeEvent(
  c: Queryable,
  event: StoreEvent,
  at: number,
  notes: TransactionNotes,
  note: Note,
): Promise<number> {
  const { rows } = await c.query<{ seq: string }>(
    'INSERT INTO askbridge_events (agent_id, call_id, type, at, data) VALUES ($1, $2, $3, $4, $5) RETURNING seq',
    [event.agentId, event.callId, event.type, at, JSON.stringify(event)],
  )
  notes.add(note)
  return Number(rows[0]?.seq)
}

/** Write a call's folded row; returns its record as written. */
export async function writeCall(c: Queryable, call: CallRecord): Promise<string> {
  const params = callParams(call)
  await c.query(
    `INSERT INTO askbridge_calls (${CALL_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ${CALL_UPSERT}`,
    params,
  )
  return params[9] as string
}

const CALL_UPSERT = `ON CONFLICT (agent_id, call_id) DO UPDATE SET state = excluded.state, timed = excluded.timed,
       deadline = excluded.deadline, asked_seq = excluded.asked_seq, settled_seq = excluded.settled_seq,
       has_reply = excluded.has_reply, ended_at = excluded.ended_at, record = excluded.record`

/** A call row's columns, in the order of {@link callParams}. */
const CALL_COLUMNS =
  'agent_id, call_id, state, timed, deadline, asked_seq, settled_seq, has_reply, ended_at, record'

/** A call row's values, in the order of {@link CALL_COLUMNS}. */
function callParams(call: CallRecord): unknown[] {
  return [
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
  ]
}

/**
 * One event and its call's folded row, in one statement sent with the COMMIT (one round trip): the
 * event goes in under `seq`, reserved by the transaction's opening (pg-leases.ts), so the row could
 * be folded before the statement. `lease`: this process takes the call's deadline (a timed ask), in
 * the same row write. `note` is sent once committed. Returns the call's record as written.
 */
export async function commitEventAndCall(
  end: TransactionEnd,
  event: { event: StoreEvent; seq: number; at: number; note: Note },
  call: CallRecord,
  lease?: Lease,
): Promise<string> {
  end.notes.add(event.note)
  const { agentId, callId, type } = event.event
  const params: unknown[] = [agentId, callId, event.seq, type, event.at, JSON.stringify(event.event)]
  params.push(...callParams(call).slice(2))
  const leased = lease ? ', lease_owner, lease_until' : ''
  if (lease) params.push(lease.owner, lease.until)
  await end.commitWith(
    `WITH event AS (
       INSERT INTO askbridge_events (seq, agent_id, call_id, type, at, data) VALUES ($3, $1, $2, $4, $5, $6)
     )
     INSERT INTO askbridge_calls (${CALL_COLUMNS}${leased})
     VALUES ($1, $2, $7, $8, $9, $10, $11, $12, $13, $14${lease ? ', $15, $16' : ''})
     ${CALL_UPSERT}${lease ? ', lease_owner = excluded.lease_owner, lease_until = excluded.lease_until' : ''}`,
    params,
  )
  return params[13] as string
}

/** A timed call's deadline held by the process `owner` until `until` (epoch ms). */
export interface Lease {
  owner: string
  until: number
}

/** This process waits on a timed call: its deadline is this process's until `until`. */
export async function takeLease(c: Queryable, key: CallKey, { owner, until }: Lease): Promise<void> {
  await c.query(
    'UPDATE askbridge_calls SET lease_owner = $1, lease_until = $2 WHERE agent_id = $3 AND call_id = $4',
    [owner, until, key.agentId, key.callId],
  )
}

/** A card's compare-and-set: `state` if the card is still at `expectedVersion` (0: absent). */
export interface CardWrite {
  key: CallKey
  expectedVersion: number
  state: unknown
  /** `state` as JSON, as it is written. */
  stateText: string
  at: number
  /** Written only when the card is. */
  audit: AuditEntry[]
  /** Sent (once committed) only when the card is written. */
  notify: Note
  /**
   * Written only if the card is still this one (its row's `ord`), not a card made later under the
   * same key at the same version: set when the decision was taken on a remembered card.
   */
  identity?: string | undefined
}

/** The card's identity (its `ord`) when its compare-and-set wrote it, from a statement selecting `ord`. */
type CardWritten = string | undefined

const ordOf = (rows: Array<{ ord?: unknown }>): CardWritten =>
  rows[0]?.ord === undefined || rows[0].ord === null ? undefined : String(rows[0].ord)

/**
 * Card compare-and-set, in one statement inside a transaction: the card's identity when the card
 * was at `expectedVersion` and is now written. Only then are the audit entries written and the
 * notification added to the transaction's `notes`.
 */
export async function writeCard(
  c: Queryable,
  card: CardWrite,
  notes: TransactionNotes,
): Promise<CardWritten> {
  const params = cardParams(card)
  const result = await c.query(`WITH ${cardAndAudit(card, params)} SELECT ord FROM card`, params)
  const written = ordOf(result.rows)
  if (written !== undefined) notes.add(card.notify)
  return written
}

/**
 * {@link writeCard} as a transaction of its own, in one round trip (committed together with others
 * that queue, see pg-batches.ts), the notification sent after the COMMIT if the card was written.
 */
export async function writeCardOnce(batches: OnceBatches, card: CardWrite): Promise<CardWritten> {
  const notes = new TransactionNotes()
  const { mark, token } = notes.ifWrittenFrom([card.notify], '$10')
  const params = [...cardParams(card), token]
  const [result] = await batches.run(
    card.key,
    [
      {
        sql: `WITH ${cardAndAudit(card, params)} SELECT ord, ${mark} FROM card`,
        params,
        prepared: true,
      },
    ],
    notes,
  )
  return ordOf(result?.rows ?? [])
}

/**
 * {@link writeCard} and the one event its call step decided, with the call's folded row, in one
 * statement: the event goes in under `seq`, reserved by the transaction's opening (pg-leases.ts),
 * so the folded row could be computed before the statement. Nothing but the card is compared:
 * when the card has moved on, no row of the four is written and false comes back. The statement
 * ends the transaction: it goes with the COMMIT, in one round trip.
 */
export async function writeCardAndEvent(
  end: TransactionEnd,
  card: CardWrite,
  event: { event: StoreEvent; seq: number; notify: Note },
  call: CallRecord | undefined,
): Promise<CardWritten> {
  const mark = end.notes.ifWritten([card.notify, event.notify])
  const params = [
    ...cardParams(card),
    event.seq,
    event.event.type,
    JSON.stringify(event.event),
    ...(call ? callParams(call).slice(2) : []),
  ]
  const result = await end.commitWith(
    `WITH ${cardAndAudit(card, params)},
     event AS (
       INSERT INTO askbridge_events (seq, agent_id, call_id, type, at, data)
       SELECT $10, $1, $2, $11, $5, $12 FROM card
     )${
       call
         ? `,
     call AS (
       INSERT INTO askbridge_calls (${CALL_COLUMNS})
       SELECT $1, $2, $13, $14, $15, $16, $17, $18, $19, $20 FROM card
       ${CALL_UPSERT}
     )`
         : ''
     }
     SELECT ord, ${mark} FROM card`,
    params,
  )
  return ordOf(result.rows)
}

/**
 * {@link writeCardAndEvent} decided on a call row read before the call's lock was taken: the
 * statement that follows the lock in a one-round-trip transaction (`transactOnce`). The four rows
 * are written only if the call's record is still `seenRecord`, read under the lock, and the card
 * still at its expected version. The event's seq is drawn in the statement; `settledBySeq` says the
 * folded row takes it as its `settledSeq` (written in the record and its column).
 * `guarded`: the call row was as seen; `ord`: the card's identity, when it (and so all four) was
 * written; `written` reads the notification's mark, which a CTE left unread would not set. The
 * notifications go in `notes`, sent after the COMMIT if the card was written.
 */
export function guardedCardAndEvent(
  card: CardWrite,
  event: { event: StoreEvent; notify: Note },
  call: CallRecord,
  seenRecord: string,
  settledBySeq: boolean,
  notes: TransactionNotes,
): OnceStatement {
  const { mark, token } = notes.ifWrittenFrom([card.notify, event.notify], '$22')
  const params = [
    ...cardParams(card),
    event.event.type,
    JSON.stringify(event.event),
    ...callParams(call).slice(2),
    seenRecord,
    settledBySeq,
    token,
  ]
  const sql = `WITH guard AS (
       SELECT 1 FROM askbridge_calls WHERE agent_id = $1 AND call_id = $2 AND record = $20
     ),
     ${cardAndAudit(card, params, 'guard')},
     s AS (SELECT nextval(pg_get_serial_sequence('askbridge_events', 'seq')) AS seq FROM card),
     event AS (
       INSERT INTO askbridge_events (seq, agent_id, call_id, type, at, data)
       SELECT s.seq, $1, $2, $10, $5, $11 FROM s
     ),
     call AS (
       INSERT INTO askbridge_calls (${CALL_COLUMNS})
       SELECT $1, $2, $12, $13, $14, $15, CASE WHEN $21 THEN s.seq ELSE $16 END, $17, $18,
         CASE WHEN $21 THEN jsonb_set($19::text::jsonb, '{settledSeq}', to_jsonb(s.seq))::text ELSE $19 END
       FROM s
       ${CALL_UPSERT}
     ),
     notified AS (SELECT ${mark} FROM card)
     SELECT (SELECT count(*) FROM guard)::int AS guarded, (SELECT count(*) FROM notified)::int AS written,
       (SELECT ord FROM card) AS ord`
  return { sql, params, prepared: true }
}

/**
 * The card's compare-and-set and its audit entries, as the CTEs `card` (which returns the card's
 * `ord`) and `audit` ($1–$9); with `guard` (the name of a CTE), the card is written only if that CTE
 * has a row. The compare-and-set of a card that exists compares its identity too when the write
 * has one: that parameter (or null) goes last in `params`, the statement's others already in.
 */
function cardAndAudit(card: CardWrite, params: unknown[], guard?: string): string {
  const guarded = guard ? ` AND EXISTS (SELECT 1 FROM ${guard})` : ''
  let write: string
  if (card.expectedVersion === 0) {
    write = `INSERT INTO askbridge_cards (agent_id, call_id, version, status, state, updated_at)
         SELECT $1, $2, 1, $3, $4, $5 WHERE $6::int = 0 ON CONFLICT DO NOTHING RETURNING ord`
  } else {
    // Always a parameter (null: whichever card is at that version), so the statement has one text.
    const identity = `$${params.push(card.identity ?? null)}`
    write = `UPDATE askbridge_cards SET version = version + 1, status = $3, state = $4, updated_at = $5
         WHERE agent_id = $1 AND call_id = $2 AND version = $6
           AND (${identity}::bigint IS NULL OR ord = ${identity})${guarded} RETURNING ord`
  }
  return `card AS (${write}),
     audit AS (
       INSERT INTO askbridge_audit (agent_id, call_id, at, data)
       SELECT e.agent_id, e.call_id, $5, e.data
       FROM card, unnest($7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS e(agent_id, call_id, data, n)
       ORDER BY e.n
     )`
}

/** $1–$9 of {@link cardAndAudit}. */
function cardParams({ key, expectedVersion, state, stateText, at, audit }: CardWrite): unknown[] {
  return [
    key.agentId,
    key.callId,
    statusOf(state),
    stateText,
    at,
    expectedVersion,
    audit.map((e) => e.agentId ?? null),
    audit.map((e) => e.callId ?? null),
    audit.map((e) => JSON.stringify(e)),
  ]
}

export async function writeAudit(c: Queryable, entry: AuditEntry, at: number): Promise<void> {
  await c.query('INSERT INTO askbridge_audit (agent_id, call_id, at, data) VALUES ($1, $2, $3, $4)', [
    entry.agentId ?? null,
    entry.callId ?? null,
    at,
    JSON.stringify(entry),
  ])
}
