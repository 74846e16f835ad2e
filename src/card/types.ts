import type { FieldRule } from '../protocol/form.js'
import type { AskUserQuestionAnswer, AskUserQuestionItem } from '../protocol/types.js'

/** Someone who interacted with a card, as their platform names them. */
export interface Person {
  /** `slack`, `discord`, `web`, ... */
  platform: string
  userId: string
  /** Display name for "answered by"; never used for authorization. */
  name?: string
  /** Platform roles or groups the person holds, when the payload carries them (Discord member roles). */
  roles?: string[]
  /** The person's locale, when the platform tells it (Discord `locale`, Slack user locale). */
  locale?: string
  /** The verified e-mail address of a person signed in to the web inbox. */
  email?: string
  /**
   * One person across platforms (`email:ADDRESS` when the routes file's `people` map or a
   * sign-in ties the account to an address), set by the answerer; compared instead of
   * platform + userId so one person never counts twice in a quorum.
   */
  identity?: string
}

/**
 * The card's lifecycle:
 * - `open`: the agent is waiting; answers return to it.
 * - `continued`: the agent's timed window closed; an answer still reaches it as a late reply.
 * - `answered`: complete; `result` holds the batch.
 * - `cancelled`: cancelled by a person, an operator or the agent's signal.
 * - `elsewhere`: answered through another channel (for example a local terminal UI).
 */
export type CardStatus = 'open' | 'continued' | 'answered' | 'cancelled' | 'elsewhere'

export type CardKind = 'questions' | 'approval' | 'plan-review'

/** What has been chosen so far for one question (a shared draft everyone sees). */
export interface QuestionDraft {
  selected: string[]
  custom?: string
  skipped?: boolean
  by?: Person
  at?: number
}

/** A pure, serializable card: everything a renderer needs, and what the store keeps. */
export interface CardState {
  callId: string
  agentId: string
  questions: AskUserQuestionItem[]
  kind: CardKind
  status: CardStatus
  createdAt: number
  /** Timed waits: the deadline (epoch ms) shown on the card. */
  deadline?: number
  drafts: Record<string, QuestionDraft>
  /** Approvals gathered so far (quorum > 1). */
  approvals: Person[]
  /** Distinct approvers needed. @default 1 */
  quorum: number
  /** A person who may not answer (the requester, with excludeRequester). */
  excluded?: Pick<Person, 'platform' | 'userId' | 'identity'>
  /** Who may answer, per platform; absent: anyone who sees the card. */
  responders?: Responders
  /** People holding the wait open with "Take my time" or an open form. */
  holders: Person[]
  result?: AskUserQuestionAnswer
  answeredBy?: Person
  answeredAt?: number
  /**
   * The reason the deciding person typed with Approve or Reject. askbridge's own field: the
   * protocol answer stays exactly the option label.
   */
  reason?: string
  /** Why the card closed without an answer (for display). */
  closedReason?: string
  /** Recently applied interaction ids, for idempotency of retries and double clicks. */
  seen: string[]
  /**
   * What every surface shows of this card, as the digest each decision's audit entry keeps
   * (`shownDigest` of the questions and a hook's tool input). Neither changes on a card, so it is
   * taken once, when the card is made, not on every click.
   */
  shown: string
  route?: string
  /** Escalation tiers already fired (count). */
  escalated: number
  /** Where the card was sent first (the route's destinations). */
  destinations?: Destination[]
  /** Escalation tiers still to come, from the route; times count from `createdAt`. */
  escalation?: EscalationTier[]
  /** Typed form fields by question id (an MCP elicitation): typed answers are checked, required ones cannot be skipped. */
  fields?: Record<string, FieldRule>
  /** Who was on call when the card was posted (and at each on-call escalation level), and from where. */
  oncall?: OnCallShown[]
}

/** One on-call look-up as the card shows it. */
export interface OnCallShown {
  /** Escalation level (1 for a schedule, or the first level of a policy). */
  level: number
  /**
   * `pagerduty`: looked up now; `last-known`: PagerDuty was unreachable, the last answer it gave;
   * `fallback`: PagerDuty unreachable and nothing known, the route's fallback mention.
   */
  source: 'pagerduty' | 'last-known' | 'fallback'
  /** Names of the people on call (empty for `fallback`). */
  names: string[]
  /** When PagerDuty gave this answer (epoch ms). */
  at: number
}

