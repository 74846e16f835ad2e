/** The PostgreSQL store (PostgresStore) for several bridges on one database; leases in pg-leases.ts, reads and writes in pg-reads.ts and pg-writes.ts. */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { setBounded } from '../bounded.js'
import type { UserQuestionProjectionView } from '../protocol/types.js'
import { StorageError } from './errors.js'
import { callKeyString, foldCall, ownEvents } from './fold.js'
import { OnceBatches } from './pg-batches.js'
import {
  clientConfig,
  type Note,
  openPostgres,
  type PostgresPoolOptions,
  preparing,
  type Queryable,
  type TransactionEnd,
  TransactionNotes,
  transaction,
} from './pg-connect.js'
import { fromPgError } from './pg-errors.js'
import { type LeaderHandlers, type Leadership, schemaLeadership } from './pg-leader.js'
import {
  callOfOpening,
  DEFAULT_LEASE_MS,
  inLockOrder,
  lapsedDeadlines,
  lockAndReadCall,
  lockCall,
  lockStatement,
  renewLeases,
  seqOfOpening,
} from './pg-leases.js'
import { noteOf, PgListener, type StoreChangeListener } from './pg-notify.js'
import { PgPosts } from './pg-posts.js'
import * as reads from './pg-reads.js'
import { readCall } from './pg-reads.js'
import * as retention from './pg-retention.js'
import { PgSessions } from './pg-sessions.js'
import type { PostgresTarget } from './pg-url.js'
import * as writes from './pg-writes.js'
import type {
  AuditEntry,
  CallKey,
  CallRecord,
  CallState,
  CallStep,
  CardFilter,
  Decision,
  ListedCard,
  PostClaim,
  PostRecord,
  SessionRecord,
  Store,
  StoredAuditEntry,
  StoredEvent,
  StoreEvent,
  VersionedCard,
} from './types.js'
import { type Written, WrittenCards } from './written.js'

/** How many call rows read beside cards are kept for the decisions that follow (see `#seenCalls`). */
const SEEN_CALLS = 256
/** The seq a row is folded with before the statement that writes it draws the real one. */
const UNDRAWN_SEQ = -1

export interface PostgresStoreOptions extends PostgresPoolOptions {
  /** Clock for event timestamps and leases. @default Date.now */
  now?: () => number
  /** Names this process in leases and notifications. @default a random UUID */
  instanceId?: string
  /**
   * How long a timed wait stays this process's after its last renewal. Renewed every third of
   * it while the process lives; once it lapses, another process takes over the deadline.
   * @default 3000
   */
  leaseMs?: number
}

/**
 * The store for several bridges on one database: PostgreSQL through a node-postgres pool.
 * The same tables as SQLite: an append-only event log plus one folded row per call written in
 * the same transaction, so reads are indexed queries and nothing holds history in memory.
 * Decisions on one call are serialized across every process by a transaction-scoped advisory
 * lock on the call's key; card compare-and-set is `UPDATE ... WHERE version = $n`.
 * JSON is stored as text, byte for byte what SQLite keeps (jsonb would refuse `\u0000`).
 */
export class PostgresStore implements Store {
  readonly pool: pg.Pool
  readonly target: PostgresTarget
  /** The NOTIFY channel of this schema: every committed event names its call on it. */
  readonly channel: string
  /** This process, in leases and notifications. */
  readonly instanceId: string
  private readonly now: () => number
  private readonly leaseMs: number
  private readonly listener: PgListener
  private readonly heartbeat: ReturnType<typeof setInterval>
  private readonly leaderships = new Set<Leadership>()
  /** The pool, its failures mapped: a lost server is a StorageError (503), never a 500. */
  private readonly db: Queryable
  private readonly posts: PgPosts
  /** One-round-trip writes (clicks, card writes) committed together when they queue (pg-batches.ts). */
  private readonly batches: OnceBatches
  private readonly sessions: PgSessions
  private closed = false

  private constructor(pool: pg.Pool, target: PostgresTarget, channel: string, options: PostgresStoreOptions) {
    this.pool = pool
    this.target = target
    this.channel = channel
    this.now = options.now ?? Date.now
    this.instanceId = options.instanceId ?? randomUUID()
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
    const where = target.redacted
    // A parameterized statement is prepared once per connection (named), not planned per call.
    const pooled = preparing(pool)
    this.db = {
      query: ((text: string, values?: unknown[]) =>
        pooled.query(text, values).catch((error: unknown) => {
          throw fromPgError(error, where)
        })) as Queryable['query'],
    }
    this.posts = new PgPosts(this.db)
    this.batches = new OnceBatches(pool, where)
    this.sessions = new PgSessions(this.db)
    this.listener = new PgListener(clientConfig(target, options), channel, this.instanceId)
    // Renew the leases of this process's live timed waits. A failed renewal is retried next
    // time; should the lease lapse meanwhile, the worst case is the deadline's takeover.
    this.heartbeat = setInterval(
      () => {
        this.renewLeases().catch(() => {})
      },
      Math.max(50, Math.floor(this.leaseMs / 3)),
    )
    this.heartbeat.unref()
  }

