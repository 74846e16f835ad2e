/**
 * Card view controls -> Discord action rows, within Discord's limits. Which controls exist is the
 * card view's decision (src/card/view.ts); this file only picks widgets: up to 5 single-select
 * options as buttons, otherwise select menus of 25 options each (paged: the menu's id carries
 * its page, see decode.ts).
 */
import {
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type APIComponentInMessageActionRow,
  type APISelectMenuOption,
  type APIStringSelectComponent,
  ButtonStyle,
  ComponentType,
} from 'discord.js'
import type { Control, ControlRef, Tone } from '../../src/adapter-kit.js'
import { type CardRef, type ComponentRef, encodeComponentId } from '../../src/adapter-kit.js'
import { DISCORD_LIMITS as L } from './limits.js'
import { clamp, escapeInline, escapeMentions } from './text.js'

/** The card a component belongs to: its callId and its agent's tag (see src/card/codec.ts). */
export type CallRef = CardRef & { agent: string }

export type DiscordRow = APIActionRowComponent<APIComponentInMessageActionRow>
type Picker = Extract<Control, { kind: 'options' }>

const STYLES: Record<Tone, APIButtonComponentWithCustomId['style']> = {
  primary: ButtonStyle.Success,
  danger: ButtonStyle.Danger,
  neutral: ButtonStyle.Secondary,
}

const customId = (call: CallRef, ref: ControlRef) =>
  encodeComponentId({ ...call, ...ref } as ComponentRef & CallRef, L.customId)

/**
 * Agent text as shown in a component (button label, select option): plain text where Discord
 * renders no mentions, escaped all the same so nothing even looks like a ping.
 */
const widgetText = (text: string) => escapeMentions(text)

function button(
  call: CallRef,
  ref: ControlRef,
  label: string,
  style: APIButtonComponentWithCustomId['style'],
): APIButtonComponentWithCustomId {
  return {
    type: ComponentType.Button,
    custom_id: customId(call, ref),
    label: clamp(widgetText(label), L.buttonLabel) || '…',
    style,
  }
}

const rowOf = (components: APIComponentInMessageActionRow[]): DiscordRow => ({
  type: ComponentType.ActionRow,
  components,
})

function usesButtons(picker: Picker): boolean {
  return picker.mode === 'one' && picker.options.length <= L.buttonsPerRow
}

/** Options listed in the text when a component cannot show them whole (descriptions, long labels). */
export function optionsInText(controls: readonly Control[]): string | undefined {
  const picker = controls.find((c): c is Picker => c.kind === 'options')
  if (!picker) return undefined
  const widgetMax = usesButtons(picker) ? L.buttonLabel : L.selectOptionText
  const needed = picker.options.some((o) => o.description || widgetText(o.label).length > widgetMax)
  if (!needed) return undefined
  return picker.options
    .map((o) => {
      const description = o.description ? ` — ${escapeInline(o.description)}` : ''
      return `**${o.index + 1}.** ${escapeInline(o.label)}${description}`
    })
    .join('\n')
}

function selectRows(call: CallRef, picker: Picker, number: number | undefined): DiscordRow[] {
  const { options } = picker
  const rows: DiscordRow[] = []
  const pages = Math.ceil(options.length / L.selectOptions)
  for (let page = 0; page < pages; page++) {
    const slice = options.slice(page * L.selectOptions, (page + 1) * L.selectOptions)
    const choices: APISelectMenuOption[] = slice.map((o) => {
      const choice: APISelectMenuOption = {
        label: clamp(widgetText(o.label), L.selectOptionText) || '…',
        value: String(o.index),
      }
      if (o.description) choice.description = clamp(widgetText(o.description), L.selectOptionText)
      if (o.chosen) choice.default = true
      return choice
    })
    const range =
      pages > 1
        ? ` (${page * L.selectOptions + 1}–${page * L.selectOptions + slice.length} of ${options.length})`
        : ''
    const select: APIStringSelectComponent = {
      type: ComponentType.StringSelect,
      custom_id: customId(call, { verb: 'set', q: picker.q, o: page }),
      placeholder: clamp(
        `${number === undefined ? '' : `${number}. `}${picker.mode === 'any' ? 'Choose any' : 'Choose one'}${range}`,
        L.selectPlaceholder,
      ),
      options: choices,
      min_values: picker.mode === 'any' ? 0 : 1,
      max_values: picker.mode === 'any' ? choices.length : 1,
    }
    rows.push(rowOf([select]))
  }
  return rows
}

/** A question's (or the footer's) controls as action rows: option widgets first, then buttons. */
export function rowsFor(call: CallRef, controls: readonly Control[], number?: number): DiscordRow[] {
  const picker = controls.find((c): c is Picker => c.kind === 'options')
  const buttons = controls.flatMap((c) =>
    c.kind === 'options' ? [] : [button(call, c.ref, c.label, STYLES[c.tone])],
  )
  if (!picker) return buttons.length ? [rowOf(buttons)] : []
  if (usesButtons(picker)) {
    const optionButtons = picker.options.map((o) =>
      button(
        call,
        { verb: 'choose', q: picker.q, o: o.index },
        o.label,
        o.chosen ? ButtonStyle.Success : ButtonStyle.Primary,
      ),
    )
    // Approve (plan review) stays first, before the other responses.
    const lead = controls.indexOf(picker) > 0 ? buttons.splice(0, controls.indexOf(picker)) : []
    const all = [...lead, ...optionButtons, ...buttons]
    if (all.length <= L.buttonsPerRow) return [rowOf(all)]
    return [rowOf([...lead, ...optionButtons]), ...(buttons.length ? [rowOf(buttons)] : [])].flatMap((r) =>
      r.components.length > L.buttonsPerRow
        ? [rowOf(r.components.slice(0, L.buttonsPerRow)), rowOf(r.components.slice(L.buttonsPerRow))]
        : [r],
    )
  }
  return [...selectRows(call, picker, number), ...(buttons.length ? [rowOf(buttons)] : [])]
}
