import type { CardRef } from '../card/codec.js'
import type { CardState, Destination, Interaction, Person } from '../card/types.js'
import { isStorageError } from '../store/errors.js'

export type { Destination }

/**
 * What a post row holds between "about to post" and "posted": the intent to post, stored first,
 * so a crash in between is noticed and the copy looked for before posting again.
 */
export const POST_PENDING = { askbridge: 'post-pending' } as const

export function isPostPending(ref: unknown): boolean {
  return (ref as { askbridge?: unknown } | null)?.askbridge === POST_PENDING.askbridge
}

/** A stable key for a destination, used to keep one post per call and destination. */
export function destinationKey(d: Destination): string {
  return [d.platform, d.channel ?? '', d.user ? `@${d.user}` : ''].join(':')
}

/**
 * An FYI without buttons: nothing to answer (a Claude Code session is waiting for someone, or
 * finished its turn). Built once in the core (src/answerer/notices.ts); each adapter only lays
 * it out, escaping `title` and `text` like agent text on cards (no pings, no markup) and keeping
 * within its platform's limits. A notice never mentions anyone.
 */
export interface Notice {
  /** One line: what happened ("Claude Code is waiting"). Untrusted. */
  title: string
  /** The agent's message as markdown, at most {@link NOTICE_TEXT_CHARS} characters. Untrusted. */
  text: string
  /** Whose notice it is: the agent id (`claude-code:SESSION`). */
  agentId: string
  /** The notice's own id (the audit's `callId` for it). */
  id: string
  /** When it was raised (epoch ms). */
  at: number
}

/** The most of an agent's message a notice carries; the rest is cut with a visible "…". */
export const NOTICE_TEXT_CHARS = 2_500

/** What a platform decoded from a payload: which card (callId and agent tag), and the interaction. */
export interface InboundInteraction extends CardRef {
  interaction: Interaction
}

/** The answer to an inbound interaction, for the adapter to show the person. */
export interface InteractionOutcome {
  ok: boolean
  /** A private message for the person who acted (refusals always have one). */
  message?: string
  /** The card after the interaction (absent when the call is unknown). */
  card?: CardState
  /**
   * The interaction changed the card and its copies are being brought up to date now: the
   * adapter that received it may wait (within its platform's deadline) for its own copy's
   * `update` and answer the interaction with it (Discord's UPDATE_MESSAGE callback).
   */
  updating?: boolean
}

/** What the answerer offers an adapter: apply interactions, read cards. */
export interface CardHost {
  /**
   * Apply an interaction. `decodedOn`: the card exactly as `getCard` returned it, when the adapter
   * decoded the interaction against it; the host then starts from that read instead of reading
   * the card again (if it changed meanwhile, the compare-and-set reads it again and decides anew).
   */
  handle(input: InboundInteraction, decodedOn?: CardState): Promise<InteractionOutcome>
  /** The card a component names (its callId and agent tag). */
  getCard(ref: CardRef): Promise<CardState | undefined>
  /**
   * Whether this person may answer the card now (live, and an allowed responder). For a quick
   * check before opening a form; the answer to the submitted form is still decided by `handle`.
   */
  mayAnswer?(ref: CardRef, person: Person): Promise<{ ok: boolean; message?: string }>
  /**
   * A sign of life from someone holding a timed wait ("Take my time") on a surface with a hold
   * lease (see {@link ChatAdapter.holdLeaseMs}). False when they hold nothing (any more).
   */
  renewHold?(ref: CardRef, person: Person): Promise<boolean>
}

/**
 * What the person is told when their click, menu choice or form could not be applied (the host
 * threw, usually because the store is unavailable): nothing was recorded, they can try again.
 */
export function notAppliedMessage(error: unknown): string {
  return isStorageError(error)
    ? 'That did not go through: askbridge could not save it right now. Nothing was recorded; please try again in a moment.'
    : 'That did not go through; nothing was recorded. Please try again.'
}

/**
 * A check that must not hold up a platform deadline: `fallback` when `work` takes longer than
 * `ms` (the work goes on; its result is dropped).
 */
export async function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms)
  })
  try {
    return await Promise.race([work.catch(() => fallback), late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A chat platform. Rendering stays in pure functions inside the adapter; this is only I/O.
 * `post` returns an opaque, JSON-serializable reference the answerer stores and hands back to
 * `update` (also after a restart).
 */
export interface ChatAdapter {
  readonly platform: Destination['platform']
  start(host: CardHost): Promise<void>
  stop(): Promise<void>
  /**
   * Post a copy. `key` (stable per call and destination) is a marker the platform keeps with
   * the messages (Slack message metadata, a Discord nonce), so {@link find} can recognise them.
   */
  post(card: CardState, destination: Destination, key?: string): Promise<unknown>
  /**
   * After a crash between the platform accepting a post and the answerer storing its reference:
   * look for a copy posted with `key` since `since` (epoch ms). Returns its reference, or
   * undefined when there is none (then the answerer posts). Extra copies found are retired.
   */
  find?(card: CardState, destination: Destination, key: string, since: number): Promise<unknown>
  /**
   * Bring a posted copy up to date. Returns a new reference when the copy changed shape (for
   * example it grew a continuation message), which the answerer stores in place of the old one
   * so it survives a restart; returns undefined to keep the old reference.
   */
  update(card: CardState, ref: unknown): Promise<unknown>
  /** Post a notice without buttons to a destination (see {@link Notice}); the adapter's reference. */
  postNotice?(notice: Notice, destination: Destination): Promise<unknown>
  /** A private notice to one person, outside an interaction reply (ephemeral where the platform has it). */
  notify(person: Person, text: string, ref?: unknown): Promise<void>
  /**
   * A hold ("Take my time") from this surface lasts only this long unless the surface renews it
   * through `CardHost.renewHold` (the web inbox's heartbeat while the tab is open). Unset: a hold
   * lasts until released, the card finishes, or the answerer's `holdMaxMs`.
   */
  readonly holdLeaseMs?: number
  /** Members of a platform group (Slack user group), for responder checks. */
  groupMembers?(groupId: string): Promise<string[]>
  /** The platform user with this e-mail address (Slack `users.lookupByEmail`); undefined when there is none. */
  lookupByEmail?(email: string): Promise<string | undefined>
}
