/**
 * INTERACTION_CREATE payload -> card interaction. Pure: the same payload and card always decode the
 * same way (the time comes from the interaction's snowflake id, not a clock).
 *
 * Two steps: `parseInteraction` reads the payload alone (which card, who, what was used);
 * `toInbound` maps question/option indexes to ids and labels on that card.
 */
import {
  type APIInteraction,
  type APIMessageComponentInteraction,
  type APIModalSubmitInteraction,
  type APIUser,
  ComponentType,
  InteractionType,
} from 'discord.js'
import type { InboundInteraction } from '../../src/answerer/adapter.js'
import { type ComponentRef, cardRef, decodeComponentId } from '../../src/card/codec.js'
import type { CardAction, CardState, Person } from '../../src/card/types.js'
import { DISCORD_LIMITS as L } from './limits.js'
import { MODAL_TEXT_ID } from './modal.js'
import { isLive } from './render.js'

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
  | { kind: 'modal'; modal: 'other' | 'decline'; q: number; inbound: InboundInteraction }
  /** Refuse privately without touching the card. */
  | { kind: 'refuse'; message: string }

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
const CLOSED = 'This question is already closed.'

/** Map a parsed interaction onto its card. */
export function toInbound(parsed: ParsedInteraction, card: CardState | undefined): Decoded {
  if (!card) return { kind: 'refuse', message: GONE }
  const { ref } = parsed
  const inbound = (action: CardAction): InboundInteraction => ({
    ...cardRef(card),
    interaction: { id: parsed.id, actor: parsed.actor, action, at: parsed.at },
  })
  const apply = (action: CardAction): Decoded => ({ kind: 'apply', inbound: inbound(action) })
  const question = ref.q === undefined ? undefined : card.questions[ref.q]
  const options = question?.options ?? []
  const needQuestion = (): Decoded => ({ kind: 'refuse', message: 'That question is not on this card.' })

  switch (ref.verb) {
    case 'submit':
    case 'approve':
    case 'reject':
    case 'always':
    case 'hold':
      return apply({ type: ref.verb })
    case 'skip':
      return question ? apply({ type: 'skip', questionId: question.id }) : needQuestion()
    case 'choose':
    case 'toggle': {
      const option = ref.o === undefined ? undefined : options[ref.o]
      if (!question) return needQuestion()
      if (!option) return { kind: 'refuse', message: 'That option is not on this question.' }
      return apply({ type: ref.verb, questionId: question.id, label: option.label })
    }
    case 'set': {
      if (!question) return needQuestion()
      const page = ref.o ?? 0
      const first = page * L.selectOptions
      const pageLabels = options.slice(first, first + L.selectOptions).map((o) => o.label)
      const chosen: string[] = []
      for (const value of parsed.values) {
        const index = /^\d{1,4}$/.test(value) ? Number(value) : -1
        const label = index >= first && index < first + L.selectOptions ? options[index]?.label : undefined
        if (label === undefined) return { kind: 'refuse', message: 'That option is not on this question.' }
        chosen.push(label)
      }
      if (!question.multiSelect) {
        const label = chosen[0]
        return label === undefined
          ? { kind: 'refuse', message: 'Nothing was chosen.' }
          : apply({ type: 'choose', questionId: question.id, label })
      }
      // One menu shows one page of options: keep what was chosen on the other pages.
      const kept = (card.drafts[question.id]?.selected ?? []).filter((l) => !pageLabels.includes(l))
      const labels = options.map((o) => o.label).filter((l) => kept.includes(l) || chosen.includes(l))
      return apply({ type: 'set', questionId: question.id, labels })
    }
    case 'other':
    case 'decline':
    case 'form': {
      if (!question) return needQuestion()
      if (parsed.source === 'component') {
        if (ref.verb === 'form') return { kind: 'refuse', message: 'That is not a button.' }
        if (!isLive(card)) return { kind: 'refuse', message: CLOSED }
        return { kind: 'modal', modal: ref.verb, q: ref.q ?? 0, inbound: inbound({ type: 'hold' }) }
      }
      const text = (parsed.text ?? '').trim()
      if (ref.verb === 'decline')
        return apply(text ? { type: 'decline', feedback: text } : { type: 'decline' })
      if (!text) return { kind: 'refuse', message: 'The answer was empty.' }
      return apply({ type: 'other', questionId: question.id, text })
    }
    case 'page':
      return { kind: 'refuse', message: 'That control is no longer used.' }
  }
}

/** Payload and card -> what to do. Undefined for payloads that are not ours. */
export function decodeInteraction(payload: APIInteraction, card: CardState | undefined): Decoded | undefined {
  const parsed = parseInteraction(payload)
  return parsed ? toInbound(parsed, card) : undefined
}
