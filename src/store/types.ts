import type {
  AskUserQuestionAnswerItem,
  AskUserQuestionItem,
  LateReply,
  UserQuestionProjectionView,
} from '../protocol/types.js'
import type { LeaderHandlers, Leadership } from './pg-leader.js'

/**
 * Identifies a call. callIds are chosen by agents and models, so two agents may use the same one:
 * only the pair is unique.
 */
export interface CallKey {
  agentId: string
  callId: string
}

/** Events of the append-only log. The projection and every call's state are folded from them. */
export type StoreEvent =
  | {
      type: 'asked'
      agentId: string
      callId: string
      questions: AskUserQuestionItem[]
      timed: boolean
      /** Epoch ms of the timed wait's deadline. */
      deadline?: number
      route?: string
    }
  /** Answered inside the window (or, for a blocking ask, at all). */
  | ({ type: 'answered'; answers: AskUserQuestionAnswerItem[] } & CallKey)
  /** The timed window closed: the call is continued. */
  | ({ type: 'pending' } & CallKey)
  /** Any other result or failure: the call drops out of the projection. */
  | ({ type: 'dropped'; code: string; message?: string } & CallKey)
  | ({ type: 'reply_queued'; reply: LateReply } & CallKey)
  /** The agent admitted the reply. `answers` absent means the reply had no readable batch. */
  | ({ type: 'reply_admitted'; answers?: AskUserQuestionAnswerItem[] } & CallKey)
  | ({ type: 'reply_discarded' } & CallKey)

export type StoredEvent = StoreEvent & { seq: number; at: number }

export type CallState = 'open' | 'continued' | 'settled' | 'dropped'

/** Everything known about one call, folded from the log. */
export interface CallRecord extends CallKey {
  questions: AskUserQuestionItem[]
  timed: boolean
  deadline?: number
  route?: string
  state: CallState
  askedAt: number
  askedSeq: number
  settledSeq?: number
  settledAt?: number
  /** Epoch ms the call settled or dropped: what retention counts from. */
  endedAt?: number
  answers?: AskUserQuestionAnswerItem[]
  /** A late reply waiting for the agent to admit it. */
  queuedReply?: LateReply
  /** Why a call dropped (an error code). */
  dropCode?: string
}

/** A card's serialized state with its compare-and-set version. */
export interface VersionedCard<T> {
  version: number
  state: T
  /**
   * Set on a card from `Store.writtenCards`: as this process last wrote it, a hint rather than a
   * read. A write decided on it is checked by its compare-and-set; anything else decided on it
   * (a refusal, "already done") is decided again on the card as stored.
   */
  remembered?: true
}

/** A card as `listCards` gives it: with its key and when it was last written (epoch ms). */
export type ListedCard<T> = VersionedCard<T> & CallKey & { updatedAt: number }

/** Where a card copy was posted: one row per call and destination. */
export interface PostRecord extends CallKey {
  /** Stable key of the destination, e.g. `slack:C0123` or `web`. */
  destKey: string
  platform: string
  /** The adapter's own reference to the message (ids, timestamps). */
  ref: unknown
  createdAt: number
}

/**
 * A claim on posting one copy: `owner` (one bridge process) posts it and holds the claim until
 * `until` (epoch ms, renewed while the post is under way); `now` is the clock a held claim is
 * judged by.
 */
export interface PostClaim {
  owner: string
  until: number
  now: number
}

export interface AuditEntry {
  /** Set whenever `callId` is: the call's agent. */
  agentId?: string
  callId?: string
  kind: string
  platform?: string
  actor?: { platform: string; userId: string; name?: string }
  detail?: unknown
  refused?: boolean
  code?: string
  /** SHA-256 (hex) of what the person deciding was shown (`shownDigest`): on decisions. */
  shown?: string
}

export type StoredAuditEntry = AuditEntry & { seq: number; at: number }

/**
 * Which cards `listCards` returns; every filter is an index range, so serving paths read live or
 * recent cards without reading history.
 */
