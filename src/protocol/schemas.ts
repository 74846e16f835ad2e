import { z } from 'zod'
import { USER_QUESTION_ERROR_CODES } from './errors.js'

/** Limits askbridge enforces at ask time. Renderers truncate for display; labels stay the answer values. */
export const LIMITS = {
  /** @default 50 */
  questionsPerBatch: 50,
  /** @default 500 */
  optionsPerQuestion: 500,
  idLength: 200,
  labelLength: 10_000,
  questionLength: 10_000,
  headerLength: 1_000,
  detailLength: 200_000,
  customLength: 10_000,
} as const

const localized = z.record(z.string(), z.string()).refine((v) => typeof v.en === 'string', {
  message: 'localized text needs an "en" entry',
})

export const optionSchema = z.strictObject({
  label: z.string().trim().min(1, 'option label must not be empty').max(LIMITS.labelLength),
  description: z.string().max(LIMITS.labelLength).optional(),
})

export const intentSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('plan-review'),
    approve: z.string(),
    callId: z.string().optional(),
  }),
  z.strictObject({
    kind: z.literal('approval'),
    approve: z.string(),
    reject: z.string(),
    always: z.string().optional(),
    subject: z.strictObject({ name: z.string(), icon: z.string().optional() }).optional(),
    display: z
      .strictObject({
        question: localized,
        detail: localized.optional(),
        approve: localized.optional(),
      })
      .optional(),
  }),
])

export const questionSchema = z.strictObject({
  id: z.string().min(1, 'question id must not be empty').max(LIMITS.idLength),
  question: z.string().trim().min(1, 'question text must not be empty').max(LIMITS.questionLength),
  detail: z.string().max(LIMITS.detailLength).optional(),
  header: z.string().max(LIMITS.headerLength).optional(),
  options: z.array(optionSchema).max(LIMITS.optionsPerQuestion).optional(),
  multiSelect: z.boolean().optional(),
  intent: intentSchema.optional(),
})

export const questionsSchema = z.array(questionSchema).max(LIMITS.questionsPerBatch)

export const answerItemSchema = z.strictObject({
  id: z.string(),
  selected: z.array(z.string()),
  custom: z.string().max(LIMITS.customLength).optional(),
})

export const answerSchema = z.strictObject({ answers: z.array(answerItemSchema) })

export const pendingSchema = z.strictObject({ pending: z.literal(true), callId: z.string() })

export const timedResultSchema = z.union([answerSchema, pendingSchema])

/**
 * One agent's projection, as strict as the wire view: every row names a call (non-empty callId,
 * at most once across active and settled) and an active row has questions.
 */
export const projectionViewSchema = z
  .strictObject({
    active: z.array(
      z.strictObject({
        callId: z.string().min(1, 'callId must not be empty'),
        questions: questionsSchema.min(1, 'an active call has at least one question'),
        state: z.enum(['open', 'continued']),
      }),
    ),
    settled: z.array(
      z.strictObject({
        callId: z.string().min(1, 'callId must not be empty'),
        answers: z.array(answerItemSchema),
      }),
    ),
  })
  .superRefine((view, ctx) => {
    const seen = new Set<string>()
    for (const [list, rows] of [
      ['active', view.active],
      ['settled', view.settled],
    ] as const) {
      for (const [i, row] of rows.entries()) {
        if (seen.has(row.callId)) {
          ctx.addIssue({
            code: 'custom',
            path: [list, i, 'callId'],
            message: `callId "${row.callId}" appears more than once`,
          })
        }
        seen.add(row.callId)
      }
    }
  })

export const lateReplySchema = z.strictObject({
  source: z.literal('user-question-reply'),
  outcome: z.literal('answered'),
  payload: z.strictObject({
    kind: z.literal('answer_to_pending_question'),
    tool: z.literal('ask_user_question'),
    callId: z.string(),
    questions: questionsSchema,
    answers: z.array(answerItemSchema),
  }),
})

export const serializedErrorSchema = z.strictObject({
  name: z.literal('UserQuestionError'),
  code: z.enum(USER_QUESTION_ERROR_CODES),
  message: z.string(),
})

/** Render a zod error as one line naming each problem with its path. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length ? issue.path.map(String).join('.') : '(root)'
      return `${path}: ${issue.message}`
    })
    .join('; ')
}
