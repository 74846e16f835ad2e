/**
 * INTERACTION_CREATE payload -> card interaction. Pure: the same payload and card always decode the
 * same way (the time comes from the interaction's snowflake id, not a clock).
 *
 * Two steps: `parseInteraction` reads the payload alone (which card, who, what was used);
 * `onCard` resolves the component on that card (src/card/resolve.ts).
 */
import {
  type APIInteraction,
  type APIMessageComponentInteraction,
  type APIModalSubmitInteraction,
  type APIUser,
  ComponentType,
  InteractionType,
} from 'discord.js'
import { z } from 'zod'
import type { CardAction, CardState, FormKind, InboundInteraction, Person } from '../../src/adapter-kit.js'
import {
  type ComponentInput,
  type ComponentRef,
  cardRef,
  decodeComponentId,
  describeZodError,
  resolveComponent,
} from '../../src/adapter-kit.js'
import { DISCORD_LIMITS as L } from './limits.js'
import { MODAL_TEXT_ID } from './modal.js'

/** What a payload says, before looking at the card. */
export interface ParsedInteraction {
  /** Interaction id: the idempotency key. */
  id: string
  applicationId: string
  token: string
  source: 'component' | 'modal'
  ref: ComponentRef
  actor: Person
  /** When the interaction was created (epoch ms, from the snowflake). */
  at: number
  /** Select menu values (option indexes as strings). */
  values: string[]
  /** Modal text input value. */
  text?: string
  channelId?: string
  messageId?: string
  guildLocale?: string
}

export type Decoded =
  /** Apply this interaction, then acknowledge. */
  | { kind: 'apply'; inbound: InboundInteraction }
  /** Answer with a modal at once; `inbound` is the `hold` that claims a timed wait while typing. */
  | { kind: 'modal'; modal: FormKind; q: number; inbound: InboundInteraction }
  /** Refuse privately without touching the card. */
  | { kind: 'refuse'; message: string }

// The fields askbridge reads, validated at the boundary: a signed but malformed interaction is
// refused (HTTP 400, a log line) instead of throwing inside a handler. Objects stay loose, as
// Discord adds fields freely; a field we read must have the type we read it as.
const snowflake = z.string().regex(/^\d{1,20}$/)
const userSchema = z.looseObject({
  id: snowflake,
  username: z.string().optional(),
  global_name: z.string().nullable().optional(),
})
const componentSchema = z.looseObject({
  type: z.number().int(),
  custom_id: z.string().optional(),
  value: z.string().optional(),
})
const topComponentSchema = z.looseObject({
  type: z.number().int(),
  component: componentSchema.optional(),
  components: z.array(componentSchema).optional(),
})
const interactionSchema = z.looseObject({
  id: snowflake,
  application_id: snowflake,
  type: z.number().int(),
  token: z.string().min(1),
  member: z
    .looseObject({
      user: userSchema,
      roles: z.array(z.string()),
      nick: z.string().nullable().optional(),
    })
    .optional(),
  user: userSchema.optional(),
  locale: z.string().optional(),
  guild_locale: z.string().optional(),
  channel: z.looseObject({ id: snowflake }).optional(),
  channel_id: snowflake.optional(),
  message: z.looseObject({ id: snowflake }).optional(),
})
const componentDataSchema = z.looseObject({
  custom_id: z.string(),
  component_type: z.number().int(),
  values: z.array(z.string()).optional(),
})
const modalDataSchema = z.looseObject({
  custom_id: z.string(),
  components: z.array(topComponentSchema),
})

/**
 * Check a verified payload's shape before anything reads it. Component and modal interactions
 * need their `data`; other types (PING, commands) only the common fields.
 */
export function readInteraction(
  value: unknown,
): { ok: true; payload: APIInteraction } | { ok: false; reason: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'the interaction is not a JSON object' }
  const type = (value as { type?: unknown }).type
  if (type === InteractionType.Ping) {
    const ping = z.looseObject({ type: z.literal(1) }).safeParse(value)
    return ping.success ? { ok: true, payload: value as APIInteraction } : { ok: false, reason: 'bad PING' }
  }
  const common = interactionSchema.safeParse(value)
  if (!common.success)
    return { ok: false, reason: `malformed interaction: ${describeZodError(common.error)}` }
  const data =
    type === InteractionType.MessageComponent
      ? componentDataSchema.safeParse((value as { data?: unknown }).data)
      : type === InteractionType.ModalSubmit
        ? modalDataSchema.safeParse((value as { data?: unknown }).data)
        : undefined
  if (data && !data.success)
    return { ok: false, reason: `malformed interaction data: ${describeZodError(data.error)}` }
  // Checked above field by field; discord.js's type names the rest.
  return { ok: true, payload: value as APIInteraction }
}