export interface CardFilter {
  /** The card's `state.status` is one of these. */
  statuses?: string[]
  /** `state.status` is none of these. */
  notStatuses?: string[]
  /** The card's call is in one of these states. */
  callStates?: CallState[]
  /** Updated at or after this (epoch ms). */
  updatedSince?: number
  /** Only the `latest` most recently updated, newest first. */
  latest?: number
  /** Only these calls' cards (looked up by key, one index probe each). */
  calls?: CallKey[]
}

/**
 * An inbox sign-in session, kept in the store so that signing out on one replica holds on all.
 * `id` is a digest of the secret the cookie carries: the store never holds a usable session.
 */
export interface SessionRecord {
  id: string
  /** The verified e-mail address (lower case). */
  email: string
  name: string
  /** The session's CSRF token. */
  csrf: string
  /** Epoch ms. */
  expiresAt: number
}

/** Decide on ONE call's current row (undefined: no such call); return events for that call only. */
export type Decision<T> = (call: CallRecord | undefined) => { events: StoreEvent[]; result: T }

/** A decision on a card's call row taken in the card's own commit (see `Store.casCard`). */
export type CallStep = (call: CallRecord | undefined) => StoreEvent[]

/**
 * The durable store. Async throughout so a networked implementation (PostgreSQL, several
 * processes sharing one database) can sit behind the same interface. Calls are keyed by
 * agentId + callId; a `calls` row per call holds its folded state, written in the same
 * transaction as the events, so nothing needs the whole history in memory.
 */
export interface Store {
  /** Append events unconditionally; each is folded into its call's row in the same transaction. */
  append(...events: StoreEvent[]): Promise<void>
  /** Atomically read one call's row, decide, and append (events must name `key`). Serialized. */
  transact<T>(key: CallKey, decide: Decision<T>): Promise<T>
  /** One call by key. */
  getCall(key: CallKey): Promise<CallRecord | undefined>
  /** Every agent's call with this callId, oldest ask first: resolves an unnamed agent, detects ambiguity. */
  findCalls(callId: string): Promise<CallRecord[]>
  /** Calls by agent, state and timing, in ask order. */
  listCalls(filter?: { agentId?: string; states?: CallState[]; timed?: boolean }): Promise<CallRecord[]>
  /** The protocol projection (timed calls only), optionally one agent's. */
  projection(agentId?: string): Promise<UserQuestionProjectionView>
  /**
   * The projection with one page of the settled list: `limit` settled calls in settlement order
   * after `afterSeq` (a settled call's `settledSeq`), and `next` (the last one's `settledSeq`) when
   * more follow. Active and settled are read in one snapshot, through indexes.
   */
  projectionPage(filter: {
    agentId?: string
    limit: number
    afterSeq?: number
  }): Promise<{ view: UserQuestionProjectionView; next?: number }>
  /** The raw log (audit and history), in order. */
  events(filter?: { agentId?: string; callId?: string; sinceSeq?: number }): Promise<StoredEvent[]>

