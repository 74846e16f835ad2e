/**
 * `adaptiveCard/action` invoke -> card interactions. Pure: the same activity and card always
 * decode the same way.
 *
 * The button's data names the component (`askbridge`, see render.ts); the card's inputs arrive
 * beside it, keyed by their component ids. A form's Send reads its own text input; a choice set's
 * Save reads its values; Submit first records every input that differs from the shared draft (a
 * typed answer, a changed choice set), then submits, so what a person sees on the card is what
 * is submitted.
 */
import { z } from 'zod'
import type { CardAction, CardState, InboundInteraction, Person } from '../../src/adapter-kit.js'
import {
  type ComponentInput,
  type ComponentRef,
  cardRef,
  decodeComponentId,
  describeZodError,
  resolveComponent,
} from '../../src/adapter-kit.js'
import { ACTION_KEY, CARD_KEY, REFRESH_VERB } from './card-schema.js'

const accountSchema = z.looseObject({
  id: z.string().min(1).max(512),
  name: z.string().max(512).optional(),
  aadObjectId: z.string().max(64).optional(),
})

/** The fields askbridge reads from an activity, validated at the boundary. */
const activitySchema = z.looseObject({
  type: z.string().min(1),
  id: z.string().min(1).max(512).optional(),
  name: z.string().optional(),
  timestamp: z.string().optional(),
  serviceUrl: z.string().optional(),
  channelId: z.string().optional(),
  from: accountSchema.optional(),
  conversation: z.looseObject({ id: z.string().min(1).max(1024), tenantId: z.string().optional() }),
  replyToId: z.string().max(512).optional(),
  locale: z.string().max(64).optional(),
  value: z.unknown().optional(),
})

const actionValueSchema = z.looseObject({
  action: z.looseObject({
    type: z.literal('Action.Execute'),
    verb: z.string().optional(),
    data: z.record(z.string(), z.unknown()),
  }),
})

export type TeamsActivity = z.infer<typeof activitySchema>

/** Check an activity's shape before anything reads it. */
export function readActivity(
  value: unknown,
): { ok: true; activity: TeamsActivity } | { ok: false; reason: string } {
  const parsed = activitySchema.safeParse(value)
  return parsed.success
    ? { ok: true, activity: parsed.data }
    : { ok: false, reason: `malformed activity: ${describeZodError(parsed.error)}` }
}

/** What an Action.Execute invoke says, before looking at the card. */
export interface ParsedInvoke {
  /** The invoke's id: the idempotency key (each derived interaction adds its step). */
  id: string
  actor: Person
  /** Teams' id for the person (`29:…`), for member look-ups. */
  teamsUserId: string
  ref: ComponentRef
  /** Every other entry of the data: the card's inputs by component id. */
  inputs: Map<string, string>
  /** The card message the button is on. */
  activityId?: string
  conversationId: string
  at: number
}

/** Read an invoke; undefined when it is not an Action.Execute of ours. */
export function parseInvoke(activity: TeamsActivity): ParsedInvoke | undefined {
  if (activity.type !== 'invoke' || activity.name !== 'adaptiveCard/action') return undefined
  const value = actionValueSchema.safeParse(activity.value)
  const from = activity.from
  if (!value.success || !from || !activity.id) return undefined
  const data = value.data.action.data
  const id = data[ACTION_KEY]
  const ref = typeof id === 'string' ? decodeComponentId(id) : undefined
  if (!ref) return undefined
  const inputs = new Map<string, string>()
  for (const [key, v] of Object.entries(data)) {
    if (key === ACTION_KEY) continue
    if (typeof v === 'string') inputs.set(key, v)
  }
  const actor: Person = { platform: 'teams', userId: from.aadObjectId ?? from.id }
  if (from.name) actor.name = from.name
  if (activity.locale) actor.locale = activity.locale
  const at = activity.timestamp ? Date.parse(activity.timestamp) : Number.NaN
  return {
    id: activity.id,
    actor,
    teamsUserId: from.id,
    ref,
    inputs,
    ...(activity.replyToId ? { activityId: activity.replyToId } : {}),
    conversationId: activity.conversation.id,
    at: Number.isFinite(at) ? at : 0,
  }
}

/** A refresh: Teams asks for the card as this person sees it (`refresh.action`, verb `refresh`). */
export interface ParsedRefresh {
  actor: Person
  /** Teams' id for the person (`29:…`). */
  teamsUserId: string
  ref: { callId: string; agent: string }
  conversationId: string
}

