/**
 * The outside shapes askbridge accepts from Claude Code hooks and MCP hosts, validated at the
 * boundary. Each schema names the document it follows; unknown extra fields are tolerated
 * (Claude Code adds fields between releases), missing or mistyped known ones are refused.
 */
import { z } from 'zod'

// Common input fields of every hook event.
// Source: https://code.claude.com/docs/en/hooks#common-input-fields
const common = {
  session_id: z.string().min(1).max(200),
  transcript_path: z.string().nullable().optional(),
  cwd: z.string().optional(),
  permission_mode: z.string().optional(),
  agent_id: z.string().optional(),
  agent_type: z.string().optional(),
}

// A permission update entry, as in `permission_suggestions` (input) and `updatedPermissions`
// (output): `type` decides the other fields; `destination` is session, localSettings,
// projectSettings or userSettings. askbridge echoes the one suggestion a person picks back
// unchanged. A `type` this version does not know (new ones come with new Claude Code releases)
// is read, and passed over when the card is built (see grantableUpdateSchema): never offered,
// never refused.
// Source: https://code.claude.com/docs/en/hooks#permission-update-entries
export const permissionUpdateSchema = z.looseObject({
  type: z.string().min(1).max(100),
  rules: z.array(z.looseObject({ toolName: z.string(), ruleContent: z.string().optional() })).optional(),
  behavior: z.enum(['allow', 'deny', 'ask']).optional(),
  destination: z.string().optional(),
  mode: z.string().nullable().optional(),
  directories: z.array(z.string()).optional(),
})
export type PermissionUpdate = z.infer<typeof permissionUpdateSchema>

// A suggestion askbridge may grant: a known type with the fields that type needs, a documented
// destination and behavior. Suggestions that do not read this way are passed over, never granted.
// Source: https://code.claude.com/docs/en/hooks#permission-update-entries
const DESTINATIONS = ['userSettings', 'projectSettings', 'localSettings', 'session', 'cliArg'] as const
const MODES = ['default', 'acceptEdits', 'bypassPermissions', 'plan', 'dontAsk', 'auto'] as const
const destination = z.enum(DESTINATIONS)
const ruleUpdate = {
  rules: z.array(z.object({ toolName: z.string(), ruleContent: z.string().optional() })),
  behavior: z.enum(['allow', 'deny', 'ask']),
  destination,
}
const directoryUpdate = { directories: z.array(z.string()), destination }
export const grantableUpdateSchema = z.discriminatedUnion('type', [
  z.object({ type: z.enum(['addRules', 'replaceRules', 'removeRules']), ...ruleUpdate }),
  z.object({ type: z.literal('setMode'), mode: z.enum(MODES), destination }),
  z.object({ type: z.enum(['addDirectories', 'removeDirectories']), ...directoryUpdate }),
])
type Destination = (typeof DESTINATIONS)[number]
/** A grantable update as Claude Code reads it (no `undefined` where a field may be absent). */
export type GrantableUpdate =
  | {
      type: 'addRules' | 'replaceRules' | 'removeRules'
      rules: Array<{ toolName: string; ruleContent?: string }>
      behavior: 'allow' | 'deny' | 'ask'
      destination: Destination
    }
  | { type: 'setMode'; mode: (typeof MODES)[number]; destination: Destination }
  | { type: 'addDirectories' | 'removeDirectories'; directories: string[]; destination: Destination }

const toolInput = z.record(z.string(), z.unknown())
// The MCP server behind an `mcp__server__tool` call: its name and where it was configured.
// Source: the McpServerProvenance type of @anthropic-ai/claude-agent-sdk (`mcp_server`).
const mcpServer = z.looseObject({ name: z.string().max(500), source: z.string().max(100) }).optional()

// PermissionRequest input: tool_name, tool_input, optional permission_suggestions (the "always
// allow" choices the dialog would offer).
// Source: https://code.claude.com/docs/en/hooks#permissionrequest-input
export const permissionRequestSchema = z.looseObject({
  ...common,
  hook_event_name: z.literal('PermissionRequest'),
  tool_name: z.string().min(1).max(500),
  tool_input: toolInput,
  permission_suggestions: z.array(permissionUpdateSchema).optional(),
  mcp_server: mcpServer,
})

// PreToolUse input: tool_name, tool_input, tool_use_id.
// Source: https://code.claude.com/docs/en/hooks#pretooluse-input
export const preToolUseSchema = z.looseObject({
  ...common,
  hook_event_name: z.literal('PreToolUse'),
  tool_name: z.string().min(1).max(500),
  tool_input: toolInput,
  tool_use_id: z.string().optional(),
  mcp_server: mcpServer,
})

// Elicitation input: mcp_server_name, message, mode (form | url), url, elicitation_id,
// requested_schema (the MCP requestedSchema).
// Source: https://code.claude.com/docs/en/hooks#elicitation-input
export const elicitationHookSchema = z.looseObject({
  ...common,
  hook_event_name: z.literal('Elicitation'),
  mcp_server_name: z.string().max(500).optional(),
  message: z.string().max(10_000),
  mode: z.enum(['form', 'url']).optional(),
  url: z.string().optional(),
  elicitation_id: z.string().optional(),
  requested_schema: z.unknown().optional(),
})

// Notification input: message, optional title, notification_type.
// Source: https://code.claude.com/docs/en/hooks#notification-input
export const notificationSchema = z.looseObject({
  ...common,
  hook_event_name: z.literal('Notification'),
  message: z.string().max(10_000),
  title: z.string().max(1_000).optional(),
  notification_type: z.string().optional(),
})

