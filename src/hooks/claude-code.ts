/**
 * Claude Code hook payloads -> question batches (planHook), by event; the answers' side is in output.ts.
 * Pure functions; src/hooks/run.ts asks the batch and waits.
 * Hook reference: https://code.claude.com/docs/en/hooks
 */

import { describeZodError } from '../protocol/schemas.js'
import { planQuestions, planReview } from './agent-tools.js'
import { planApproval } from './approval.js'
import { DIALECTS, type HookClient } from './dialects.js'
import { elicitationForm } from './elicit.js'
import { HookError } from './errors.js'
import type { ExtraChoice, HookPlan } from './plan.js'
import { HOOK_EVENTS, hookInputSchema } from './schemas.js'
import type { WholeInput } from './tool.js'

export interface PlanOptions {
  /** The hook's dialect. @default 'claude-code' */
  client?: HookClient
  /** Reviewer choices beyond approve / reject / always. */
  choices?: readonly ExtraChoice[]
}

/**
 * Read a hook payload and decide what to ask; `whole` names the call whose whole tool input the
 * inbox shows (a card points there when it cuts the input short). Throws HookError: UNSUPPORTED_HOOK for an event
 * askbridge does not handle, BAD_HOOK for a malformed body, BAD_TOOL_INPUT for a malformed
 * AskUserQuestion, UNSUPPORTED_SCHEMA for a form it cannot render.
 */
export function planHook(payload: unknown, whole?: WholeInput, options: PlanOptions = {}): HookPlan {
  const client = options.client ?? 'claude-code'
  const dialect = DIALECTS[client]
  const event = (payload as { hook_event_name?: unknown } | null)?.hook_event_name
  if (typeof event !== 'string' || !(HOOK_EVENTS as readonly string[]).includes(event)) {
    throw new HookError(
      'UNSUPPORTED_HOOK',
      `hook_event_name ${JSON.stringify(event ?? null)} is not supported (askbridge handles ${HOOK_EVENTS.join(', ')})`,
    )
  }
  const parsed = hookInputSchema.safeParse(payload)
  if (!parsed.success)
    throw new HookError('BAD_HOOK', `malformed ${event} hook: ${describeZodError(parsed.error)}`)
  const input = parsed.data
  const sessionId = input.session_id
  switch (input.hook_event_name) {
    case 'PermissionRequest':
    case 'PreToolUse': {
      if (input.hook_event_name === 'PreToolUse' && input.tool_name === 'AskUserQuestion') {
        return planQuestions(input.tool_input, sessionId, client)
      }
      if (input.hook_event_name === 'PreToolUse' && input.tool_name === 'ExitPlanMode') {
        return planReview(input.tool_input, sessionId, client, whole)
      }
      return planApproval(input, sessionId, dialect, whole, options.choices ?? [])
    }
    case 'Elicitation': {
      if (input.mode === 'url') {
        throw new HookError(
          'UNSUPPORTED_SCHEMA',
          'URL-mode elicitation is not supported: the person who started it must open the URL and complete it themselves, so it cannot be handed to someone in chat',
        )
      }
      const source = input.mcp_server_name
      return {
        kind: 'form',
        event: 'Elicitation',
        client,
        sessionId,
        form: elicitationForm(
          input.requested_schema ?? { type: 'object', properties: {} },
          input.message,
          source,
        ),
        ...(source ? { source } : {}),
      }
    }
    case 'ElicitationResult':
      return {
        kind: 'record',
        event: 'ElicitationResult',
        client,
        sessionId,
        detail: {
          mcp_server_name: input.mcp_server_name ?? null,
          elicitation_id: input.elicitation_id ?? null,
          action: input.action,
          // Field names only: values may be what a person typed, and the audit log keeps no secrets.
          fields: Object.keys(input.content ?? {}),
        },
      }
    case 'Notification':
      return {
        kind: 'fyi',
        event: 'Notification',
        client,
        sessionId,
        title: input.title ?? `${dialect.name} is waiting`,
        text: input.message,
      }
    case 'Stop':
      return {
        kind: 'fyi',
        event: 'Stop',
        client,
        sessionId,
        title: `${dialect.name} finished its turn`,
        text: input.last_assistant_message ?? 'The session is waiting for its next prompt.',
      }
  }
}
