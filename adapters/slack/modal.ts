/**
 * Modals as pure functions: the "Other…" / "Answer…" text form, the plan's "Decline with
 * feedback…" form, and a notice view for a form that cannot be used.
 *
 * The call and question travel in `callback_id` through the shared codec (so listeners match them)
 * and again in `private_metadata` with the channel the card lives in (for private notices after
 * the modal has closed).
 */

import type { CardState } from '../../src/adapter-kit.js'
import { cardRef, decodeComponentId, encodeComponentId, pickLocale } from '../../src/adapter-kit.js'
import { type ModalView, type PlainText, SLACK_LIMITS } from './blocks.js'
import { markdownToMrkdwn } from './markdown.js'
import { escapeMrkdwnCut, truncateMrkdwn, truncatePlain } from './text.js'

/** Block and action ids of the modal inputs (what `view.state.values` is keyed by). */
export const MODAL_INPUT = { block: 'answer', action: 'text' } as const

/** What a modal remembers about where it came from. */
export interface ModalMetadata {
  /** The codec id (same as the view's callback_id). */
  id: string
  /** Channel of the card message, for private notices after submission. */
  channel?: string
}

const plain = (text: string): PlainText => ({ type: 'plain_text', text, emoji: true })

/**
 * What every askbridge form shares: its id in `callback_id` and `private_metadata` (with the
 * channel to answer in), and `notify_on_close`, so closing it releases a held timed wait.
 */
function formFrame(callbackId: string, channel: string | undefined, title: string, submit: string) {
  return {
    type: 'modal' as const,
    callback_id: callbackId,
    private_metadata: encodeModalMetadata({ id: callbackId, ...(channel ? { channel } : {}) }),
    title: plain(title),
    submit: plain(submit),
    close: plain('Cancel'),
    notify_on_close: true,
  }
}

export function encodeModalMetadata(meta: ModalMetadata): string {
  const json = JSON.stringify(meta)
  if (json.length > SLACK_LIMITS.privateMetadata) throw new RangeError('private_metadata too long')
  return json
}

export function decodeModalMetadata(raw: string | undefined): ModalMetadata | undefined {
  if (!raw) return undefined
  try {
    const value: unknown = JSON.parse(raw)
    if (typeof value !== 'object' || value === null) return undefined
    const { id, channel } = value as Record<string, unknown>
    if (typeof id !== 'string' || !decodeComponentId(id)) return undefined
    return typeof channel === 'string' ? { id, channel } : { id }
  } catch {
    return undefined
  }
}

/** The free-text form for question `q` ("Other…" on an option list, "Answer…" on a free-text question). */
export function otherModal(card: CardState, q: number, channel?: string, locale?: string): ModalView {
  const question = card.questions[q]
  if (!question) throw new RangeError(`question ${q} is not on card ${card.callId}`)
  const callbackId = encodeComponentId({ ...cardRef(card), verb: 'other', q }, SLACK_LIMITS.callbackId)
  const freeText = (question.options ?? []).length === 0
  const draft = card.drafts[question.id]
  const text =
    question.intent?.kind === 'approval'
      ? (pickLocale(question.intent.display?.question, locale) ?? question.question)
      : question.question
  return {
    ...formFrame(callbackId, channel, freeText ? 'Your answer' : 'Other answer', 'Send'),
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: truncateMrkdwn(markdownToMrkdwn(text), SLACK_LIMITS.sectionText - 60),
        },
      },
      ...(question.multiSelect
        ? [
            {
              type: 'context' as const,
              elements: [
                {
                  type: 'mrkdwn' as const,
                  text: 'Your text is sent along with the options ticked on the card.',
                },
              ],
            },
          ]
        : []),
      {
        type: 'input',
        block_id: MODAL_INPUT.block,
        label: plain(truncatePlain(question.header ? `${question.header}` : 'Answer', 2000)),
        element: {
          type: 'plain_text_input',
          action_id: MODAL_INPUT.action,
          multiline: true,
          max_length: SLACK_LIMITS.inputMaxLength,
          ...(draft?.custom ? { initial_value: draft.custom.slice(0, SLACK_LIMITS.inputMaxLength) } : {}),
        },
      },
    ],
  }
}

/** The plan review's decline form; feedback is optional (empty declines with the plain option). */
export function declineModal(card: CardState, channel?: string): ModalView {
  const callbackId = encodeComponentId({ ...cardRef(card), verb: 'decline', q: 0 }, SLACK_LIMITS.callbackId)
  const question = card.questions[0]
  return {
    ...formFrame(callbackId, channel, 'Decline plan', 'Decline'),
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*${escapeMrkdwnCut(question?.question ?? 'Plan review', SLACK_LIMITS.sectionText - 2)}*`,
        },
      },
      {
        type: 'input',
        block_id: MODAL_INPUT.block,
        optional: true,
        label: plain('What should change?'),
        hint: plain('The agent receives this as your answer.'),
        element: {
          type: 'plain_text_input',
          action_id: MODAL_INPUT.action,
          multiline: true,
          max_length: 3000,
        },
      },
    ],
  }
}

/** An approval decided with a typed reason; the reason is optional (empty decides without one). */
export function reasonModal(card: CardState, verb: 'approve' | 'reject', channel?: string): ModalView {
  const callbackId = encodeComponentId({ ...cardRef(card), verb, q: 0 }, SLACK_LIMITS.callbackId)
  const question = card.questions[0]
  const intent = question?.intent?.kind === 'approval' ? question.intent : undefined
  const decision =
    (verb === 'approve' ? intent?.approve : intent?.reject) ?? (verb === 'approve' ? 'Approve' : 'Reject')
  return {
    ...formFrame(
      callbackId,
      channel,
      truncatePlain(`${decision} with reason`, 24),
      truncatePlain(decision, 24),
    ),
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*${escapeMrkdwnCut(question?.question ?? 'Approval', SLACK_LIMITS.sectionText - 2)}*`,
        },
      },
      {
        type: 'input',
        block_id: MODAL_INPUT.block,
        optional: true,
        label: plain('Reason'),
        hint: plain('Optional. Kept with the decision and sent to the agent; the answer stays the button.'),
        element: {
          type: 'plain_text_input',
          action_id: MODAL_INPUT.action,
          multiline: true,
          max_length: 3000,
        },
      },
    ],
  }
}

/** A modal that only says why the form cannot be used (the card finished meanwhile, or not allowed). */
export function noticeModal(card: Pick<CardState, 'agentId' | 'callId'>, message: string): ModalView {
  const callbackId = encodeComponentId({ ...cardRef(card), verb: 'form' }, SLACK_LIMITS.callbackId)
  return {
    type: 'modal',
    callback_id: callbackId,
    private_metadata: encodeModalMetadata({ id: callbackId }),
    title: plain('askbridge'),
    close: plain('Close'),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwnCut(message, SLACK_LIMITS.sectionText) } },
    ],
  }
}
