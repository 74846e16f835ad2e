/**
 * The slice of Block Kit askbridge renders, typed narrowly so renderers cannot produce shapes
 * Slack would refuse. Limits live in {@link SLACK_LIMITS} (from docs/platform-limits.md#block-kit-and-views).
 */

export interface PlainText {
  type: 'plain_text'
  text: string
  emoji?: boolean
}
export interface Mrkdwn {
  type: 'mrkdwn'
  text: string
}

export interface SlackOption {
  text: PlainText | Mrkdwn
  value: string
  description?: PlainText | Mrkdwn
}
export interface SlackOptionGroup {
  label: PlainText
  options: SlackOption[]
}

export interface ButtonElement {
  type: 'button'
  action_id: string
  text: PlainText
  value?: string
  style?: 'primary' | 'danger'
  accessibility_label?: string
}
export interface StaticSelectElement {
  type: 'static_select'
  action_id: string
  placeholder: PlainText
  options?: SlackOption[]
  option_groups?: SlackOptionGroup[]
  initial_option?: SlackOption
}
export interface MultiStaticSelectElement {
  type: 'multi_static_select'
  action_id: string
  placeholder: PlainText
  options?: SlackOption[]
  option_groups?: SlackOptionGroup[]
  initial_options?: SlackOption[]
  max_selected_items?: number
}
export interface CheckboxesElement {
  type: 'checkboxes'
  action_id: string
  options: SlackOption[]
  initial_options?: SlackOption[]
}
export interface PlainTextInputElement {
  type: 'plain_text_input'
  action_id: string
  multiline?: boolean
  max_length?: number
  min_length?: number
  placeholder?: PlainText
  initial_value?: string
}
export interface ImageElement {
  type: 'image'
  image_url: string
  alt_text: string
}

export type ActionElement = ButtonElement | StaticSelectElement | MultiStaticSelectElement | CheckboxesElement

export interface HeaderBlock {
  type: 'header'
  text: PlainText
  block_id?: string
}
export interface SectionBlock {
  type: 'section'
  text: Mrkdwn | PlainText
  block_id?: string
}
export interface ContextBlock {
  type: 'context'
  elements: (Mrkdwn | PlainText | ImageElement)[]
  block_id?: string
}
export interface ActionsBlock {
  type: 'actions'
  elements: ActionElement[]
  block_id?: string
}
export interface DividerBlock {
  type: 'divider'
  block_id?: string
}
export interface InputBlock {
  type: 'input'
  block_id: string
  label: PlainText
  element: PlainTextInputElement
  optional?: boolean
  hint?: PlainText
}

export type MessageBlock = HeaderBlock | SectionBlock | ContextBlock | ActionsBlock | DividerBlock
export type ModalBlock = HeaderBlock | SectionBlock | ContextBlock | DividerBlock | InputBlock

/** One Slack message: notification `text` plus the blocks people see. */
export interface SlackMessage {
  text: string
  blocks: MessageBlock[]
}

/** A modal view for `views.open`. */
export interface ModalView {
  type: 'modal'
  callback_id: string
  private_metadata: string
  title: PlainText
  submit?: PlainText
  close: PlainText
  notify_on_close?: boolean
  blocks: ModalBlock[]
}

/** Block Kit limits the renderers respect (docs/platform-limits.md#block-kit-and-views). */
export const SLACK_LIMITS = {
  blocksPerMessage: 50,
  blocksPerModal: 100,
  sectionText: 3000,
  headerText: 150,
  contextElements: 10,
  actionsElements: 25,
  buttonText: 75,
  actionId: 255,
  selectOptions: 100,
  optionGroups: 100,
  checkboxOptions: 10,
  optionText: 75,
  optionDescription: 75,
  optionValue: 150,
  placeholder: 150,
  inputLabel: 2000,
  inputMaxLength: 3000,
  modalTitle: 24,
  modalButton: 24,
  privateMetadata: 3000,
  callbackId: 255,
  /**
   * Slack refuses a message whose blocks hold about 13k characters in total (`msg_blocks_too_long`,
   * undocumented; bolt-js #2509). We stay well below it.
   */
  messageTextBudget: 11_000,
} as const

/** Characters of visible text in blocks, as counted against Slack's undocumented total. */
export function blockTextLength(blocks: readonly (MessageBlock | ModalBlock)[]): number {
  let total = 0
  for (const block of blocks) {
    switch (block.type) {
      case 'header':
      case 'section':
        total += block.text.text.length
        break
      case 'context':
        for (const el of block.elements) total += el.type === 'image' ? 0 : el.text.length
        break
      case 'actions':
        for (const el of block.elements) if (el.type === 'button') total += el.text.text.length
        break
      default:
        break
    }
  }
  return total
}
