/** The `/v1` API's responses as zod schemas, by OpenAPI component name (see openapi.ts). */
import { z } from 'zod'
import { permissionUpdateSchema } from '../hooks/schemas.js'
import {
  answerItemSchema,
  lateReplySchema,
  projectionViewSchema,
  questionsSchema,
} from '../protocol/schemas.js'

const callId = z.string().meta({ description: 'The call, unique per agent.' })
const agentId = z.string()

const errorSchema = z
  .strictObject({
    error: z.strictObject({
      name: z.string().meta({ description: '`UserQuestionError`, `HttpError` or `StorageError`.' }),
      code: z.string().meta({ description: 'What went wrong, stable: branch on it.' }),
      message: z.string(),
    }),
  })
  .meta({ description: 'Every error response.' })

const askResultSchema = z.union([
  z.strictObject({ answers: z.array(answerItemSchema), callId }),
  z.strictObject({ pending: z.literal(true), callId }),
])

const projectionPageSchema = z.strictObject({
  ...projectionViewSchema.shape,
  nextCursor: z.string().optional().meta({ description: 'Pass as `?cursor=` for the next page.' }),
})

const person = z.looseObject({ platform: z.string(), userId: z.string(), name: z.string().optional() })

const callSchema = z.strictObject({
  callId,
  agentId,
  questions: questionsSchema,
  state: z.enum(['open', 'continued', 'settled', 'dropped', 'answered', 'cancelled', 'elsewhere']),
  timed: z.boolean(),
  deadline: z.number().optional(),
  route: z.string().optional(),
  askedAt: z.number().optional(),
  answers: z.array(answerItemSchema).optional(),
  settledAt: z.number().optional(),
  dropCode: z.string().optional(),
  queuedReply: lateReplySchema.optional(),
  answeredBy: person.optional(),
  reason: z.string().optional().meta({ description: 'The reason typed with Approve or Reject.' }),
  card: z
    .strictObject({
      status: z.enum(['open', 'continued', 'answered', 'cancelled', 'elsewhere']),
      kind: z.enum(['questions', 'approval', 'plan-review']),
      quorum: z.number().int(),
      approvals: z.array(person),
      holders: z.array(person),
      answeredAt: z.number().optional(),
      closedReason: z.string().optional(),
      route: z.string().optional(),
    })
    .optional(),
  posts: z.array(z.strictObject({ platform: z.string(), destination: z.string(), postedAt: z.number() })),
})

const auditSchema = z.strictObject({
  events: z.array(
    z.strictObject({
      seq: z.number().int(),
      at: z.number(),
      agentId: z.string().optional(),
      callId: z.string().optional(),
      kind: z.string(),
      platform: z.string().optional(),
      actor: person.optional(),
      detail: z.unknown().optional(),
      refused: z.boolean().optional(),
      code: z.string().optional(),
      /** SHA-256 (hex) of what the person deciding was shown (docs/security.md). */
      shown: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
    }),
  ),
})

const elicitContent = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]),
)
const elicitResultSchema = z.union([
  z.strictObject({ action: z.literal('accept'), content: elicitContent }),
  z.strictObject({ action: z.enum(['decline', 'cancel']) }),
])

const hookOutputSchema = z.union([
  z.strictObject({}).meta({ description: 'No decision: Claude Code shows its own prompt.' }),
  z.strictObject({
    hookSpecificOutput: z.union([
      z.strictObject({
        hookEventName: z.literal('PermissionRequest'),
        decision: z.union([
          z.strictObject({
            behavior: z.literal('allow'),
            updatedPermissions: z.array(permissionUpdateSchema).optional(),
          }),
          z.strictObject({ behavior: z.literal('deny'), message: z.string() }),
        ]),
      }),
      z.strictObject({
        hookEventName: z.literal('PreToolUse'),
        permissionDecision: z.enum(['allow', 'deny']),
        permissionDecisionReason: z.string(),
      }),
      z.strictObject({
        hookEventName: z.literal('Elicitation'),
        action: z.literal('accept'),
        content: elicitContent,
      }),
      z.strictObject({ hookEventName: z.literal('Elicitation'), action: z.enum(['decline', 'cancel']) }),
    ]),
  }),
])

/** The response schemas by component name; `Error` is every 4xx/5xx body. */
export const RESPONSES = {
  Error: errorSchema,
  AskResult: askResultSchema,
  ProjectionPage: projectionPageSchema,
  Call: callSchema,
  Accepted: z.strictObject({ accepted: z.boolean() }),
  Cancelled: z.strictObject({ cancelled: z.literal(true), callId, agentId }),
  Replies: z.strictObject({ replies: z.array(lateReplySchema) }),
  Admitted: z.strictObject({ admitted: z.literal(true), callId }),
  Discarded: z.strictObject({ discarded: z.literal(true), callId }),
  Audit: auditSchema,
  HookOutput: hookOutputSchema,
  ElicitResult: elicitResultSchema,
  Health: z.strictObject({ ok: z.boolean() }),
  OpenApi: z.looseObject({ openapi: z.string() }),
}
