import type {
  AskUserQuestionAnswerItem,
  AskUserQuestionItem,
  LateReply,
  UserQuestionProjectionView,
} from '../protocol/types.js'

/** Events of the append-only log. The projection and every call's state are folded from them. */
export type StoreEvent =
  | {
      type: 'asked'
      callId: string
      agentId: string
      questions: AskUserQuestionItem[]
      timed: boolean
      /** Epoch ms of the timed wait's deadline. */
      deadline?: number
      route?: string
    }
  /** Answered inside the window (or, for a blocking ask, at all). */
  | { type: 'answered'; callId: string; answers: AskUserQuestionAnswerItem[] }
  /** The timed window closed: the call is continued. */
  | { type: 'pending'; callId: string }
  /** Any other result or failure: the call drops out of the projection. */
  | { type: 'dropped'; callId: string; code: string; message?: string }
  | { type: 'reply_queued'; callId: string; agentId: string; reply: LateReply }
  /** The agent admitted the reply. `answers` absent means the reply had no readable batch. */
  | { type: 'reply_admitted'; callId: string; answers?: AskUserQuestionAnswerItem[] }
  | { type: 'reply_discarded'; callId: string }

export type StoredEvent = StoreEvent & { seq: number; at: number }

export type CallState = 'open' | 'continued' | 'settled' | 'dropped'

/** Everything known about one call, folded from the log. */
export interface CallRecord {
  callId: string
  agentId: string
  questions: AskUserQuestionItem[]
  timed: boolean
  deadline?: number
  route?: string
  state: CallState
  askedAt: number
  askedSeq: number
  settledSeq?: number
  settledAt?: number
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
}

/** Where a card copy was posted: one row per call and destination. */
export interface PostRecord {
  callId: string
  /** Stable key of the destination, e.g. `slack:C0123` or `web`. */
  destKey: string
  platform: string
  /** The adapter's own reference to the message (ids, timestamps). */
  ref: unknown
  createdAt: number
}

export interface AuditEntry {
  callId?: string
  kind: string
  platform?: string
  actor?: { platform: string; userId: string; name?: string }
  detail?: unknown
  refused?: boolean
  code?: string
}

export type StoredAuditEntry = AuditEntry & { seq: number; at: number }

/** Read-decide-append, atomically: `decide` sees the current calls and returns events to append. */
export type Decision<T> = (calls: ReadonlyMap<string, CallRecord>) => { events: StoreEvent[]; result: T }

/**
 * The durable store. Async throughout so a networked implementation (PostgreSQL, several
 * processes sharing one database) can sit behind the same interface.
 */
export interface Store {
  /** Append events unconditionally. */
  append(...events: StoreEvent[]): Promise<void>
  /** Atomically decide on the latest state and append. Concurrent decisions are serialized. */
  transact<T>(decide: Decision<T>): Promise<T>
  getCall(callId: string): Promise<CallRecord | undefined>
  listCalls(filter?: { agentId?: string; states?: CallState[] }): Promise<CallRecord[]>
  projection(agentId?: string): Promise<UserQuestionProjectionView>
  events(filter?: { callId?: string; sinceSeq?: number }): Promise<StoredEvent[]>

  getCard<T>(callId: string): Promise<VersionedCard<T> | undefined>
  /** Write a card if its version is still `expectedVersion` (0: must not exist). Returns the new version or undefined on conflict. */
  casCard<T>(callId: string, expectedVersion: number, state: T): Promise<number | undefined>
  listCards<T>(): Promise<Array<VersionedCard<T> & { callId: string }>>

  /** Record a post; false when that call already has a post at that destination. */
  addPost(post: PostRecord): Promise<boolean>
  updatePost(callId: string, destKey: string, ref: unknown): Promise<void>
  listPosts(callId: string): Promise<PostRecord[]>

  audit(entry: AuditEntry): Promise<void>
  listAudit(filter?: { callId?: string; since?: number }): Promise<StoredAuditEntry[]>

  close(): Promise<void>
}
