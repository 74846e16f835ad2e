import type { UserQuestionProjectionView } from '../protocol/types.js'
import { pageOf } from './fold.js'
import type { Queryable } from './pg-connect.js'
import { POSTS_OF_CARD } from './pg-posts.js'
import { type CardRow, cardsOf, listedCardsOf, type PostRow, postOf } from './rows.js'
import type {
  AuditEntry,
  CallKey,
  CallRecord,
  CallState,
  CardFilter,
  ListedCard,
  PostRecord,
  StoredAuditEntry,
  StoredEvent,
  StoreEvent,
  VersionedCard,
} from './types.js'

/*
 * The PostgreSQL store's reads: each one statement (one snapshot) through an index. The store
 * (postgres.ts) passes the pool, or a transaction's connection.
 */

const records = (rows: Array<{ record: string }>) => rows.map((r) => JSON.parse(r.record) as CallRecord)

export async function readCall(c: Queryable, key: CallKey): Promise<CallRecord | undefined> {
  const { rows } = await c.query<{ record: string }>(
    'SELECT record FROM askbridge_calls WHERE agent_id = $1 AND call_id = $2',
    [key.agentId, key.callId],
  )
  return rows[0] ? (JSON.parse(rows[0].record) as CallRecord) : undefined
}

export async function findCalls(c: Queryable, callId: string): Promise<CallRecord[]> {
  const { rows } = await c.query<{ record: string }>(
    'SELECT record FROM askbridge_calls WHERE call_id = $1 ORDER BY asked_seq',
    [callId],
  )
  return records(rows)
}

export async function listCalls(
  c: Queryable,
  filter: { agentId?: string; states?: CallState[]; timed?: boolean },
): Promise<CallRecord[]> {
  const where: string[] = []
  const args: unknown[] = []
  if (filter.agentId !== undefined) {
    args.push(filter.agentId)
    where.push(`agent_id = $${args.length}`)
  }
  if (filter.states !== undefined) {
    if (filter.states.length === 0) return []
    args.push(filter.states)
    where.push(`state = ANY($${args.length}::text[])`)
  }
  if (filter.timed !== undefined) {
    args.push(filter.timed)
    where.push(`timed = $${args.length}`)
  }
  const sql = `SELECT record FROM askbridge_calls${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY asked_seq`
  const { rows } = await c.query<{ record: string }>(sql, args)
  return records(rows)
}

export async function projection(c: Queryable, agentId?: string): Promise<UserQuestionProjectionView> {
  // One statement: one snapshot, so a call settling meanwhile is in exactly one list.
  const { rows } = await c.query<{ record: string }>(
    `SELECT record FROM askbridge_calls
     WHERE timed AND state IN ('open', 'continued', 'settled') AND ($1::text IS NULL OR agent_id = $1)
     ORDER BY CASE WHEN state = 'settled' THEN 1 ELSE 0 END, CASE WHEN state = 'settled' THEN settled_seq ELSE asked_seq END`,
    [agentId ?? null],
  )
  const calls = records(rows)
  return {
    active: calls
      .filter((c) => c.state !== 'settled')
      .map((c) => ({ callId: c.callId, questions: c.questions, state: c.state as 'open' | 'continued' })),
    settled: calls
      .filter((c) => c.state === 'settled')
      .map((c) => ({ callId: c.callId, answers: c.answers ?? [] })),
  }
}

export async function projectionPage(
  c: Queryable,
  filter: { agentId?: string; limit: number; afterSeq?: number },
): Promise<{ view: UserQuestionProjectionView; next?: number }> {
  // One statement: one snapshot. The settled page walks askbridge_calls_settled.
  const { rows } = await c.query<{ record: string; part: number }>(
    `(SELECT record, 0 AS part, asked_seq AS ord FROM askbridge_calls
        WHERE timed AND state IN ('open', 'continued') AND ($1::text IS NULL OR agent_id = $1))
     UNION ALL
     (SELECT record, 1 AS part, settled_seq AS ord FROM askbridge_calls
        WHERE state = 'settled' AND timed AND settled_seq > $2 AND ($1::text IS NULL OR agent_id = $1)
        ORDER BY settled_seq LIMIT $3)
     ORDER BY part, ord`,
    [filter.agentId ?? null, filter.afterSeq ?? 0, filter.limit + 1],
  )
  const calls = rows.map((r) => ({ part: Number(r.part), call: JSON.parse(r.record) as CallRecord }))
  return pageOf(
    calls.filter((c) => c.part === 0).map((c) => c.call),
    calls.filter((c) => c.part === 1).map((c) => c.call),
    filter.limit,
  )
}

export async function events(
  c: Queryable,
  filter: { agentId?: string; callId?: string; sinceSeq?: number },
): Promise<StoredEvent[]> {
  const { rows } = await c.query<{ seq: string; agent_id: string; at: string; data: string }>(
    `SELECT seq, agent_id, at, data FROM askbridge_events
     WHERE seq > $1 AND ($2::text IS NULL OR agent_id = $2) AND ($3::text IS NULL OR call_id = $3)
     ORDER BY seq`,
    [filter.sinceSeq ?? 0, filter.agentId ?? null, filter.callId ?? null],
  )
  return rows.map((r) => ({
    ...(JSON.parse(r.data) as StoreEvent),
    agentId: r.agent_id,
    seq: Number(r.seq),
    at: Number(r.at),
  }))
}

