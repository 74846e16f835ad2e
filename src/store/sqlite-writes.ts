import type Database from 'better-sqlite3'
import { isStorageError, StorageError, type StorageFault } from './errors.js'
import { foldCall } from './fold.js'
import { SqlitePosts } from './sqlite-posts.js'
import { type CallRow, callRow } from './sqlite-schema.js'
import { SqliteSessions } from './sqlite-sessions.js'
import { type SqliteStatements, sqliteStatements } from './sqlite-statements.js'
import type { CallKey, CallRecord, PostClaim, PostRecord, SessionRecord, StoreEvent } from './types.js'

/*
 * The SQLite store's writes as data. A write is decided on the main thread (a decision reads the
 * call's row there and returns its events) and carried out by whichever thread holds the writing
 * connection: the writer thread for a database file (sqlite-writer.ts), the main thread for an
 * in-memory one. Both run the same `applyWrite`, so there is one meaning of every write.
 */

/** A call's row as a decision read it: its stored JSON, or null when there was none. */
export type RowStamp = string | null

/**
 * A decision's events, to append only if the call's row is still the one it was decided on;
 * otherwise the write is `STALE` and the store decides again on the newer row.
 */
export interface DecidedEvents {
  expect: RowStamp
  events: StoreEvent[]
  /** When each event happened (epoch ms), read off the store's clock as it was decided. */
  at: number[]
}

export type WriteOp =
  | { op: 'append'; events: StoreEvent[]; at: number[] }
  | ({ op: 'decide'; key: CallKey } & DecidedEvents)
  | {
      op: 'card'
      key: CallKey
      expectedVersion: number
      status: string | null
      state: string
      at: number
      audit: AuditRow[]
      /** The card's call step, decided on the main thread; `failed`: it threw there. */
      step?: DecidedEvents & { failed: boolean }
    }
  | { op: 'audit'; row: AuditRow }
  | { op: 'addPost'; post: PostRecord }
  | { op: 'claimPost'; post: PostRecord; claim: PostClaim }
  | { op: 'renewPosts'; owner: string; until: number }
  | { op: 'releasePost'; key: CallKey; destKey: string; owner: string }
  | { op: 'updatePost'; key: CallKey; destKey: string; ref: unknown }
  | { op: 'pruneCalls'; before: number; limit: number }
  | { op: 'pruneAudit'; before: number; limit: number }
  | { op: 'putSession'; session: SessionRecord; now: number }
  | { op: 'deleteSession'; id: string }
  | { op: 'rememberOnce'; key: string; until: number; now: number }

export interface AuditRow {
  agentId: string | null
  callId: string | null
  at: number
  data: string
}

/** A decided write whose call's row changed before it could be applied: decide again. */
export const STALE = 'stale' as const

/** A card whose call step threw on the main thread, and whose card write still held. */
export const STEP_FAILED = 'step-failed' as const

/** One write's outcome, as it crosses between threads (errors as plain data). */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: WireError }

/** An error as it crosses a thread: what the main thread needs to rebuild a coded one. */
export interface WireError {
  name: string
  message: string
  code?: string
  fault?: StorageFault
}

export function toWire(error: unknown): WireError {
  if (isStorageError(error)) {
    return {
      name: 'StorageError',
      message: error.message,
      code: error.code,
      fault: (error as StorageError).fault,
    }
  }
  const e = error instanceof Error ? error : new Error(String(error))
  const code = (e as { code?: unknown }).code
  return { name: e.name, message: e.message, ...(typeof code === 'string' ? { code } : {}) }
}

/** The error again, on the main thread: a StorageError as one, a driver error with its `code`. */
export function fromWire(wire: WireError): Error {
  if (wire.name === 'StorageError' && wire.fault) return new StorageError(wire.fault, wire.message)
  const error = new Error(wire.message)
  error.name = wire.name
  if (wire.code !== undefined) Object.assign(error, { code: wire.code })
  return error
}

/** Thrown inside a write's savepoint to roll it back, then reported as the value it carries. */
class Undo {
  constructor(readonly value: unknown) {}
}

/**
 * The writing connection's statements and every write. `commit` runs a batch in one IMMEDIATE
 * transaction, each write in a savepoint of its own: one that fails is rolled back alone.
 */
export class SqliteWrites {
  readonly #stmts: SqliteStatements
  readonly #posts: SqlitePosts
  readonly #sessions: SqliteSessions
  readonly #commit: Database.Transaction<(ops: WriteOp[], outcomes: Outcome[]) => void>
  readonly #savepoint: Database.Transaction<(op: WriteOp) => unknown>

