/**
 * Card view -> one Teams message with an Adaptive Card (schema 1.5, Universal Actions). Pure: no
 * I/O, no clock. The card view (src/card/view.ts) decides what the card offers and says; this
 * file only lays it out.
 *
 * The whole batch is one card. Inputs live inside the card: a pick among few options is a row of
 * buttons, a longer or multi-select pick is an Input.ChoiceSet with a Save button, and every form
 * of the view ("Other…", "Approve with reason…", "Decline with feedback…") is an Input.Text with
 * its own inline Send. Every button is an Action.Execute whose data carries the component id
 * (src/card/codec.ts) under `askbridge`; inputs are named by their component ids, so Submit
 * carries every input of the card with it.
 *
 * Universal Actions' refresh: when the card names who may answer in Teams (at most 60 people),
 * the card everyone sees keeps the questions and the status without controls, and its `refresh`
 * lets Teams fetch the card with controls for those people alone (an `adaptiveCard/action` invoke
 * with the verb `refresh`, answered by the adapter). Otherwise every copy has the controls.
 *
 * A message over Teams' size limit is never sent: the card is cut down (question text shortened,
 * details dropped) with a link to the inbox, and to a bare card with the link if that is still
 * too large.
 */

import type { CardState, Control, ControlRef, Person, Tone } from '../../src/adapter-kit.js'
import {
  type CardView,
  type ComponentRef,
  cardRef,
  cardView,
  encodeComponentId,
  type QuestionView,
  type StatusLine,
  statusText,
} from '../../src/adapter-kit.js'
import {
  ACTION_KEY,
  ACTION_VERB,
  type AdaptiveCard,
  CARD_CONTENT_TYPE,
  CARD_KEY,
  type ExecuteAction,
  type MentionEntity,
  REFRESH_VERB,
  type Refresh,
  type RenderOptions,
  type TeamsMessage,
} from './card-schema.js'
import { TEAMS_LIMITS as L } from './limits.js'
import { markdownToTeams, type TextBlock } from './markdown.js'
import { clamp, plain } from './text.js'

type Json = object

/** The refresh a card gets, or undefined when every copy shows the controls. */
function refreshOf(view: CardView, card: CardState, options: RenderOptions): Refresh | undefined {
  const ids = [...new Set(options.refresh?.userIds ?? [])]
  const open = view.footer.length > 0 || view.questions.some((q) => q.controls.length > 0)
  if (!open || ids.length === 0 || ids.length > L.refreshUserIds) return undefined
  const { callId, agent } = cardRef(card)
  return {
    action: {
      type: 'Action.Execute',
      title: 'Refresh',
      verb: REFRESH_VERB,
      data: { [CARD_KEY]: { callId, agent } },
    },
    userIds: ids,
  }
}

const STYLE: Record<Tone, NonNullable<ExecuteAction['style']>> = {
  primary: 'positive',
  danger: 'destructive',
  neutral: 'default',
}

/** Few enough single-select options to show as buttons. */
const OPTION_BUTTONS = 5
/** Question text kept on a card cut down to fit. */
const CUT_TEXT = 500

type CallRef = ReturnType<typeof cardRef>

export const componentId = (call: CallRef, ref: ControlRef): string =>
  encodeComponentId({ ...call, ...ref } as ComponentRef & CallRef, 200)

function execute(call: CallRef, ref: ControlRef, title: string, tone: Tone): ExecuteAction {
  return {
    type: 'Action.Execute',
    title: clamp(title, L.buttonTitle) || '…',
    verb: ACTION_VERB,
    data: { [ACTION_KEY]: componentId(call, ref) },
    style: STYLE[tone],
  }
}

function personName(person: Person | undefined): string {
  return person ? plain(clamp(person.name ?? person.userId, 80)) : 'someone'
}

const names = (people: readonly Person[]) =>
  [
    ...people.slice(0, 10).map((p) => personName(p)),
    ...(people.length > 10 ? [`${people.length - 10} more`] : []),
  ].join(', ')

function statusBlock(line: StatusLine): TextBlock {
  const text = statusText(line, {
    people: names,
    time: (ms) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    text: (raw) => plain(clamp(raw, 300)),
  })
  const color =
    line.kind === 'outcome'
      ? line.tone === 'ok'
        ? 'Good'
        : 'Attention'
      : line.kind === 'continued'
        ? 'Warning'
        : undefined
  return { type: 'TextBlock', text, wrap: true, ...(color ? { color } : {}), isSubtle: color === undefined }
}