/**
 * Told the call row (its `record` text; null: none) beside each card a read returns, as of the
 * same snapshot: a decision on the card may go optimistically on it (see `PostgresStore.casCard`).
 */
export type SeenCall = (key: CallKey, cardVersion: number, record: string | null) => void

/** The call row's record beside a card row, in the same statement. */
const CALL_RECORD =
  '(SELECT k.record FROM askbridge_calls k WHERE k.agent_id = c.agent_id AND k.call_id = c.call_id) AS call_record'

export async function getCard<T>(
  c: Queryable,
  key: CallKey,
  seen?: SeenCall,
): Promise<VersionedCard<T> | undefined> {
  const { rows } = await c.query<{ version: number; state: string; call_record: string | null }>(
    `SELECT c.version, c.state, ${CALL_RECORD} FROM askbridge_cards c WHERE c.agent_id = $1 AND c.call_id = $2`,
    [key.agentId, key.callId],
  )
  const row = rows[0]
  if (!row) return undefined
  seen?.(key, row.version, row.call_record)
  return { version: row.version, state: JSON.parse(row.state) as T }
}

/** {@link getCard} and the card's copies, in one statement. */
export async function getCardWithPosts<T>(
  c: Queryable,
  key: CallKey,
  seen?: SeenCall,
): Promise<(VersionedCard<T> & { posts: PostRecord[] }) | undefined> {
  const { rows } = await c.query<{
    version: number
    state: string
    call_record: string | null
    posts: PostRow[] | null
  }>(
    `SELECT c.version, c.state, ${CALL_RECORD}, ${POSTS_OF_CARD}
     FROM askbridge_cards c WHERE c.agent_id = $1 AND c.call_id = $2`,
    [key.agentId, key.callId],
  )
  const row = rows[0]
  if (!row) return undefined
  seen?.(key, row.version, row.call_record)
  return { version: row.version, state: JSON.parse(row.state) as T, posts: (row.posts ?? []).map(postOf) }
}

export async function listCards<T>(c: Queryable, filter: CardFilter): Promise<Array<ListedCard<T>>> {
  const { statuses, notStatuses, callStates, updatedSince, latest, calls } = filter
  if (statuses?.length === 0 || callStates?.length === 0 || calls?.length === 0) return []
  const where: string[] = []
  const args: unknown[] = []
  const arg = (value: unknown) => {
    args.push(value)
    return `$${args.length}`
  }
  if (calls) {
    const agents = arg(calls.map((k) => k.agentId))
    const ids = arg(calls.map((k) => k.callId))
    where.push(`(c.agent_id, c.call_id) IN (SELECT * FROM unnest(${agents}::text[], ${ids}::text[]))`)
  }
  if (statuses) where.push(`c.status = ANY(${arg(statuses)}::text[])`)
  if (notStatuses?.length) where.push(`(c.status IS NULL OR NOT c.status = ANY(${arg(notStatuses)}::text[]))`)
  if (callStates) where.push(`k.state = ANY(${arg(callStates)}::text[])`)
  if (updatedSince !== undefined) where.push(`c.updated_at >= ${arg(updatedSince)}`)
  const from = callStates
    ? 'askbridge_calls k JOIN askbridge_cards c ON c.agent_id = k.agent_id AND c.call_id = k.call_id'
    : 'askbridge_cards c'
  const order =
    latest === undefined ? 'c.updated_at, c.ord' : `c.updated_at DESC, c.ord DESC LIMIT ${arg(latest)}`
  const { rows } = await c.query<CardRow>(
    `SELECT c.agent_id, c.call_id, c.version, c.state, c.updated_at FROM ${from}
     ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order}`,
    args,
  )
  return listedCardsOf<T>(rows)
}

export async function findCards<T>(
  c: Queryable,
  callId: string,
  seen?: SeenCall,
): Promise<Array<VersionedCard<T> & CallKey>> {
  const { rows } = await c.query<CardRow & { call_record: string | null }>(
    `SELECT c.agent_id, c.call_id, c.version, c.state, ${CALL_RECORD} FROM askbridge_cards c WHERE c.call_id = $1 ORDER BY c.ord`,
    [callId],
  )
  const cards = cardsOf<T>(rows)
  if (seen) for (const [i, card] of cards.entries()) seen(card, card.version, rows[i]?.call_record ?? null)
  return cards
}

export async function listAudit(
  c: Queryable,
  filter: { agentId?: string; callId?: string; since?: number },
): Promise<StoredAuditEntry[]> {
  const { rows } = await c.query<{ seq: string; at: string; data: string }>(
    `SELECT seq, at, data FROM askbridge_audit
     WHERE at >= $1 AND ($2::text IS NULL OR agent_id = $2) AND ($3::text IS NULL OR call_id = $3)
     ORDER BY seq`,
    [filter.since ?? 0, filter.agentId ?? null, filter.callId ?? null],
  )
  return rows.map((r) => ({ ...(JSON.parse(r.data) as AuditEntry), seq: Number(r.seq), at: Number(r.at) }))
}
