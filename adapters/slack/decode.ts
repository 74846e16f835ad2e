/**
 * Slack interactivity payloads -> card interactions, as pure functions.
 *
 * Component ids carry only indexes (see src/card/codec.ts); the call's questions turn them back
 * into question ids and option labels. Interaction ids are derived from what Slack repeats on a
 * retry (`action_ts`, user, `action_id`; the view id for modals), so a redelivered payload maps to
 * the same id and the card applies it once.
 */

import type { InboundInteraction } from '../../src/answerer/adapter.js'
import { type CardRef, type ComponentRef, decodeComponentId } from '../../src/card/codec.js'
import type { CardAction, Person } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { decodeModalMetadata, MODAL_INPUT } from './modal.js'

/** The fields of a Slack user object we read (present on every interactivity payload). */
export interface SlackPayloadUser {
  id: string
  name?: string
  username?: string
  team_id?: string
  locale?: string
}

export interface SlackSelectedOption {
  value: string
}

export interface SlackBlockAction {
  type: string
  action_id: string
  block_id?: string
  action_ts?: string
  value?: string
  selected_option?: SlackSelectedOption | null
  selected_options?: SlackSelectedOption[]
}

export interface BlockActionsPayload {
  type: 'block_actions'
  user: SlackPayloadUser
  actions: SlackBlockAction[]
  trigger_id?: string
  response_url?: string
  container?: { type?: string; message_ts?: string; channel_id?: string; is_ephemeral?: boolean }
  channel?: { id: string; name?: string }
  message?: { ts?: string }
}

export interface ViewPayload {
  type: 'view_submission' | 'view_closed'
  user: SlackPayloadUser
  view: {
    id: string
    callback_id: string
    private_metadata?: string
    hash?: string
    state?: { values: Record<string, Record<string, { type?: string; value?: string | null }>> }
  }
}

export type SlackPayload = BlockActionsPayload | ViewPayload

/** Where a block action happened, for replies (ephemeral notices, modals). */
export interface ActionContext {
  channel?: string
  messageTs?: string
  triggerId?: string
  responseUrl?: string
}

/** One of our components used, before the call's questions resolve its indexes. */
export interface DecodedAction extends ActionContext {
  /** Stable idempotency key for this delivery. */
  id: string
  ref: ComponentRef
  actor: Person
  at: number
  /** Selected option values of a menu or checkbox group (option indexes as strings). */
  values?: string[]
}

/** What to do about one decoded payload. */
export type DecodeResult =
  | { kind: 'interaction'; inbound: InboundInteraction; context: ActionContext }
  /** Open a form now (the trigger_id expires in 3 s), then claim the wait with `hold`. */
  | {
      kind: 'modal'
      modal: 'other' | 'decline'
      card: CardRef
      q: number
      hold: InboundInteraction
      context: ActionContext
    }
  /** Ours, but it does not match the call's questions: tell the person. */
  | { kind: 'invalid'; card: CardRef; message: string; context: ActionContext }

/** The call's questions, or undefined when the call is unknown. */
export type QuestionLookup = (ref: CardRef) => readonly AskUserQuestionItem[] | undefined

/** Only the card part of a component reference. */
function cardOf(ref: CardRef): CardRef {
  return { callId: ref.callId, ...(ref.agent === undefined ? {} : { agent: ref.agent }) }
}

export function personOf(user: SlackPayloadUser): Person {
  const name = user.name || user.username
  return {
    platform: 'slack',
    userId: user.id,
    ...(name ? { name } : {}),
    ...(user.locale ? { locale: user.locale } : {}),
  }
}

function epochMs(ts: string | undefined, fallback: number): number {
  const seconds = ts === undefined ? Number.NaN : Number.parseFloat(ts)
  return Number.isFinite(seconds) ? Math.round(seconds * 1000) : fallback
}

/** Our components in a block_actions payload (others' components are ignored). */
export function decodeBlockActions(payload: BlockActionsPayload, now = Date.now()): DecodedAction[] {
  const actor = personOf(payload.user)
  const channel = payload.container?.channel_id ?? payload.channel?.id
  const messageTs = payload.container?.message_ts ?? payload.message?.ts
  const out: DecodedAction[] = []
  for (const action of payload.actions ?? []) {
    const ref = decodeComponentId(action.action_id)
    if (!ref) continue
    const values = action.selected_options
      ? action.selected_options.map((o) => o.value)
      : action.selected_option
        ? [action.selected_option.value]
        : undefined
    out.push({
      id: `slack:${action.action_ts ?? now}:${actor.userId}:${action.action_id}`,
      ref,
      actor,
      at: epochMs(action.action_ts, now),
      ...(values ? { values } : {}),
      ...(channel ? { channel } : {}),
      ...(messageTs ? { messageTs } : {}),
      ...(payload.trigger_id ? { triggerId: payload.trigger_id } : {}),
      ...(payload.response_url ? { responseUrl: payload.response_url } : {}),
    })
  }
  return out
}