/** Where a card goes. Channels and users are platform ids. */
export interface Destination {
  /** A platform's id (its module's `id`). */
  platform: string
  /** Channel id; absent on `web`, or when `user` names a direct message. */
  channel?: string
  /** A direct message to this user instead of a channel. */
  user?: string
  /** Mentions added to the card, each printed by its platform (only those on `platform` apply). */
  mention?: Mention[]
}

/** Who a mention reaches: one user, the members of a group, or the holders of a role. */
export type MentionKind = 'user' | 'group' | 'role'

/** A mention parsed once, at the boundary (the routes file), and printed by its platform. */
export interface Mention {
  platform: string
  kind: MentionKind
  id: string
}

/** One escalation step: after `afterMs` unanswered, mention more people and/or post to more places. */
export interface EscalationTier {
  afterMs: number
  mention?: Mention[]
  destinations?: Destination[]
  /** Mention (and allow) whoever is on call at this level of the route's PagerDuty escalation policy. */
  oncall?: {
    level: number
    pagerduty: { schedule?: string | undefined; escalationPolicy?: string | undefined }
    fallback: Mention[]
  }
}

/**
 * Who may answer: per platform (keyed by its id) the listed users, members of the listed groups
 * and holders of the listed roles; `web`, the inbox; `emails`, people by address.
 */
export interface Responders {
  web?: boolean
  /**
   * People by e-mail address (lower case): a signed-in inbox user with that address, and the
   * platform accounts the `people` map (or a platform's e-mail look-up) ties to it.
   */
  emails?: string[]
  [platform: string]: PlatformResponders | boolean | string[] | undefined
}

/** One platform's responders: listed users, members of listed groups, holders of listed roles. */
export interface PlatformResponders {
  users?: string[]
  groups?: string[]
  roles?: string[]
}

/** What a person did. Question and option references are by id/label, never by display text. */
export type CardAction =
  /** Single-select pick. Completes a one-question card; in a batch it sets the draft. */
  | { type: 'choose'; questionId: string; label: string }
  /** Multi-select checkbox/button toggle. */
  | { type: 'toggle'; questionId: string; label: string }
  /** A select menu's full set of values (single or multi). */
  | { type: 'set'; questionId: string; labels: string[] }
  /** "Other" free text (also the text of a free-text question, and decline-with-feedback). */
  | { type: 'other'; questionId: string; text: string }
  | { type: 'skip'; questionId: string }
  | { type: 'submit' }
  /** Approvals: `reason` is askbridge's own note beside the answer (the answer stays the option label). */
  | { type: 'approve'; reason?: string }
  | { type: 'reject'; reason?: string }
  | { type: 'always' }
  /** Plan review: decline, optionally with feedback (the feedback becomes `custom`). */
  | { type: 'decline'; feedback?: string }
  /** "Take my time" / a form opened: claim the timed wait. */
  | { type: 'hold' }
  /** The form closed or the person let go. */
  | { type: 'release' }

export interface Interaction {
  /** Idempotency key: the platform's id for this delivery (retries reuse it). */
  id: string
  actor: Person
  action: CardAction
  at: number
}

export type RefusalCode =
  | 'finished'
  | 'unknown-question'
  | 'unknown-option'
  | 'too-long'
  | 'incomplete'
  | 'not-applicable'
  | 'not-allowed'
  | 'already-approved'
  | 'invalid'

export interface Refusal {
  code: RefusalCode
  /** A message for the person, safe to show as-is. */
  message: string
}

export type ApplyResult =
  | {
      ok: true
      state: CardState
      /** The card just completed; `state.result` holds the answer. */
      completed: boolean
      /** A duplicate delivery: nothing changed. */
      duplicate: boolean
      /** Optional private note for the person (e.g. "1 of 2 approvals"). */
      notice?: string
    }
  | { ok: false; refusal: Refusal }
