/**
 * Slack interactivity payloads -> card interactions, as pure functions.
 *
 * Component ids carry only indexes (see src/card/codec.ts); the card's own resolution
 * (src/card/resolve.ts) turns them into card actions, forms to open, or refusals. Interaction ids are derived from what Slack repeats on a
 * retry (`action_ts`, user, `action_id`; the view id for modals), so a redelivered payload maps to
 * the same id and the card applies it once.
 */

import { z } from 'zod'
import type { CardState, FormKind, InboundInteraction, Interaction, Person } from '../../src/adapter-kit.js'
import {
  type CardRef,
  type ComponentRef,
  decodeComponentId,
  describeZodError,
  type Resolution,
  resolveComponent,
} from '../../src/adapter-kit.js'
import { decodeModalMetadata, MODAL_INPUT } from './modal.js'

// Payloads are validated at the boundary: a signed but malformed payload is refused (HTTP 400,
// a log line) rather than crashing a listener. Objects stay loose: Slack adds fields freely.

const userSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  username: z.string().optional(),
  team_id: z.string().optional(),
  locale: z.string().optional(),
})

const selectedOptionSchema = z.looseObject({ value: z.string() })

const blockActionSchema = z.looseObject({
  type: z.string(),
  action_id: z.string(),
  block_id: z.string().optional(),
  action_ts: z.string().optional(),
  value: z.string().optional(),
  selected_option: selectedOptionSchema.nullable().optional(),
  selected_options: z.array(selectedOptionSchema).optional(),
})

/** A `block_actions` interactivity payload, as far as askbridge reads it. */
export const blockActionsSchema = z.looseObject({
  type: z.literal('block_actions'),
  user: userSchema,
  actions: z.array(blockActionSchema),
  trigger_id: z.string().optional(),
  response_url: z.string().optional(),
  container: z
    .looseObject({
      type: z.string().optional(),
      message_ts: z.string().optional(),
      channel_id: z.string().optional(),
      is_ephemeral: z.boolean().optional(),
    })
    .optional(),
  channel: z.looseObject({ id: z.string(), name: z.string().optional() }).optional(),
  message: z.looseObject({ ts: z.string().optional() }).optional(),
})

/** A `view_submission` or `view_closed` payload of a modal. */
export const viewPayloadSchema = z.looseObject({
  type: z.enum(['view_submission', 'view_closed']),
  user: userSchema,
  view: z.looseObject({
    id: z.string(),
    callback_id: z.string(),
    private_metadata: z.string().optional(),
    hash: z.string().optional(),
    state: z
      .looseObject({
        values: z.record(
          z.string(),
          z.record(
            z.string(),
            z.looseObject({ type: z.string().optional(), value: z.string().nullable().optional() }),
          ),
        ),
      })
      .optional(),
  }),
})

/** The fields of a Slack user object we read (present on every interactivity payload). */
export type SlackPayloadUser = z.infer<typeof userSchema>
export type BlockActionsPayload = z.infer<typeof blockActionsSchema>
export type ViewPayload = z.infer<typeof viewPayloadSchema>
export type SlackPayload = BlockActionsPayload | ViewPayload

/** The interactivity types askbridge handles; everything else is left to Bolt (and ignored). */
export const INTERACTIVE_TYPES = new Set(['block_actions', 'view_submission', 'view_closed'])

export type SlackPayloadCheck =
  | { ok: true; payload: SlackPayload }
  | { ok: true; ours: false }
  | { ok: false; reason: string }

/**
 * Checks already made, by body: the HTTP transport checks a body before Bolt sees it and the
 * listener (the only check in Socket Mode) is handed the same object, so it is checked once.
 */
const checks = new WeakMap<object, SlackPayloadCheck>()

/**
 * Check a parsed interactivity body. `ours: false` for a body of another type (events, shortcuts):
 * not askbridge's to judge. A body of our types that does not have the shape is refused with a reason.
 */
export function readSlackPayload(body: unknown): SlackPayloadCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, reason: 'the payload is not a JSON object' }
  let check = checks.get(body)
  if (check === undefined) {
    check = checkPayload(body)
    checks.set(body, check)
  }
  return check
}