type Picker = Extract<Control, { kind: 'options' }>

function pickerWidgets(call: CallRef, picker: Picker, batch: boolean): Json[] {
  if (picker.mode === 'one' && picker.options.length <= OPTION_BUTTONS) {
    return [
      {
        type: 'ActionSet',
        actions: picker.options.map((o) =>
          execute(
            call,
            { verb: 'choose', q: picker.q, o: o.index },
            o.label,
            o.chosen ? 'primary' : 'neutral',
          ),
        ),
      },
    ]
  }
  const ref: ControlRef = { verb: picker.mode === 'any' ? 'set' : 'choose', q: picker.q }
  const id = componentId(call, ref)
  const chosen = picker.options.filter((o) => o.chosen).map((o) => String(o.index))
  return [
    {
      type: 'Input.ChoiceSet',
      id,
      label: clamp(picker.prompt, L.buttonTitle),
      isMultiSelect: picker.mode === 'any',
      style: picker.mode === 'any' && picker.options.length <= 10 ? 'expanded' : 'compact',
      ...(chosen.length ? { value: chosen.join(',') } : {}),
      choices: picker.options.map((o) => ({
        title: clamp(o.description ? `${o.label} — ${o.description}` : o.label, 200) || '…',
        value: String(o.index),
      })),
    },
    {
      type: 'ActionSet',
      actions: [execute(call, ref, picker.mode === 'one' && !batch ? 'Send' : 'Save', 'primary')],
    },
  ]
}

function formWidget(call: CallRef, control: Extract<Control, { kind: 'form' }>): Json {
  const id = componentId(call, control.ref)
  return {
    type: 'Input.Text',
    id,
    placeholder: clamp(control.label.replace(/…$/, ''), L.buttonTitle),
    isMultiline: true,
    maxLength: 2000,
    inlineAction: execute(call, control.ref, 'Send', control.tone),
  }
}

function questionState(q: QuestionView): TextBlock | undefined {
  const s = q.status
  const answer = (selected: readonly string[], custom: string | undefined, lead: string, label?: string) => {
    const parts: string[] = []
    if (selected.length) parts.push(selected.map((x) => plain(x)).join(', '))
    if (custom !== undefined)
      parts.push(label === 'Feedback' ? `**Feedback:** “${plain(custom)}”` : `“${plain(custom)}”`)
    return `${lead} ${parts.length ? parts.join(' + ') : '_skipped_'}`
  }
  const by = (p: Person | undefined) => (p ? ` _(by ${personName(p)})_` : '')
  let text: string | undefined
  switch (s.kind) {
    case 'none':
      return undefined
    case 'unanswered':
      text = '**Answer:** _none_'
      break
    case 'skipped':
      text = `_Skipped${s.by ? ` by ${personName(s.by)}` : ''}_`
      break
    case 'draft':
      text = answer(s.selected, s.custom, '**Selected:**') + by(s.by)
      break
    case 'answer':
      text = answer(s.selected, s.custom, '**Answer:**', s.customLabel)
      break
  }
  return { type: 'TextBlock', text, wrap: true }
}

interface Shape {
  /** Keep details (markdown) under the question. */
  details: boolean
  /** Shorten question text to this many characters. */
  textMax?: number
  /** Keep the controls. */
  controls: boolean
  /** Say the card was cut down, with a link to the inbox when known. */
  cut: boolean
}

function questionBody(view: CardView, q: QuestionView, call: CallRef, shape: Shape): Json[] {
  const out: Json[] = []
  const container: Json[] = []
  if (q.subject)
    container.push({ type: 'TextBlock', text: plain(q.subject.name), wrap: true, isSubtle: true })
  if (q.header && view.questions.length > 1)
    container.push({ type: 'TextBlock', text: plain(q.header), wrap: true, isSubtle: true, size: 'Small' })
  const raw = q.number !== undefined ? `${q.number}. ${q.text}` : q.text
  const text =
    shape.textMax !== undefined && raw.length > shape.textMax ? `${raw.slice(0, shape.textMax - 1)}…` : raw
  container.push({ type: 'TextBlock', text: plain(text), wrap: true, weight: 'Bolder' })
  if (q.detail && shape.details) container.push(...markdownToTeams(q.detail))
  const state = questionState(q)
  if (state) container.push(state)
  if (shape.controls) {
    const buttons: ExecuteAction[] = []
    for (const c of q.controls) {
      if (c.kind === 'options') {
        if (buttons.length) container.push({ type: 'ActionSet', actions: buttons.splice(0) })
        container.push(...pickerWidgets(call, c, view.questions.length > 1))
      } else if (c.kind === 'form') container.push(formWidget(call, c))
      else buttons.push(execute(call, c.ref, c.label, c.tone))
    }
    if (buttons.length) container.push({ type: 'ActionSet', actions: buttons })
  }
  out.push({ type: 'Container', separator: q.index > 0, spacing: 'Medium', items: container })
  return out
}

