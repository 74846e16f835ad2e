/**
 * Modals: "Other…" / "Answer…" free text and plan review's "Decline with feedback". Pure.
 * The text input sits inside a Label component (type 18), the current modal layout; the question
 * is repeated in a Text Display so the person sees what they answer.
 */
import {
  type APIModalInteractionResponseCallbackData,
  type APITextInputComponent,
  ComponentType,
  TextInputStyle,
} from 'discord.js'
import type { CardState } from '../../src/adapter-kit.js'
import { cardRef, encodeComponentId } from '../../src/adapter-kit.js'
import { DISCORD_LIMITS as L } from './limits.js'
import { markdownToDiscord } from './markdown.js'
import { clamp, escapeInline, escapeMentions, splitMarkdown } from './text.js'

/** The custom_id of the one text input in our modals. */
export const MODAL_TEXT_ID = 'text'

/** Question text shown in the modal; the full question stays on the card. */
const QUESTION_PREVIEW = 1000

/**
 * The question as a modal shows it: a text display renders markdown, masked links included, so
 * it is printed from the one parsed tree like the card (escaped, links under the core's rules)
 * and cut like markdown (a code fence cut open would turn the code's text into live markup).
 */
function preview(question: string): string {
  const [first = '', ...rest] = splitMarkdown(markdownToDiscord(question), QUESTION_PREVIEW - 2)
  if (first === '') return escapeInline(clamp(question, QUESTION_PREVIEW / 2)) || '…' // markdown that prints nothing
  return rest.length ? `${first} …` : first
}

/** The modal for a free-text answer ("Other…" on an option question, "Answer…" on a free-text one). */
export function otherModal(card: CardState, qi: number): APIModalInteractionResponseCallbackData {
  const question = card.questions[qi]
  if (!question) throw new RangeError(`question ${qi} is not on card ${card.callId}`)
  const hasOptions = (question.options?.length ?? 0) > 0
  const current = card.drafts[question.id]?.custom
  const input: APITextInputComponent = {
    type: ComponentType.TextInput,
    custom_id: MODAL_TEXT_ID,
    style: TextInputStyle.Paragraph,
    required: true,
    min_length: 1,
    max_length: L.textInputMax,
  }
  if (current) input.value = current.slice(0, L.textInputMax)
  return {
    custom_id: encodeComponentId({ ...cardRef(card), verb: 'form', q: qi }, L.customId),
    title: clamp(
      question.header
        ? `${hasOptions ? 'Other: ' : ''}${escapeMentions(question.header)}`
        : hasOptions
          ? 'Other answer'
          : 'Your answer',
      L.modalTitle,
    ),
    components: [
      {
        type: ComponentType.TextDisplay,
        content: preview(question.question),
      },
      {
        type: ComponentType.Label,
        label: hasOptions ? 'Your own answer' : 'Your answer',
        component: input,
      },
    ],
  }
}

/** The one free-text field of the reason and feedback forms: optional, a paragraph, at the limit. */
function optionalParagraph(label: string, description: string) {
  return {
    type: ComponentType.Label,
    label,
    description,
    component: {
      type: ComponentType.TextInput,
      custom_id: MODAL_TEXT_ID,
      style: TextInputStyle.Paragraph,
      required: false,
      max_length: L.textInputMax,
    },
  } as const
}

/** An approval decided with a typed reason; the reason is optional (empty decides without one). */
export function reasonModal(
  card: CardState,
  verb: 'approve' | 'reject',
): APIModalInteractionResponseCallbackData {
  const question = card.questions[0]
  const intent = question?.intent?.kind === 'approval' ? question.intent : undefined
  const decision =
    (verb === 'approve' ? intent?.approve : intent?.reject) ?? (verb === 'approve' ? 'Approve' : 'Reject')
  return {
    custom_id: encodeComponentId({ ...cardRef(card), verb, q: 0 }, L.customId),
    title: clamp(`${escapeMentions(decision)} with reason`, L.modalTitle),
    components: [
      {
        type: ComponentType.TextDisplay,
        content: preview(question?.question ?? 'Approval'),
      },
      optionalParagraph('Reason', 'Optional. Kept with the decision and sent to the agent.'),
    ],
  }
}

/** Plan review: decline, with optional feedback that becomes the answer's `custom`. */
export function declineModal(card: CardState, qi: number): APIModalInteractionResponseCallbackData {
  const question = card.questions[qi]
  if (!question) throw new RangeError(`question ${qi} is not on card ${card.callId}`)
  return {
    custom_id: encodeComponentId({ ...cardRef(card), verb: 'decline', q: qi }, L.customId),
    title: 'Decline with feedback',
    components: [
      {
        type: ComponentType.TextDisplay,
        content: preview(question.question),
      },
      optionalParagraph('What should change?', 'Optional. The agent receives this as your answer.'),
    ],
  }
}
