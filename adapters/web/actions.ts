import { z } from 'zod'
import type { CardAction, CardState } from '../../src/adapter-kit.js'
import { cleanText, LIMITS } from '../../src/adapter-kit.js'

const qid = z.string().min(1).max(LIMITS.idLength)
const label = z.string().max(LIMITS.labelLength)

/** The card actions the inbox page may send (the same vocabulary every platform decodes to). */
export const cardActionSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('choose'), questionId: qid, label }),
  z.strictObject({ type: z.literal('toggle'), questionId: qid, label }),
  z.strictObject({
    type: z.literal('set'),
    questionId: qid,
    labels: z.array(label).max(LIMITS.optionsPerQuestion),
  }),
  z.strictObject({
    type: z.literal('other'),
    questionId: qid,
    text: z.string().max(LIMITS.customLength * 2),
  }),
  z.strictObject({ type: z.literal('skip'), questionId: qid }),
  z.strictObject({ type: z.literal('submit') }),
  z.strictObject({
    type: z.literal('approve'),
    reason: z
      .string()
      .max(LIMITS.customLength * 2)
      .optional(),
  }),
  z.strictObject({
    type: z.literal('reject'),
    reason: z
      .string()
      .max(LIMITS.customLength * 2)
      .optional(),
  }),
  z.strictObject({ type: z.literal('always') }),
  z.strictObject({
    type: z.literal('decline'),
    feedback: z
      .string()
      .max(LIMITS.customLength * 2)
      .optional(),
  }),
  z.strictObject({ type: z.literal('hold') }),
  z.strictObject({ type: z.literal('release') }),
])

/** The body of `POST /inbox/api/cards/:callId/actions`. */
export const actionRequestSchema = z.strictObject({
  action: cardActionSchema,
  person: z.strictObject({ name: z.string().trim().max(80).optional() }).optional(),
  /** The page's own id for this click, so a retried request is applied once. */
  id: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{8,100}$/)
    .optional(),
})

/** The body of `POST /inbox/api/cards/:callId/hold`: the page still holds the wait. */
export const holdRequestSchema = z.strictObject({
  person: z.strictObject({ name: z.string().trim().max(80).optional() }).optional(),
})

// The schema and the card model must describe the same actions, both ways (a compile error
// otherwise). zod types an optional field as `?: T | undefined`; JSON never carries undefined.
type Sent = z.infer<typeof cardActionSchema>
type Defined<T> = { [K in keyof T]: Exclude<T[K], undefined> }
const _sameActions: [Defined<Sent>] extends [CardAction]
  ? [CardAction] extends [Sent]
    ? true
    : false
  : false = true

/**
 * The page shows labels cleaned for display (src/card/view.ts); an action names the card's own
 * label, so a cleaned label is mapped back to the option it stands for.
 */
export function withCardLabels(action: CardAction, card: CardState): CardAction {
  if (action.type !== 'choose' && action.type !== 'toggle' && action.type !== 'set') return action
  const options = card.questions.find((q) => q.id === action.questionId)?.options ?? []
  const real = (label: string) =>
    options.find((o) => o.label === label)?.label ??
    options.find((o) => cleanText(o.label) === label)?.label ??
    label
  return action.type === 'set'
    ? { ...action, labels: action.labels.map(real) }
    : { ...action, label: real(action.label) }
}