function build(
  view: CardView,
  card: CardState,
  options: RenderOptions,
  shape: Shape,
  refresh: Refresh | undefined,
): TeamsMessage {
  const call = cardRef(card)
  const body: Json[] = [
    { type: 'TextBlock', text: plain(view.title), wrap: true, size: 'Medium', weight: 'Bolder' },
  ]
  const mentions = [...new Map((options.mentions ?? []).map((m) => [m.id, m])).values()].slice(0, 20)
  const entities: MentionEntity[] = mentions.map((m) => ({
    type: 'mention',
    // The name is the platform's display name, escaped like any text (it cannot close the tag).
    text: `<at>${clamp(m.name, 80).replace(/[<>]/g, '')}</at>`,
    mentioned: { id: m.id, name: clamp(m.name, 80) },
  }))
  if (entities.length)
    body.push({ type: 'TextBlock', text: entities.map((e) => e.text).join(' '), wrap: true })
  for (const q of view.questions) body.push(...questionBody(view, q, call, shape))
  for (const line of view.statusLines) body.push(statusBlock(line))
  if (view.oncall) body.push({ type: 'TextBlock', text: plain(view.oncall), wrap: true, isSubtle: true })
  body.push({
    type: 'TextBlock',
    text: plain(`${view.agentId} · ${view.callId}`),
    wrap: true,
    isSubtle: true,
    size: 'Small',
  })
  const actions: Json[] = []
  if (shape.cut) {
    body.push({
      type: 'TextBlock',
      text: options.inboxUrl
        ? 'This question is too long for a Teams card; the whole question is in the inbox.'
        : 'This question is too long for a Teams card; it is shortened here.',
      wrap: true,
      color: 'Warning',
    })
    if (options.inboxUrl)
      actions.push({ type: 'Action.OpenUrl', title: 'Open in the inbox', url: options.inboxUrl })
  }
  if (shape.controls)
    for (const c of view.footer) if (c.kind === 'button') actions.push(execute(call, c.ref, c.label, c.tone))
  const content: AdaptiveCard = {
    type: 'AdaptiveCard',
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    version: L.cardVersion,
    body,
    ...(actions.length ? { actions } : {}),
    ...(refresh ? { refresh } : {}),
    msteams: { width: 'Full', ...(entities.length ? { entities } : {}) },
  }
  return {
    type: 'message',
    attachments: [{ contentType: CARD_CONTENT_TYPE, content }],
  }
}

/** The bytes Teams counts for a message (its JSON, UTF-8). */
export function messageBytes(message: TeamsMessage): number {
  return Buffer.byteLength(JSON.stringify(message), 'utf8')
}

/** The card as one Teams message, within the size limit (see the module comment). */
export function cardToTeamsMessage(card: CardState, options: RenderOptions = {}): TeamsMessage {
  const view = cardView(card, options.locale)
  const max = options.maxBytes ?? L.messageBytes
  const refresh = refreshOf(view, card, options)
  // With a refresh, only the copy for one of its people has the controls.
  const controls = !refresh || options.refresh?.actionable === true
  const shapes: Shape[] = [
    { details: true, controls, cut: false },
    { details: false, textMax: CUT_TEXT, controls, cut: true },
    { details: false, textMax: 100, controls: false, cut: true },
  ]
  let message: TeamsMessage | undefined
  for (const shape of shapes) {
    message = build(view, card, options, shape, refresh)
    if (messageBytes(message) <= max) return message
  }
  // Still too large (hundreds of questions): the title and the link alone.
  const bare = build(
    { ...view, questions: [], statusLines: [], footer: [] },
    card,
    options,
    { details: false, controls: false, cut: true },
    undefined,
  )
  return bare
}