  /**
   * Connect, migrate (once across replicas) and return the store. Throws a StoreOpenError
   * naming ASKBRIDGE_DB (without the password) and the server's refusal.
   */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const { pool, target } = await openPostgres(url, options)
    const schema = (await pool.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]?.s ?? 'public'
    return new PostgresStore(pool, target, `askbridge_${schema}`.slice(0, 63), options)
  }

  /**
   * Changes other processes commit (events appended, cards written), as they commit. A
   * `resync` follows a lost and regained connection: notifications may have been missed.
   * Returns the unsubscribe function.
   */
  watch(listener: StoreChangeListener): () => void {
    this.check()
    return this.listener.on((change) => {
      // What another process wrote makes this one's last write of that call a stale hint.
      if (change.kind === 'resync') this.#written.clear()
      else this.#written.forget(change)
      listener(change)
    })
  }

  /** Resolves once the watch connection is listening (tests; serving does not wait for it). */
  watching(): Promise<void> {
    return this.listener.ready()
  }

  /**
   * Run a job in one process at a time (the Discord gateway session): `lead` is called in the
   * process that takes it, `resign` when that process stops or loses its database connection.
   * A dead leader's job is taken by another process within `pollMs`.
   */
  lead(
    name: string,
    handlers: LeaderHandlers,
    options: { pollMs?: number; onError?: (error: unknown) => void } = {},
  ): Leadership {
    this.check()
    const leadership = schemaLeadership(this.target, this.channel, name, handlers, options)
    this.leaderships.add(leadership)
    return leadership
  }

  private async renewLeases(): Promise<void> {
    if (this.closed) return
    await renewLeases(this.db, this.now() + this.leaseMs, this.instanceId)
  }

  /**
   * Timed calls still open past their deadline whose lease has lapsed (the process waiting on
   * them died): turn each pending, once across every process (`FOR UPDATE SKIP LOCKED`: two
   * processes scanning at once take different rows). Returns the calls turned.
   */
  async takeOverDue(now = this.now(), limit = 100): Promise<CallKey[]> {
    return this.tx(async (c, notes) => {
      const taken: CallKey[] = []
      for (const key of await lapsedDeadlines(c, now, limit)) {
        const call = await readCall(c, key)
        if (call?.state !== 'open' || !call.timed) continue
        await this.insert(c, notes, { type: 'pending', ...key }, call)
        taken.push(key)
      }
      return taken
    })
  }

  private check(): void {
    if (this.closed) throw new StorageError('unavailable', 'storage unavailable: the store is closed')
  }

  /** Run `fn` in one transaction (see `transaction`); what it adds to `notes` is sent once committed. */
  private tx<T>(fn: (c: Queryable, notes: TransactionNotes) => Promise<T>): Promise<T> {
    this.check()
    return transaction(this.pool, this.target.redacted, (c, _opened, end) => fn(c, end.notes))
  }

  /** A transaction under one call's lock, given the call's row as of the lock (one round trip). */
  private txOnCall<T>(
    key: CallKey,
    fn: (
      c: Queryable,
      call: CallRecord | undefined,
      seq: number | undefined,
      end: TransactionEnd,
    ) => Promise<T>,
    reserveSeq = false,
  ) {
    this.check()
    const where = this.target.redacted
    return transaction(
      this.pool,
      where,
      (c, opened, end) => fn(c, callOfOpening(opened), seqOfOpening(opened), end),
      lockAndReadCall(key, reserveSeq),
    )
  }

  /** An event's notification, sent once committed to every process listening (waiting asks, reply streams). */
  private eventNote(event: StoreEvent): Note {
    return { channel: this.channel, payload: noteOf(this.instanceId, event, 'e', event.type) }
  }

  /** Append one event and fold it into its call's row (inside a transaction). */
  private async insert(
    c: Queryable,
    notes: TransactionNotes,
    event: StoreEvent,
    call: CallRecord | undefined,
  ): Promise<CallRecord | undefined> {
    const at = this.now()
    // The note is sent once the transaction has committed, to every process listening: waiting
    // asks and reply streams wake up.
    const next = foldCall(call, {
      ...event,
      seq: await writes.writeEvent(c, event, at, notes, this.eventNote(event)),
      at,
    })
    if (next) this.#written.wrote(event, { record: await writes.writeCall(c, next) })
    const lease = this.leaseOf(event, at)
    if (lease) await writes.takeLease(c, event, lease)
    return next
  }

  /** An ask waiting here: its deadline is this process's own while the lease is renewed. */
  private leaseOf(event: StoreEvent, at: number): writes.Lease | undefined {
    return event.type === 'asked' && event.timed
      ? { owner: this.instanceId, until: at + this.leaseMs }
      : undefined
  }

  /**
   * {@link insert} as the transaction's last statement, sent with its COMMIT: the event under `seq`,
   * which the transaction's opening reserved with the call's lock and row (`txOnCall`), so an
   * append is two round trips in all. False when the event leaves no row to write: then nothing
   * is written, and the caller inserts as usual.
   */
  private async commitEvent(
    end: TransactionEnd,
    event: StoreEvent,
    call: CallRecord | undefined,
    seq: number,
  ): Promise<boolean> {
    const at = this.now()
    const row = foldCall(call, { ...event, seq, at })
    if (!row) return false
    const note = this.eventNote(event)
    const record = await writes.commitEventAndCall(
      end,
      { event, seq, at, note },
      row,
      this.leaseOf(event, at),
    )
    this.#written.wrote(event, { record })
    return true
  }

  /**
   * One call's events, in a transaction opened by `txOnCall` (`call`: its row under the lock; `seq`:
   * reserved there). One event (most appends and decisions) goes with the COMMIT, under `seq`;
   * more, or one that leaves no row, are inserted one by one.
   */
  private async writeEvents(
    c: Queryable,
    end: TransactionEnd,
    events: StoreEvent[],
    call: CallRecord | undefined,
    seq: number | undefined,
  ): Promise<void> {
    const [only] = events
    if (only && events.length === 1 && seq !== undefined && (await this.commitEvent(end, only, call, seq)))
      return
    let row = call
    for (const event of events) row = await this.insert(c, end.notes, event, row)
  }

  async append(...events: StoreEvent[]): Promise<void> {
    if (events.length === 0) return this.check()
    const [only] = events
    if (only && events.length === 1) {
      // The usual append (an ask's `asked`): the call's lock, row and the event's seq, then the
      // event and the row with the COMMIT.
      await this.txOnCall(only, (c, call, seq, end) => this.writeEvents(c, end, events, call, seq), true)
      return
    }
    await this.tx(async (c, notes) => {
      const keys = new Map(events.map((e) => [callKeyString(e), e as CallKey]))
      for (const key of inLockOrder([...keys.values()], (k) => k)) await lockCall(c, key)
      for (const event of events) await this.insert(c, notes, event, await readCall(c, event))
    })
  }

  async transact<T>(key: CallKey, decide: Decision<T>): Promise<T> {
    return this.txOnCall(
      key,
      async (c, call, seq, end) => {
        const { events, result } = decide(call ? structuredClone(call) : undefined)
        await this.writeEvents(c, end, ownEvents(key, events, 'transact'), call, seq)
        return result
      },
      true,
    )
  }

  async getCall(key: CallKey): Promise<CallRecord | undefined> {
    this.check()
    return readCall(this.db, key)
  }

  async findCalls(callId: string): Promise<CallRecord[]> {
    this.check()
    return reads.findCalls(this.db, callId)
  }

  async listCalls(
    filter: { agentId?: string; states?: CallState[]; timed?: boolean } = {},
  ): Promise<CallRecord[]> {
    this.check()
    return reads.listCalls(this.db, filter)
  }

  async projection(agentId?: string): Promise<UserQuestionProjectionView> {
    this.check()
    return reads.projection(this.db, agentId)
  }

  async projectionPage(filter: {
    agentId?: string
    limit: number
    afterSeq?: number
  }): Promise<{ view: UserQuestionProjectionView; next?: number }> {
    this.check()
    return reads.projectionPage(this.db, filter)
  }

  async events(
    filter: { agentId?: string; callId?: string; sinceSeq?: number } = {},
  ): Promise<StoredEvent[]> {
    this.check()
    return reads.events(this.db, filter)
  }

  async getCard<T>(key: CallKey): Promise<VersionedCard<T> | undefined> {
    this.check()
    return reads.getCard<T>(this.db, key, this.seeCall)
  }

  async getCardWithPosts<T>(key: CallKey): Promise<(VersionedCard<T> & { posts: PostRecord[] }) | undefined> {
    this.check()
    return reads.getCardWithPosts<T>(this.db, key, this.seeCall)
  }

  /**
   * The call rows beside the cards last read (card key → the card's version and the row's record):
   * a decision on the card taken soon after may go on the row as read (see `casCardOnSeenCall`).
   * A hint only, and a few hundred entries at most.
   */
  readonly #seenCalls = new Map<string, { cardVersion: number; record: string }>()

  private readonly seeCall: reads.SeenCall = (key, cardVersion, record) => {
    const k = callKeyString(key)
    if (record === null) this.#seenCalls.delete(k)
    else setBounded(this.#seenCalls, k, { cardVersion, record }, SEEN_CALLS)
  }

  /** The call row read beside the card at `cardVersion`, if that is the last read of it. */
  private takeSeenCall(key: CallKey, cardVersion: number): string | undefined {
    const k = callKeyString(key)
    const seen = this.#seenCalls.get(k)
    this.#seenCalls.delete(k)
    return seen?.cardVersion === cardVersion ? seen.record : undefined
  }

  /**
   * A completing click's commit in one round trip: the call step decides on the call row as read
   * with the card, and the transaction (the call's lock, then card, audit, event and call row)
   * writes only if that row is unchanged under the lock, which makes the decision the one the
   * locked path would take. `moved`: the row changed, or the step is not the usual one (one event,
   * no refusal); the caller decides under the lock instead.
   */
  private async casCardOnSeenCall(
    card: writes.CardWrite,
    call: CallStep,
    seenRecord: string,
  ): Promise<Written | undefined | 'moved'> {
    if (card.expectedVersion === 0) return 'moved'
    const read = JSON.parse(seenRecord) as CallRecord
    let events: StoreEvent[]
    try {
      events = ownEvents(card.key, call(structuredClone(read)), 'casCard')
    } catch {
      // A refusal on a row that may be stale: decided again under the lock.
      return 'moved'
    }
    const [only] = events
    if (!only || events.length !== 1 || only.type === 'asked') return 'moved'
    // Folded with a placeholder seq: the statement draws the real one and writes it in.
    const next = foldCall(read, { ...only, seq: UNDRAWN_SEQ, at: card.at })
    if (!next || next.askedSeq === UNDRAWN_SEQ) return 'moved'
    const settledBySeq = next.settledSeq === UNDRAWN_SEQ
    const notes = new TransactionNotes()
    const write = writes.guardedCardAndEvent(
      card,
      { event: only, notify: this.eventNote(only) },
      next,
      seenRecord,
      settledBySeq,
      notes,
    )
    this.check()
    const [, result] = await this.batches.run(card.key, [{ sql: lockStatement(card.key) }, write], notes)
    const row = result?.rows[0] as { guarded: number; ord: string | null } | undefined
    if (!row?.guarded) return 'moved'
    // The card's identity comes back only when it was written (and with it the other three rows).
    return row.ord === null ? undefined : { version: card.expectedVersion + 1, identity: String(row.ord) }
  }

  async casCard<T>(
    key: CallKey,
    expectedVersion: number,
    state: T,
    audit: AuditEntry[] = [],
    call?: CallStep,
  ): Promise<number | undefined> {
    this.check()
    const remembered = this.#written.card(key)
    // The notification goes once the write has committed: a process waiting on this card re-reads it.
    const card: writes.CardWrite = {
      key,
      expectedVersion,
      state,
      stateText: JSON.stringify(state),
      at: this.now(),
      audit,
      notify: { channel: this.channel, payload: noteOf(this.instanceId, key, 'c') },
      // Deciding on the card as this process wrote it: written only onto that same card.
      identity: remembered?.version === expectedVersion ? remembered.identity : undefined,
    }
    // With a call step, the row's record is the statement's to finish (the seq it draws): not kept.
    return this.#written.writing(
      key,
      card.stateText,
      () => this.#casCard(card, call),
      call ? { record: undefined } : {},
    )
  }

  async #casCard(card: writes.CardWrite, call: CallStep | undefined): Promise<Written | undefined> {
    const { key, expectedVersion } = card
    const version = expectedVersion + 1
    const as = (identity: string | undefined) => (identity === undefined ? undefined : { version, identity })
    if (!call) return as(await writes.writeCardOnce(this.batches, card))
    const seen = this.takeSeenCall(key, expectedVersion)
    if (seen !== undefined) {
      const written = await this.casCardOnSeenCall(card, call, seen)
      if (written !== 'moved') return written
    }
    // With a decision on the call: one transaction, under the call's lock (as `transact` takes it).
    return this.txOnCall(
      key,
      async (c, read, seq, end) => {
        // The step decides on the row as this transaction sees it; it is pure, so deciding before
        // the card's compare-and-set gives what deciding after it would.
        let events: StoreEvent[] = []
        let refusal: { error: unknown } | undefined
        try {
          events = ownEvents(key, call(read ? structuredClone(read) : undefined), 'casCard')
        } catch (error) {
          refusal = { error }
        }
        const [only] = events
        // The usual step (a completing click: one event): card, audit, event and call row in one
        // statement sent with the COMMIT, the transaction two round trips in all.
        if (!refusal && only && events.length === 1 && only.type !== 'asked' && seq !== undefined) {
          const next = foldCall(read, { ...only, seq, at: card.at })
          return as(
            await writes.writeCardAndEvent(
              end,
              card,
              { event: only, seq, notify: this.eventNote(only) },
              next,
            ),
          )
        }
        // A card that moved on is a conflict (decided again on the new card), whatever the step said.
        const identity = await writes.writeCard(c, card, end.notes)
        if (identity === undefined) return undefined
        if (refusal) throw refusal.error
        let row = read
        for (const event of events) row = await this.insert(c, end.notes, event, row)
        return { version, identity }
      },
      true,
    )
  }

  async listCards<T>(filter: CardFilter = {}): Promise<Array<ListedCard<T>>> {
    this.check()
    return reads.listCards<T>(this.db, filter)
  }

  async findCards<T>(callId: string): Promise<Array<VersionedCard<T> & CallKey>> {
    this.check()
    return reads.findCards<T>(this.db, callId, this.seeCall)
  }

  /**
   * The cards this process wrote last, each with the call's row as it wrote it: a click on one goes
   * to `casCardOnSeenCall` with that row, so a completing click is one round trip in all.
   */
  readonly #written = new WrittenCards()

  writtenCards<T>(callId: string): Array<VersionedCard<T> & CallKey> {
    this.check()
    return this.#written.cards<T>(callId, this.seeCall)
  }

  async addPost(post: PostRecord): Promise<boolean> {
    this.check()
    return this.posts.add(post)
  }

  async claimPost(
    post: PostRecord,
    claim: PostClaim,
  ): Promise<{ createdAt: number; taken: boolean } | undefined> {
    this.check()
    return this.posts.claim(post, claim)
  }

  async renewPostClaims(owner: string, until: number): Promise<void> {
    this.check()
    await this.posts.renew(owner, until)
  }

  async releasePost(key: CallKey, destKey: string, owner: string): Promise<void> {
    this.check()
    await this.posts.release(key, destKey, owner)
  }

  async lapsedPosts(now: number, limit: number): Promise<PostRecord[]> {
    this.check()
    return this.posts.lapsed(now, limit)
  }

  async updatePost(key: CallKey, destKey: string, ref: unknown): Promise<void> {
    this.check()
    await this.posts.update(key, destKey, ref)
  }

  async listPosts(key: CallKey): Promise<PostRecord[]> {
    this.check()
    return this.posts.list(key)
  }

  async audit(entry: AuditEntry): Promise<void> {
    this.check()
    await writes.writeAudit(this.db, entry, this.now())
  }

  async listAudit(
    filter: { agentId?: string; callId?: string; since?: number } = {},
  ): Promise<StoredAuditEntry[]> {
    this.check()
    return reads.listAudit(this.db, filter)
  }

  async pruneCalls(before: number, limit: number): Promise<number> {
    return this.tx((c) => retention.pruneCalls(c, before, limit))
  }

  async pruneAudit(before: number, limit: number): Promise<number> {
    this.check()
    return retention.pruneAudit(this.db, before, limit)
  }

  async putSession(session: SessionRecord, now: number): Promise<void> {
    this.check()
    await this.sessions.put(session, now)
  }

  async getSession(id: string, now: number): Promise<SessionRecord | undefined> {
    this.check()
    return this.sessions.get(id, now)
  }

  async deleteSession(id: string): Promise<void> {
    this.check()
    await this.sessions.delete(id)
  }

  async rememberOnce(key: string, until: number, now: number): Promise<boolean> {
    this.check()
    return this.sessions.rememberOnce(key, until, now)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.heartbeat)
    await Promise.all([...this.leaderships].map((l) => l.stop()))
    await this.listener.close()
    await this.pool.end()
  }
}