// Stop input: stop_hook_active, last_assistant_message.
// Source: https://code.claude.com/docs/en/hooks#stop-input
export const stopSchema = z.looseObject({
  ...common,
  hook_event_name: z.literal('Stop'),
  stop_hook_active: z.boolean().optional(),
  last_assistant_message: z.string().optional(),
})

// ElicitationResult input: the person's answer to an MCP form, after it was given (askbridge
// records it in the audit log and decides nothing).
// Source: https://code.claude.com/docs/en/hooks#elicitationresult-input
export const elicitationResultSchema = z.looseObject({
  ...common,
  hook_event_name: z.literal('ElicitationResult'),
  mcp_server_name: z.string().max(500).optional(),
  elicitation_id: z.string().optional(),
  mode: z.enum(['form', 'url']).optional(),
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
})

export const hookInputSchema = z.discriminatedUnion('hook_event_name', [
  permissionRequestSchema,
  preToolUseSchema,
  elicitationHookSchema,
  elicitationResultSchema,
  notificationSchema,
  stopSchema,
])
export const HOOK_EVENTS = [
  'PermissionRequest',
  'PreToolUse',
  'Elicitation',
  'ElicitationResult',
  'Notification',
  'Stop',
] as const

// Claude Code's AskUserQuestion tool input: one to four questions, each with a short header,
// two to four options (label and description) and multiSelect; "Other" is never an option.
// askbridge accepts one option too, and refuses duplicate question texts (the answers are keyed
// by question text) and duplicate labels within a question.
// Source: the AskUserQuestionInput type of @anthropic-ai/claude-agent-sdk (sdk-tools.d.ts).
export const askUserQuestionInputSchema = z
  .looseObject({
    questions: z
      .array(
        z.looseObject({
          question: z.string().trim().min(1).max(2_000),
          header: z.string().max(200).optional(),
          options: z
            .array(
              z.looseObject({
                label: z.string().trim().min(1).max(500),
                description: z.string().max(2_000).optional(),
              }),
            )
            .min(1, 'each question needs at least one option')
            .max(4, 'a question has at most four options'),
          multiSelect: z.boolean().optional(),
        }),
      )
      .min(1, 'AskUserQuestion needs at least one question')
      .max(4, 'AskUserQuestion asks at most four questions'),
  })
  .superRefine((input, ctx) => {
    const texts = input.questions.map((q) => q.question.trim())
    const twice = texts.find((t, i) => texts.indexOf(t) !== i)
    if (twice !== undefined)
      ctx.addIssue({ code: 'custom', path: ['questions'], message: `the question "${twice}" is asked twice` })
    for (const [i, q] of input.questions.entries()) {
      const labels = q.options.map((o) => o.label.trim())
      const dup = labels.find((l, k) => labels.indexOf(l) !== k)
      if (dup !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['questions', i, 'options'],
          message: `the option "${dup}" appears twice`,
        })
    }
  })

// The MCP elicitation request (`elicitation/create` params, form mode): message and
// requestedSchema. The schema's own restrictions are checked by `elicitationQuestions`.
// Source: https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation
export const elicitRequestSchema = z.strictObject({
  message: z.string().max(10_000),
  requestedSchema: z.unknown().optional(),
  /** "url" is refused with a reason (see answerElicitation); the fields it brings are read. */
  mode: z.enum(['form', 'url']).optional(),
  url: z.string().optional(),
  elicitationId: z.string().optional(),
  /** MCP request metadata: accepted, not used. */
  _meta: z.record(z.string(), z.unknown()).optional(),
  /** A task-augmented request (2025-11-25): accepted; askbridge answers it directly. */
  task: z.looseObject({ ttl: z.number().optional() }).optional(),
  /** askbridge: stop waiting after this many ms and answer `cancel`. */
  timeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
  /** askbridge: an explicit route from the routes file. */
  route: z.string().min(1).max(200).optional(),
  /** askbridge: who asks (routes match it; the card shows it). */
  agentId: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
    .optional(),
})
export type ElicitRequest = z.infer<typeof elicitRequestSchema>

/**
 * The MCP elicitation result: `action` accept (with `content`), decline or cancel; content
 * values are strings, numbers, booleans or arrays of strings.
 * Source: https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation#response-actions
 */
export type ElicitContent = Record<string, string | number | boolean | string[]>
export type ElicitResult =
  | { action: 'accept'; content: ElicitContent }
  | { action: 'decline' }
  | { action: 'cancel' }

/** A PreToolUse decision; "ask" hands the call to Claude Code's own prompt. */
export type PreToolUseDecision = 'allow' | 'deny' | 'ask'

/**
 * What a hook answers. `{}` is "no decision": Claude Code goes on as if no hook had answered.
 * `continue: false` with `stopReason` stops the agent (the reviewer's "Reject and stop").
 * Source: https://code.claude.com/docs/en/hooks#json-output and
 * #permissionrequest-decision-control, #pretooluse-decision-control, #elicitation-output.
 */
export interface HookOutput {
  continue?: false
  stopReason?: string
  hookSpecificOutput?:
    | {
        hookEventName: 'PermissionRequest'
        decision:
          | {
              behavior: 'allow'
              updatedInput?: Record<string, unknown>
              updatedPermissions?: GrantableUpdate[]
            }
          | { behavior: 'deny'; message: string; interrupt?: true }
      }
    | {
        hookEventName: 'PreToolUse'
        permissionDecision: PreToolUseDecision
        permissionDecisionReason: string
        updatedInput?: Record<string, unknown>
      }
    | ({ hookEventName: 'Elicitation' } & ElicitResult)
}