/** Resolve a decoded action against its call's questions. */
export function resolveAction(
  action: DecodedAction,
  questions: readonly AskUserQuestionItem[],
): DecodeResult {
  const { ref, actor, at, id } = action
  const context: ActionContext = {
    ...(action.channel ? { channel: action.channel } : {}),
    ...(action.messageTs ? { messageTs: action.messageTs } : {}),
    ...(action.triggerId ? { triggerId: action.triggerId } : {}),
    ...(action.responseUrl ? { responseUrl: action.responseUrl } : {}),
  }
  const make = (a: CardAction): DecodeResult => ({
    kind: 'interaction',
    inbound: { ...cardOf(ref), interaction: { id, actor, action: a, at } },
    context,
  })
  const invalid = (message: string): DecodeResult => ({
    kind: 'invalid',
    card: cardOf(ref),
    message,
    context,
  })
  const question = ref.q === undefined ? undefined : questions[ref.q]
  const labelAt = (o: number | undefined) => (o === undefined ? undefined : question?.options?.[o]?.label)
  const labelsOf = (values: readonly string[]) => values.map((v) => labelAt(/^\d+$/.test(v) ? Number(v) : -1))

  switch (ref.verb) {
    case 'approve':
    case 'reject':
    case 'always':
    case 'submit':
    case 'hold':
      return make({ type: ref.verb })
    case 'decline':
      return {
        kind: 'modal',
        modal: 'decline',
        card: cardOf(ref),
        q: 0,
        hold: { ...cardOf(ref), interaction: { id, actor, action: { type: 'hold' }, at } },
        context,
      }
    default:
      break
  }
  if (!question) return invalid('That question is no longer on this card.')
  switch (ref.verb) {
    case 'choose':
    case 'toggle': {
      const o = ref.o ?? (action.values?.[0] !== undefined ? Number(action.values[0]) : undefined)
      const label = labelAt(o)
      if (label === undefined) return invalid('That option is not on this card.')
      return make({ type: ref.verb, questionId: question.id, label })
    }
    case 'set': {
      const labels = labelsOf(action.values ?? [])
      if (labels.some((l) => l === undefined)) return invalid('That option is not on this card.')
      return make({ type: 'set', questionId: question.id, labels: labels as string[] })
    }
    case 'skip':
      return make({ type: 'skip', questionId: question.id })
    case 'other':
      return {
        kind: 'modal',
        modal: 'other',
        card: cardOf(ref),
        q: ref.q ?? 0,
        hold: { ...cardOf(ref), interaction: { id, actor, action: { type: 'hold' }, at } },
        context,
      }
    default:
      return invalid('That control is not supported here.')
  }
}

/** A modal's submission or closing as an interaction (undefined when the view is not ours). */
export function decodeView(
  payload: ViewPayload,
  questions: readonly AskUserQuestionItem[],
  now = Date.now(),
): DecodeResult | undefined {
  const ref = decodeComponentId(payload.view.callback_id)
  if (!ref || (ref.verb !== 'other' && ref.verb !== 'decline')) return undefined
  const meta = decodeModalMetadata(payload.view.private_metadata)
  const context: ActionContext = meta?.channel ? { channel: meta.channel } : {}
  const actor = personOf(payload.user)
  const make = (suffix: string, action: CardAction): DecodeResult => ({
    kind: 'interaction',
    inbound: {
      ...cardOf(ref),
      interaction: { id: `slack:view:${payload.view.id}:${suffix}`, actor, action, at: now },
    },
    context,
  })
  if (payload.type === 'view_closed') return make('closed', { type: 'release' })
  const text = payload.view.state?.values[MODAL_INPUT.block]?.[MODAL_INPUT.action]?.value ?? ''
  if (ref.verb === 'decline')
    return make('submit', text.trim() ? { type: 'decline', feedback: text } : { type: 'decline' })
  const question = questions[ref.q ?? 0]
  if (!question)
    return {
      kind: 'invalid',
      card: cardOf(ref),
      message: 'That question is no longer on this card.',
      context,
    }
  return make('submit', { type: 'other', questionId: question.id, text })
}

/** The card a payload names, if it is ours (to look its questions up before resolving). */
export function cardRefOf(payload: SlackPayload): CardRef | undefined {
  if (payload.type === 'block_actions') {
    for (const a of payload.actions ?? []) {
      const ref = decodeComponentId(a.action_id)
      if (ref) return cardOf(ref)
    }
    return undefined
  }
  const ref = decodeComponentId(payload.view.callback_id)
  return ref ? cardOf(ref) : undefined
}

/**
 * A whole payload to interactions: the pure decoder the adapter and the fixture tests use.
 * Unknown calls yield nothing (the card host answers those with its own notice).
 */
export function decodePayload(
  payload: SlackPayload,
  lookup: QuestionLookup,
  now = Date.now(),
): DecodeResult[] {
  if (payload.type === 'block_actions') {
    return decodeBlockActions(payload, now).flatMap((action) => {
      const questions = lookup(action.ref)
      return questions ? [resolveAction(action, questions)] : []
    })
  }
  const ref = cardRefOf(payload)
  const questions = ref === undefined ? undefined : lookup(ref)
  if (!questions) return []
  const result = decodeView(payload, questions, now)
  return result ? [result] : []
}