const DISCORD_EPOCH = 1420070400000n

/** Epoch milliseconds encoded in a Discord snowflake. */
export function snowflakeTime(id: string): number {
  try {
    return Number((BigInt(id) >> 22n) + DISCORD_EPOCH)
  } catch {
    return 0
  }
}

/** Person from `member.user` (guild) or `user` (DM), with member roles and the user's locale. */
export function personFromPayload(payload: APIInteraction): Person | undefined {
  const user: APIUser | undefined = payload.member?.user ?? payload.user
  if (!user) return undefined
  const person: Person = { platform: 'discord', userId: user.id }
  const name = payload.member?.nick ?? user.global_name ?? user.username
  if (name) person.name = name
  if (payload.member) person.roles = [...payload.member.roles]
  const locale = 'locale' in payload ? payload.locale : undefined
  if (locale) person.locale = locale
  return person
}

function modalText(payload: APIModalSubmitInteraction): string | undefined {
  for (const top of payload.data.components) {
    const inner =
      top.type === ComponentType.Label
        ? [top.component]
        : top.type === ComponentType.ActionRow
          ? top.components
          : []
    for (const component of inner)
      if (component.type === ComponentType.TextInput && component.custom_id === MODAL_TEXT_ID)
        return component.value
  }
  return undefined
}

/** Read a payload; undefined when it is not a component or modal interaction of ours. */
export function parseInteraction(payload: APIInteraction): ParsedInteraction | undefined {
  if (payload.type !== InteractionType.MessageComponent && payload.type !== InteractionType.ModalSubmit)
    return undefined
  const ref = decodeComponentId(payload.data.custom_id)
  const actor = personFromPayload(payload)
  if (!ref || !actor) return undefined
  const parsed: ParsedInteraction = {
    id: payload.id,
    applicationId: payload.application_id,
    token: payload.token,
    source: payload.type === InteractionType.ModalSubmit ? 'modal' : 'component',
    ref,
    actor,
    at: snowflakeTime(payload.id),
    values: [],
  }
  if (payload.type === InteractionType.MessageComponent) {
    const data = (payload as APIMessageComponentInteraction).data
    if (data.component_type === ComponentType.StringSelect) parsed.values = [...data.values]
  } else {
    const text = modalText(payload)
    if (text !== undefined) parsed.text = text
  }
  const channelId = payload.channel?.id ?? payload.channel_id
  if (channelId) parsed.channelId = channelId
  if (payload.message) parsed.messageId = payload.message.id
  if (payload.guild_locale) parsed.guildLocale = payload.guild_locale
  return parsed
}

const GONE = 'This question is no longer available.'

/** Map a parsed interaction onto its card, through the card's own component resolution. */
export function onCard(parsed: ParsedInteraction, card: CardState | undefined): Decoded {
  if (!card) return { kind: 'refuse', message: GONE }
  const { ref } = parsed
  const inbound = (action: CardAction): InboundInteraction => ({
    ...cardRef(card),
    interaction: { id: parsed.id, actor: parsed.actor, action, at: parsed.at },
  })
  const input: ComponentInput = { values: parsed.values }
  // A menu shows one page of 25 options; its id carries the page.
  if (ref.verb === 'set') {
    const from = (ref.o ?? 0) * L.selectOptions
    input.window = { from, to: from + L.selectOptions }
  }
  if (parsed.source === 'modal') input.text = parsed.text ?? ''
  const resolution = resolveComponent(ref, input, card)
  switch (resolution.kind) {
    case 'action':
      return { kind: 'apply', inbound: inbound(resolution.action) }
    case 'form':
      return { kind: 'modal', modal: resolution.form, q: resolution.q, inbound: inbound({ type: 'hold' }) }
    case 'refusal':
      return { kind: 'refuse', message: resolution.refusal.message }
  }
}

/** Payload and card -> what to do. Undefined for payloads that are not ours. */
export function decodeInteraction(payload: APIInteraction, card: CardState | undefined): Decoded | undefined {
  const parsed = parseInteraction(payload)
  return parsed ? onCard(parsed, card) : undefined
}