function checkPayload(body: object): SlackPayloadCheck {
  const type = (body as { type?: unknown }).type
  if (typeof type !== 'string' || !INTERACTIVE_TYPES.has(type)) return { ok: true, ours: false }
  const parsed =
    type === 'block_actions' ? blockActionsSchema.safeParse(body) : viewPayloadSchema.safeParse(body)
  if (parsed.success) return { ok: true, payload: parsed.data }
  return { ok: false, reason: `malformed ${type} payload: ${describeZodError(parsed.error)}` }
}

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
      modal: FormKind
      card: CardRef
      q: number
      hold: InboundInteraction
      context: ActionContext
    }
  /** Ours, but it does not match the call's questions: tell the person. */
  | { kind: 'invalid'; card: CardRef; message: string; context: ActionContext }

/** The card a component names, or undefined when the call is unknown. */
export type CardLookup = (ref: CardRef) => CardState | undefined

/** Only the card part of a component reference. */
function cardOf(ref: CardRef): CardRef {
  return { callId: ref.callId, agent: ref.agent }
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

/** What a resolution means for the Slack adapter: an interaction, a form to open, or a notice. */
function toResult(
  resolution: Resolution,
  card: CardRef,
  base: Omit<Interaction, 'action'>,
  context: ActionContext,
): DecodeResult {
  switch (resolution.kind) {
    case 'action':
      return {
        kind: 'interaction',
        inbound: { ...card, interaction: { ...base, action: resolution.action } },
        context,
      }
    case 'form':
      return {
        kind: 'modal',
        modal: resolution.form,
        card,
        q: resolution.q,
        hold: { ...card, interaction: { ...base, action: { type: 'hold' } } },
        context,
      }
    case 'refusal':
      return { kind: 'invalid', card, message: resolution.refusal.message, context }
  }
}

/** A decoded block action on its card, through the card's own component resolution. */
export function decodedOnCard(action: DecodedAction, card: CardState): DecodeResult {
  const { ref, actor, at, id } = action
  const context: ActionContext = {
    ...(action.channel ? { channel: action.channel } : {}),
    ...(action.messageTs ? { messageTs: action.messageTs } : {}),
    ...(action.triggerId ? { triggerId: action.triggerId } : {}),
    ...(action.responseUrl ? { responseUrl: action.responseUrl } : {}),
  }
  const input = action.values ? { values: action.values } : {}
  return toResult(resolveComponent(ref, input, card), cardOf(ref), { id, actor, at }, context)
}

/** A modal's submission or closing as an interaction (undefined when the view is not ours). */
export function decodeView(
  payload: ViewPayload,
  card: CardState,
  now = Date.now(),
): DecodeResult | undefined {
  const ref = decodeComponentId(payload.view.callback_id)
  const forms = ['other', 'decline', 'approve', 'reject']
  if (!ref || !forms.includes(ref.verb)) return undefined
  const meta = decodeModalMetadata(payload.view.private_metadata)
  const context: ActionContext = meta?.channel ? { channel: meta.channel } : {}
  const actor = personOf(payload.user)
  const base = (suffix: string) => ({ id: `slack:view:${payload.view.id}:${suffix}`, actor, at: now })
  if (payload.type === 'view_closed')
    return toResult({ kind: 'action', action: { type: 'release' } }, cardOf(ref), base('closed'), context)
  const text = payload.view.state?.values[MODAL_INPUT.block]?.[MODAL_INPUT.action]?.value ?? ''
  return toResult(resolveComponent(ref, { text }, card), cardOf(ref), base('submit'), context)
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
export function decodePayload(payload: SlackPayload, lookup: CardLookup, now = Date.now()): DecodeResult[] {
  if (payload.type === 'block_actions') {
    return decodeBlockActions(payload, now).flatMap((action) => {
      const card = lookup(action.ref)
      return card ? [decodedOnCard(action, card)] : []
    })
  }
  const ref = cardRefOf(payload)
  const card = ref === undefined ? undefined : lookup(ref)
  if (!card) return []
  const result = decodeView(payload, card, now)
  return result ? [result] : []
}