  getCard<T>(key: CallKey): Promise<VersionedCard<T> | undefined>
  /**
   * The card with its copies (`listPosts`), read together in one snapshot (on PostgreSQL, one
   * statement): what bringing every copy up to date needs. Undefined when no card is stored.
   */
  getCardWithPosts<T>(key: CallKey): Promise<(VersionedCard<T> & { posts: PostRecord[] }) | undefined>
  /**
   * Write a card if its version is still `expectedVersion` (0: must not exist). Returns the new
   * version or undefined on conflict. `audit` entries are written in the same transaction, and
   * only when the card is: one commit for a step (a click applied and its audit). `call`, when
   * given, decides on the card's call row as that commit sees it (serialized with `transact`), and
   * its events are appended in the same commit; if it throws, nothing is written and casCard
   * rejects with its error (an answer completing a card and queuing its reply is one step).
   */
  casCard<T>(
    key: CallKey,
    expectedVersion: number,
    state: T,
    audit?: AuditEntry[],
    call?: CallStep,
  ): Promise<number | undefined>
  /** Every agent's card with this callId, oldest first: resolves a component that carries a callId. */
  findCards<T>(callId: string): Promise<Array<VersionedCard<T> & CallKey>>
  /**
   * Cards with this callId as this process last wrote them (`remembered`), without reading them
   * back: a click is decided on one of these at once. A hint, never the truth: `casCard` fails on a
   * card that has moved on since (or, on PostgreSQL, that was made again under its key), and the
   * click is then decided again on the card read; a decision that writes nothing is never taken
   * on one (see `VersionedCard.remembered`).
   */
  writtenCards<T>(callId: string): Array<VersionedCard<T> & CallKey>
  /** Cards, least recently updated first; `statuses` filters on the card's `state.status`. */
  listCards<T>(filter?: CardFilter): Promise<Array<ListedCard<T>>>

  /** Record a post; false when that call already has a post at that destination. */
  addPost(post: PostRecord): Promise<boolean>
  /**
   * Claim posting one copy, atomically across processes: store the intent (`post`, its `ref` a
   * placeholder) held by `claim.owner`; or, when the intent is stored, still unposted (its `ref`
   * unchanged) and nobody else holds it at `claim.now` (its holder died, or gave up), take it over.
   * Returns when the intent was first stored and whether it was taken over (then a copy may be on
   * the platform already); undefined when the copy is posted or another live holder is posting it.
   */
  claimPost(post: PostRecord, claim: PostClaim): Promise<{ createdAt: number; taken: boolean } | undefined>
  /** Extend every claim `owner` holds to `until`: its posts are still under way. */
  renewPostClaims(owner: string, until: number): Promise<void>
  /** End `owner`'s claim on a copy it did not post, so another may take it over at once. */
  releasePost(key: CallKey, destKey: string, owner: string): Promise<void>
  /** Unposted copies whose claim lapsed before `now`, oldest first: their holder died mid-post. */
  lapsedPosts(now: number, limit: number): Promise<PostRecord[]>
  /** Record the copy's reference; any claim on it ends. */
  updatePost(key: CallKey, destKey: string, ref: unknown): Promise<void>
  listPosts(key: CallKey): Promise<PostRecord[]>

  audit(entry: AuditEntry): Promise<void>
  /** `callId` without `agentId` matches that callId for every agent. */
  listAudit(filter?: { agentId?: string; callId?: string; since?: number }): Promise<StoredAuditEntry[]>

  /**
   * Retention: delete up to `limit` settled or dropped calls that ended before `before` (epoch
   * ms), with their events (replies included), card and posts, in one transaction. Open and
   * continued calls are never deleted. Safe to run from several processes at once: each call is
   * deleted by one of them, and a decision in progress on a call keeps it. Returns how many.
   */
  pruneCalls(before: number, limit: number): Promise<number>
  /** Retention of the audit: delete up to `limit` entries older than `before`. Returns how many. */
  pruneAudit(before: number, limit: number): Promise<number>

  /** Keep a sign-in session; sessions expired at `now` are deleted on the way. */
  putSession(session: SessionRecord, now: number): Promise<void>
  /** A session by id, unless it expired at `now` or was ended. */
  getSession(id: string, now: number): Promise<SessionRecord | undefined>
  /** End a session (sign-out): every replica refuses it from now on. */
  deleteSession(id: string): Promise<void>
  /**
   * Remember `key` until `until` (epoch ms), atomically across processes: true the first time,
   * false while it is remembered (a replay guard). Keys expired at `now` are forgotten.
   */
  rememberOnce(key: string, until: number, now: number): Promise<boolean>
  /**
   * Run a job in one process at a time across every bridge on this store (PostgreSQL); absent
   * where the store has one process (SQLite, memory).
   */
  lead?(name: string, handlers: LeaderHandlers): Leadership

  close(): Promise<void>
}
