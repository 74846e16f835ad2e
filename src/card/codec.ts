/**
 * The one codec for everything hidden in a platform component id (Slack `action_id`/`block_id`,
 * Discord `custom_id`, modal `callback_id`/`private_metadata`). Questions and options travel as
 * indexes, never as labels (labels may be 10,000 characters long).
 *
 * Format: `ab2|<agent tag>|<callId>|<verb>|<question index>|<option index>` with empty trailing
 * fields dropped. The agent tag (`agentTag`) is a short hash of the call's agentId: callIds are
 * only unique per agent, and two 64-character ids do not fit Discord's 100. A card is found only
 * by both: the callId and its agent's tag.
 */

import { createHash } from 'node:crypto'
import { AskbridgeError } from '../errors.js'

/** What a component does when used. */
export type ComponentVerb =
  | 'choose' // button for one option: q, o
  | 'toggle' // multi-select toggle button: q, o
  | 'set' // select menu / checkboxes: q (values carry option indexes)
  | 'other' // open the "Other…" form: q
  | 'skip' // skip question: q
  | 'submit'
  | 'approve'
  | 'reject'
  | 'always'
  | 'decline' // plan review: open the decline-with-feedback form
  | 'hold' // take my time
  | 'page' // select paging / message continuation: q, o = page index
  | 'form' // a modal submission: q

/** Which card (call) a component belongs to. */
export interface CardRef {
  callId: string
  /** `agentTag(agentId)` of the call's agent. */
  agent: string
}

export interface ComponentRef extends CardRef {
  verb: ComponentVerb
  /** Question index in the batch. */
  q?: number
  /** Option index (or page index for `page`). */
  o?: number
}

const VERBS: Record<ComponentVerb, string> = {
  choose: 'c',
  toggle: 't',
  set: 's',
  other: 'o',
  skip: 'k',
  submit: 'u',
  approve: 'a',
  reject: 'r',
  always: 'w',
  decline: 'd',
  hold: 'h',
  page: 'p',
  form: 'f',
}
const BY_CODE = new Map(Object.entries(VERBS).map(([verb, code]) => [code, verb as ComponentVerb]))

/** callIds are restricted to this so they survive every platform id field. */
export const CALL_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/
const PREFIX = 'ab2'
const TAG_PATTERN = /^[A-Za-z0-9_-]{8}$/

/** Matches every component id askbridge writes, for platform listeners. */
export const COMPONENT_ID_PREFIX = /^ab2\|/

/** Tags already computed: a bridge serves a handful of agents, and every click matches one. */
const tags = new Map<string, string>()
const MAX_TAGS = 1024

/** The 8-character tag that names an agent inside component ids (48 bits of its SHA-256). */
export function agentTag(agentId: string): string {
  let tag = tags.get(agentId)
  if (tag === undefined) {
    tag = createHash('sha256').update(agentId).digest('base64url').slice(0, 8)
    if (tags.size >= MAX_TAGS) tags.clear()
    tags.set(agentId, tag)
  }
  return tag
}

/** The reference a card's components carry. */
export function cardRef(call: { agentId: string; callId: string }): CardRef {
  return { callId: call.callId, agent: agentTag(call.agentId) }
}

/** Whether a reference names this call: the same callId, asked by the agent the tag names. */
export function refMatches(ref: CardRef, call: { agentId: string; callId: string }): boolean {
  return ref.callId === call.callId && ref.agent === agentTag(call.agentId)
}

export class CodecError extends AskbridgeError {
  override readonly name = 'CodecError'
  readonly code = 'UNENCODABLE_ID'
}

/** Encode a component reference; throws when the result would exceed `maxLength`. */
export function encodeComponentId(ref: ComponentRef, maxLength = 100): string {
  if (!CALL_ID_PATTERN.test(ref.callId)) throw new CodecError(`callId "${ref.callId}" cannot be encoded`)
  if (!TAG_PATTERN.test(ref.agent)) throw new CodecError(`agent tag "${ref.agent}" cannot be encoded`)
  const parts = [PREFIX, ref.agent, ref.callId, VERBS[ref.verb]]
  if (ref.q !== undefined || ref.o !== undefined) parts.push(String(ref.q ?? ''))
  if (ref.o !== undefined) parts.push(String(ref.o))
  const id = parts.join('|')
  if (id.length > maxLength)
    throw new CodecError(`component id is ${id.length} characters, over ${maxLength}`)
  return id
}

/** Decode a component id; undefined for anything that is not ours or is malformed. */
export function decodeComponentId(id: string): ComponentRef | undefined {
  const parts = id.split('|')
  if (parts[0] !== PREFIX || parts.length < 4 || parts.length > 6) return undefined
  const [, agent, callId, code, q, o] = parts
  if (agent === undefined || !TAG_PATTERN.test(agent)) return undefined
  if (callId === undefined || !CALL_ID_PATTERN.test(callId)) return undefined
  const verb = code === undefined ? undefined : BY_CODE.get(code)
  if (!verb) return undefined
  const ref: ComponentRef = { callId, agent, verb }
  for (const [key, raw] of [
    ['q', q],
    ['o', o],
  ] as const) {
    if (raw === undefined || raw === '') continue
    if (!/^\d{1,4}$/.test(raw)) return undefined
    ref[key] = Number(raw)
  }
  return ref
}