  constructor(db: Database.Database) {
    this.#stmts = sqliteStatements(db)
    this.#posts = new SqlitePosts(db)
    this.#sessions = new SqliteSessions(db)
    this.#savepoint = db.transaction((op: WriteOp) => this.#apply(op))
    this.#commit = db.transaction((ops: WriteOp[], outcomes: Outcome[]) => {
      for (const op of ops) {
        try {
          outcomes.push({ ok: true, value: this.#savepoint(op) })
        } catch (error) {
          outcomes.push(
            error instanceof Undo ? { ok: true, value: error.value } : { ok: false, error: toWire(error) },
          )
        }
      }
    })
  }

  /** Commit `ops` (throws when the transaction itself cannot begin or commit). */
  commit(ops: WriteOp[]): Outcome[] {
    const outcomes: Outcome[] = []
    this.#commit.immediate(ops, outcomes)
    return outcomes
  }

  #row(key: CallKey): CallRow | undefined {
    return this.#stmts.getCall.get(key.agentId, key.callId) as CallRow | undefined
  }

  /** Append one event and fold it into its call's row. */
  #insert(event: StoreEvent, call: CallRecord | undefined, at: number): CallRecord | undefined {
    const { lastInsertRowid } = this.#stmts.insertEvent.run(
      event.agentId,
      event.callId,
      event.type,
      at,
      JSON.stringify(event),
    )
    const next = foldCall(call, { ...event, seq: Number(lastInsertRowid), at })
    if (next) this.#stmts.putCall.run(callRow(next))
    return next
  }

  /** A decision's events, if the row is still the one decided on (else the savepoint is undone). */
  #decided(key: CallKey, decided: DecidedEvents): void {
    const row = this.#row(key)
    if ((row?.data ?? null) !== decided.expect) throw new Undo(STALE)
    let call = row ? (JSON.parse(row.data) as CallRecord) : undefined
    decided.events.forEach((event, i) => {
      call = this.#insert(event, call, decided.at[i] as number)
    })
  }

  #audit(row: AuditRow): void {
    this.#stmts.audit.run(row.agentId, row.callId, row.at, row.data)
  }

  #apply(op: WriteOp): unknown {
    switch (op.op) {
      case 'append':
        op.events.forEach((event, i) => {
          const row = this.#row(event)
          this.#insert(event, row ? (JSON.parse(row.data) as CallRecord) : undefined, op.at[i] as number)
        })
        return undefined
      case 'decide':
        this.#decided(op.key, op)
        return undefined
      case 'card': {
        const { key } = op
        const result =
          op.expectedVersion === 0
            ? this.#stmts.insertCard.run(key.agentId, key.callId, op.status, op.state, op.at)
            : this.#stmts.updateCard.run(
                op.status,
                op.state,
                op.at,
                key.agentId,
                key.callId,
                op.expectedVersion,
              )
        // A card that moved on is a conflict, whatever its call step would have done.
        if (result.changes !== 1) return undefined
        if (op.step) {
          this.#decided(key, op.step)
          if (op.step.failed) throw new Undo(STEP_FAILED)
        }
        for (const row of op.audit) this.#audit(row)
        return op.expectedVersion + 1
      }
      case 'audit':
        this.#audit(op.row)
        return undefined
      case 'addPost':
        return this.#posts.add(op.post)
      case 'claimPost':
        return this.#posts.claim(op.post, op.claim)
      case 'renewPosts':
        this.#posts.renew(op.owner, op.until)
        return undefined
      case 'releasePost':
        this.#posts.release(op.key, op.destKey, op.owner)
        return undefined
      case 'updatePost':
        this.#posts.update(op.key, op.destKey, op.ref)
        return undefined
      case 'pruneCalls': {
        const { endedCalls, deleteEvents, deleteCard, deletePosts, deleteCall } = this.#stmts
        // In the IMMEDIATE transaction: no decision on these calls can interleave; another
        // process's pruning waits.
        const victims = endedCalls.all(op.before, op.limit) as Array<{ agent_id: string; call_id: string }>
        for (const { agent_id, call_id } of victims) {
          for (const stmt of [deleteEvents, deleteCard, deletePosts, deleteCall]) stmt.run(agent_id, call_id)
        }
        return victims.length
      }
      case 'pruneAudit':
        return this.#stmts.pruneAudit.run(op.before, op.limit).changes
      case 'putSession':
        this.#sessions.put(op.session, op.now)
        return undefined
      case 'deleteSession':
        this.#sessions.delete(op.id)
        return undefined
      case 'rememberOnce':
        return this.#sessions.rememberOnce(op.key, op.until, op.now)
    }
  }
}
