/** The SQLite store's filtered reads: calls, the projection (whole and paged), events, cards and the audit. */
import type Database from 'better-sqlite3'
import type { UserQuestionProjectionView } from '../protocol/types.js'
import { pageOf } from './fold.js'
import { listedCardsOf } from './rows.js'
import { type EventRow, parseCalls, toEvent } from './sqlite-schema.js'
import type { SqliteStatements } from './sqlite-statements.js'
import type {
  AuditEntry,
  CallRecord,
  CallState,
  CardFilter,
  ListedCard,
  StoredAuditEntry,
  StoredEvent,
} from './types.js'

export function listCalls(
  db: Database.Database,
  filter: { agentId?: string; states?: CallState[]; timed?: boolean },
): CallRecord[] {
  const where: string[] = []
  const args: unknown[] = []
  if (filter.agentId !== undefined) {
    where.push('agent_id = ?')
    args.push(filter.agentId)
  }
  if (filter.states !== undefined) {
    if (filter.states.length === 0) return []
    where.push(`state IN (${filter.states.map(() => '?').join(', ')})`)
    args.push(...filter.states)
  }
  if (filter.timed !== undefined) {
    where.push('timed = ?')
    args.push(filter.timed ? 1 : 0)
  }
  const sql = `SELECT data FROM calls${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY asked_seq`
  return parseCalls(db.prepare(sql).all(...args))
}

export function projection(
  db: Database.Database,
  stmts: SqliteStatements,
  agentId: string | undefined,
): UserQuestionProjectionView {
  const read = db.transaction(() => {
    const active = parseCalls(agentId === undefined ? stmts.active.all() : stmts.activeOfAgent.all(agentId))
    const settled = parseCalls(
      agentId === undefined ? stmts.settled.all() : stmts.settledOfAgent.all(agentId),
    )
    return {
      active: active.map((c) => ({
        callId: c.callId,
        questions: c.questions,
        state: c.state as 'open' | 'continued',
      })),
      settled: settled.map((c) => ({ callId: c.callId, answers: c.answers ?? [] })),
    }
  })
  return read()
}

export function projectionPage(
  db: Database.Database,
  stmts: SqliteStatements,
  filter: { agentId?: string; limit: number; afterSeq?: number },
): { view: UserQuestionProjectionView; next?: number } {
  const { agentId, limit } = filter
  const after = filter.afterSeq ?? 0
  const read = db.transaction(() => {
    const active = parseCalls(agentId === undefined ? stmts.active.all() : stmts.activeOfAgent.all(agentId))
    const settled = parseCalls(
      agentId === undefined
        ? stmts.settledPage.all(after, limit + 1)
        : stmts.settledPageOfAgent.all(agentId, after, limit + 1),
    )
    return { active, settled }
  })
  const { active, settled } = read()
  return pageOf(active, settled, limit)
}

export function events(
  stmts: SqliteStatements,
  filter: { agentId?: string; callId?: string; sinceSeq?: number },
): StoredEvent[] {
  const since = filter.sinceSeq ?? 0
  const { agentId, callId } = filter
  const rows = (
    agentId !== undefined && callId !== undefined
      ? stmts.eventsOfKey.all(agentId, callId, since)
      : callId !== undefined
        ? stmts.eventsOfCall.all(callId, since)
        : agentId !== undefined
          ? stmts.eventsOfAgent.all(agentId, since)
          : stmts.eventsSince.all(since)
  ) as EventRow[]
  return rows.map(toEvent)
}

export function listCards<T>(
  db: Database.Database,
  stmts: SqliteStatements,
  filter: CardFilter,
): Array<ListedCard<T>> {
  const { statuses, notStatuses, callStates, updatedSince, latest, calls } = filter
  if (statuses?.length === 0 || callStates?.length === 0 || calls?.length === 0) return []
  if (Object.values(filter).every((v) => v === undefined)) return listedCardsOf<T>(stmts.listCards.all())
  const where: string[] = []
  const args: unknown[] = []
  const list = (values: string[]) => {
    args.push(...values)
    return values.map(() => '?').join(', ')
  }
  // With `latest`, walk cards_updated newest first: `+status` keeps the status index out of it.
  const status = latest === undefined ? 'c.status' : '+c.status'
  if (statuses) where.push(`${status} IN (${list(statuses)})`)
  if (notStatuses?.length) where.push(`(c.status IS NULL OR +c.status NOT IN (${list(notStatuses)}))`)
  if (callStates) where.push(`k.state IN (${list(callStates)})`)
  if (calls) {
    // One bound JSON array of [agent, call] pairs, however many: SQLite caps a statement's parameters.
    where.push("(c.agent_id, c.call_id) IN (SELECT value ->> '$[0]', value ->> '$[1]' FROM json_each(?))")
    args.push(JSON.stringify(calls.map((k) => [k.agentId, k.callId])))
  }
  if (updatedSince !== undefined) {
    where.push('c.updated_at >= ?')
    args.push(updatedSince)
  }
  // The calls in those states first (live ones, through calls_state), then their cards by key.
  const from = callStates
    ? 'calls k CROSS JOIN cards c ON c.agent_id = k.agent_id AND c.call_id = k.call_id'
    : 'cards c'
  const order = latest === undefined ? 'c.updated_at, c.rowid' : 'c.updated_at DESC, c.rowid DESC LIMIT ?'
  if (latest !== undefined) args.push(latest)
  const sql = `SELECT c.agent_id, c.call_id, c.version, c.state, c.updated_at FROM ${from}
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order}`
  return listedCardsOf<T>(db.prepare(sql).all(...args))
}

export function listAudit(
  stmts: SqliteStatements,
  filter: { agentId?: string; callId?: string; since?: number },
): StoredAuditEntry[] {
  const since = filter.since ?? 0
  const { agentId, callId } = filter
  const rows = (
    callId !== undefined && agentId !== undefined
      ? stmts.auditKey.all(callId, agentId, since)
      : callId !== undefined
        ? stmts.auditCall.all(callId, since)
        : agentId !== undefined
          ? stmts.auditAgent.all(agentId, since)
          : stmts.auditAll.all(since)
  ) as Array<{ seq: number; at: number; data: string }>
  return rows.map((r) => ({ ...(JSON.parse(r.data) as AuditEntry), seq: r.seq, at: r.at }))
}