const refreshDataSchema = z.looseObject({
  [CARD_KEY]: z.object({ callId: z.string().min(1).max(64), agent: z.string().min(1).max(16) }),
})

/** Read a refresh invoke; undefined when it is not one of ours. */
export function parseRefresh(activity: TeamsActivity): ParsedRefresh | undefined {
  if (activity.type !== 'invoke' || activity.name !== 'adaptiveCard/action') return undefined
  const value = actionValueSchema.safeParse(activity.value)
  const from = activity.from
  if (!value.success || !from || value.data.action.verb !== REFRESH_VERB) return undefined
  const data = refreshDataSchema.safeParse(value.data.action.data)
  if (!data.success) return undefined
  const actor: Person = { platform: 'teams', userId: from.aadObjectId ?? from.id }
  if (from.name) actor.name = from.name
  if (activity.locale) actor.locale = activity.locale
  return { actor, teamsUserId: from.id, ref: data.data[CARD_KEY], conversationId: activity.conversation.id }
}

export type Decoded =
  /** Apply these in order (inputs first, then the button), then answer with the card. */
  { kind: 'apply'; steps: InboundInteraction[] } | { kind: 'refuse'; message: string }

const GONE = 'This question is no longer available.'

function values(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean)
}

/** Map a parsed invoke onto its card, through the card's own component resolution. */
export function onCard(parsed: ParsedInvoke, card: CardState | undefined): Decoded {
  if (!card) return { kind: 'refuse', message: GONE }
  const steps: InboundInteraction[] = []
  const step = (action: CardAction) =>
    steps.push({
      ...cardRef(card),
      interaction: { id: `${parsed.id}#${steps.length}`, actor: parsed.actor, action, at: parsed.at },
    })
  const resolve = (ref: ComponentRef, input: ComponentInput) => resolveComponent(ref, input, card)
  const { ref } = parsed
  const own = parsed.inputs.get(
    // The button's own input has its component id (forms and choice sets).
    [...parsed.inputs.keys()].find((k) => sameRef(decodeComponentId(k), ref)) ?? '',
  )

  if (ref.verb === 'submit') {
    // Inputs first: what the person sees in the card is what is submitted.
    for (const [key, raw] of parsed.inputs) {
      const inputRef = decodeComponentId(key)
      if (!inputRef || inputRef.callId !== card.callId || inputRef.q === undefined) continue
      const question = card.questions[inputRef.q]
      if (!question) continue
      const draft = card.drafts[question.id]
      if (inputRef.verb === 'other') {
        const text = raw.trim()
        if (!text || text === draft?.custom) continue
        const r = resolve(inputRef, { text })
        if (r.kind === 'action') step(r.action)
      } else if (inputRef.verb === 'set' || inputRef.verb === 'choose') {
        const chosen = values(raw)
        const labels = chosen.map((i) => question.options?.[Number(i)]?.label)
        const same =
          draft &&
          !draft.skipped &&
          labels.length === draft.selected.length &&
          labels.every((l) => l !== undefined && draft.selected.includes(l))
        if (chosen.length === 0 || same) continue
        const r = resolve(inputRef, { values: chosen })
        if (r.kind === 'refusal') return { kind: 'refuse', message: r.refusal.message }
        if (r.kind === 'action') step(r.action)
      }
    }
  }
  const input: ComponentInput = {}
  const isForm =
    ref.verb === 'other' ||
    ref.verb === 'decline' ||
    ((ref.verb === 'approve' || ref.verb === 'reject') && ref.q !== undefined)
  if (isForm) input.text = own ?? ''
  if ((ref.verb === 'set' || ref.verb === 'choose') && ref.o === undefined) input.values = values(own)
  const resolution = resolve(ref, input)
  switch (resolution.kind) {
    case 'action':
      step(resolution.action)
      return { kind: 'apply', steps }
    case 'form':
      // Forms are inputs inside the card; a Send without its input is an empty answer.
      return { kind: 'refuse', message: 'Type your answer in the box first, then press Send.' }
    case 'refusal':
      return { kind: 'refuse', message: resolution.refusal.message }
  }
}

function sameRef(a: ComponentRef | undefined, b: ComponentRef): boolean {
  return a !== undefined && a.callId === b.callId && a.verb === b.verb && a.q === b.q && a.o === b.o
}
