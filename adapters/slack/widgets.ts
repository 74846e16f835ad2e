/**
 * Card view controls -> Block Kit elements, within Slack's limits. Which controls exist is the
 * card view's decision (src/card/view.ts); this file only picks widgets: up to 5 single-select
 * options as buttons, more as a menu (grouped past 100); up to 10 multi-select options as
 * checkboxes, more as a multi-select menu.
 */

import type { Control, ControlRef, OptionView, Tone } from '../../src/adapter-kit.js'
import { type CardRef, type ComponentRef, encodeComponentId } from '../../src/adapter-kit.js'
import {
  type ActionElement,
  type ButtonElement,
  type PlainText,
  SLACK_LIMITS,
  type SlackOption,
  type SlackOptionGroup,
} from './blocks.js'
import { truncatePlain } from './text.js'

/** The card a component belongs to: its callId and its agent's tag (see src/card/codec.ts). */
export type CallRef = CardRef & { agent: string }

/** Single-select options shown as buttons up to this many; a menu past it. */
export const BUTTON_OPTIONS = 5

export const plain = (text: string): PlainText => ({
  type: 'plain_text',
  text: text === '' ? ' ' : text,
  emoji: true,
})

export const componentId = (call: CallRef, ref: ControlRef): string =>
  encodeComponentId({ ...call, ...ref } as ComponentRef & CallRef, SLACK_LIMITS.actionId)

function button(actionId: string, text: string, tone: Tone, chosen = false): ButtonElement {
  const style = chosen || tone === 'primary' ? 'primary' : tone === 'danger' ? 'danger' : undefined
  return {
    type: 'button',
    action_id: actionId,
    text: plain(truncatePlain(text, SLACK_LIMITS.buttonText)),
    ...(style ? { style } : {}),
  }
}

function optionText(o: OptionView, numbered: boolean): string {
  return truncatePlain(numbered ? `${o.index + 1}. ${o.label}` : o.label, SLACK_LIMITS.optionText)
}

/** Up to 100 options as they are; more in groups of 100 (Slack allows 100 groups). */
function grouped(options: SlackOption[]): { options: SlackOption[]; groups?: SlackOptionGroup[] } {
  if (options.length <= SLACK_LIMITS.selectOptions) return { options }
  const groups: SlackOptionGroup[] = []
  for (let start = 0; start < options.length && groups.length < SLACK_LIMITS.optionGroups; start += 100) {
    const slice = options.slice(start, start + 100)
    groups.push({ label: plain(`Options ${start + 1}–${start + slice.length}`), options: slice })
  }
  return { options, groups }
}

/** Whether the options' full text must be listed above the widget (it cannot show them whole). */
export function needsListing(control: Extract<Control, { kind: 'options' }>): boolean {
  const opts = control.options
  const checkboxes = control.mode === 'any' && opts.length <= SLACK_LIMITS.checkboxOptions
  const buttons = control.mode === 'one' && opts.length <= BUTTON_OPTIONS
  const limit = buttons ? SLACK_LIMITS.buttonText - 4 : SLACK_LIMITS.optionText - 5
  return opts.some(
    (o) =>
      o.label.length > limit ||
      /\s{2,}|\n/.test(o.label) ||
      (o.description !== undefined &&
        o.description !== '' &&
        (!checkboxes || o.description.length > SLACK_LIMITS.optionDescription)),
  )
}

function optionElements(
  call: CallRef,
  control: Extract<Control, { kind: 'options' }>,
  numbered: boolean,
): ActionElement[] {
  const { q, options: opts } = control
  const asOption = (o: OptionView): SlackOption => ({
    text: plain(optionText(o, numbered)),
    value: String(o.index),
  })
  if (control.mode === 'one') {
    if (opts.length <= BUTTON_OPTIONS)
      return opts.map((o) =>
        button(
          componentId(call, { verb: 'choose', q, o: o.index }),
          optionText(o, numbered),
          'neutral',
          o.chosen,
        ),
      )
    const { options, groups } = grouped(opts.map(asOption))
    const initial = options.find((_, k) => opts[k]?.chosen)
    return [
      {
        type: 'static_select',
        action_id: componentId(call, { verb: 'choose', q }),
        placeholder: plain(control.prompt),
        ...(groups ? { option_groups: groups } : { options }),
        ...(initial ? { initial_option: initial } : {}),
      },
    ]
  }
  if (opts.length <= SLACK_LIMITS.checkboxOptions) {
    const withDesc = opts.map((o): SlackOption => {
      const d = o.description
      return d && d.length <= SLACK_LIMITS.optionDescription
        ? { ...asOption(o), description: plain(d) }
        : asOption(o)
    })
    const initial = withDesc.filter((_, k) => opts[k]?.chosen)
    return [
      {
        type: 'checkboxes',
        action_id: componentId(call, { verb: 'set', q }),
        options: withDesc,
        ...(initial.length > 0 ? { initial_options: initial } : {}),
      },
    ]
  }
  const { options, groups } = grouped(opts.map(asOption))
  const initial = options.filter((_, k) => opts[k]?.chosen)
  return [
    {
      type: 'multi_static_select',
      action_id: componentId(call, { verb: 'set', q }),
      placeholder: plain(control.prompt),
      ...(groups ? { option_groups: groups } : { options }),
      ...(initial.length > 0 ? { initial_options: initial } : {}),
    },
  ]
}

/** A view's controls as the elements of one actions block (never more than 25: at most 7 here). */
export function controlElements(
  call: CallRef,
  controls: readonly Control[],
  numbered: boolean,
): ActionElement[] {
  return controls.flatMap((c): ActionElement[] => {
    if (c.kind === 'options') return optionElements(call, c, numbered)
    return [button(componentId(call, c.ref), c.label, c.tone)]
  })
}
