/**
 * Claude Code hook payloads -> question batches, and people's answers -> the exact hook output.
 * Pure functions; src/hooks/run.ts asks the batch and waits.
 * Hook reference: https://code.claude.com/docs/en/hooks
 */

import { describeZodError } from '../protocol/schemas.js'
import type { AskUserQuestionAnswerItem, AskUserQuestionItem, ToolCallInfo } from '../protocol/types.js'
import { type ElicitationForm, elicitationContent, elicitationForm, isDeclined } from './elicit.js'
import { HookError } from './errors.js'
import {
  type ElicitResult,
  HOOK_EVENTS,
  type HookOutput,
  hookInputSchema,
  type PermissionUpdate,
} from './schemas.js'
import { renderTool, type WholeInput } from './tool.js'

/** The approval's option labels (the protocol answer is exactly one of them). */
export const APPROVAL = { approve: 'Approve', reject: 'Reject', always: 'Always approve' } as const

/** What a hook request becomes. */
export type HookPlan =
  | {
      kind: 'approval'
      event: 'PermissionRequest' | 'PreToolUse'
      sessionId: string
      question: AskUserQuestionItem
      tool: ToolCallInfo
      /** PermissionRequest: the updates "Always approve" applies (Claude Code's own suggestions). */
      always?: PermissionUpdate[]
      /** The whole tool input, for the audit log. */
      toolInput: Record<string, unknown>
    }
  | { kind: 'form'; event: 'Elicitation'; sessionId: string; form: ElicitationForm; source?: string }
  | { kind: 'fyi'; event: 'Notification' | 'Stop'; sessionId: string; title: string; text: string }

/** How the question ended, as the hook sees it. */
export type HookOutcome =
  | { kind: 'answered'; answers: AskUserQuestionAnswerItem[]; by?: string; reason?: string }
  /** The hook's time is running out, or the wait ended without a person deciding. */
  | { kind: 'no-decision' }
  /** Someone cancelled the question. */
  | { kind: 'cancelled' }

const DESTINATIONS: Record<string, string> = {
  session: 'for this session',
  localSettings: 'in .claude/settings.local.json',
  projectSettings: 'in .claude/settings.json',
  userSettings: 'in ~/.claude/settings.json',
}

/** "Bash(npm run *) in .claude/settings.local.json", for the card. */
function describeUpdate(u: PermissionUpdate): string {
  const where = DESTINATIONS[u.destination ?? ''] ?? (u.destination ? `in ${u.destination}` : '')
  if (u.type === 'setMode') return `switch to ${u.mode ?? 'another'} mode ${where}`.trim()
  if (u.type === 'addDirectories') return `add ${(u.directories ?? []).join(', ')} ${where}`.trim()
  const rules = (u.rules ?? []).map((r) => (r.ruleContent ? `${r.toolName}(${r.ruleContent})` : r.toolName))
  return `${u.behavior ?? 'allow'} ${rules.join(', ')} ${where}`.trim()
}

/**
 * Read a hook payload and decide what to ask; `whole` names the call whose whole tool input the
 * inbox shows (a card points there when it cuts the input short). Throws HookError: UNSUPPORTED_HOOK for an event
 * askbridge does not handle, BAD_HOOK for a malformed body, UNSUPPORTED_SCHEMA for a form it
 * cannot render.
 */
export function planHook(payload: unknown, whole?: WholeInput): HookPlan {
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
      const rendered = renderTool(input.tool_name, input.tool_input, whole ? { whole } : {})
      const suggestions =
        input.hook_event_name === 'PermissionRequest'
          ? (input.permission_suggestions ?? []).filter(
              (s) => s.behavior === undefined || s.behavior === 'allow',
            )
          : []
      const always = suggestions.length > 0 ? suggestions : undefined
      const alwaysNote = always
        ? `\n\n**${APPROVAL.always}** also remembers: ${always.map(describeUpdate).join('; ')}.`
        : ''
      const options = [APPROVAL.approve, APPROVAL.reject, ...(always ? [APPROVAL.always] : [])]
      const question: AskUserQuestionItem = {
        id: 'permission',
        header: 'Claude Code',
        question: `Allow Claude Code to use ${rendered.subject}?`,
        detail: `${rendered.detail}${alwaysNote}`,
        options: options.map((label) => ({ label })),
        intent: {
          kind: 'approval',
          approve: APPROVAL.approve,
          reject: APPROVAL.reject,
          ...(always ? { always: APPROVAL.always } : {}),
          subject: { name: rendered.subject },
        },
      }
      return {
        kind: 'approval',
        event: input.hook_event_name,
        sessionId,
        question,
        tool: { name: input.tool_name, input: rendered.text },
        toolInput: input.tool_input,
        ...(always ? { always } : {}),
      }
    }
    case 'Elicitation': {
      if (input.mode === 'url') {
        throw new HookError(
          'UNSUPPORTED_SCHEMA',
          'URL-mode elicitation (a browser sign-in) is not supported; only forms',
        )
      }
      const source = input.mcp_server_name
      return {
        kind: 'form',
        event: 'Elicitation',
        sessionId,
        form: elicitationForm(
          input.requested_schema ?? { type: 'object', properties: {} },
          input.message,
          source,
        ),
        ...(source ? { source } : {}),
      }
    }
    case 'Notification':
      return {
        kind: 'fyi',
        event: 'Notification',
        sessionId,
        title: input.title ?? 'Claude Code is waiting',
        text: input.message,
      }
    case 'Stop':
      return {
        kind: 'fyi',
        event: 'Stop',
        sessionId,
        title: 'Claude Code finished its turn',
        text: input.last_assistant_message ?? 'The session is waiting for its next prompt.',
      }
  }
}

/** The MCP result of a form's outcome: accept with typed content, decline, or cancel. */
export function elicitResult(form: Pick<ElicitationForm, 'fields'>, outcome: HookOutcome): ElicitResult {
  if (outcome.kind !== 'answered') return { action: 'cancel' }
  if (isDeclined(outcome.answers)) return { action: 'decline' }
  return { action: 'accept', content: elicitationContent(form, outcome.answers) }
}

/**
 * The hook's JSON answer. "No decision" is `{}`: Claude Code then shows its own prompt, so a
 * timeout never allows or denies anything.
 */
export function hookOutput(plan: HookPlan, outcome: HookOutcome): HookOutput {
  if (plan.kind === 'fyi') return {}
  if (plan.kind === 'form') {
    // Waiting ran out: no decision, Claude Code shows its own dialog. A cancel is a cancel.
    if (outcome.kind === 'no-decision') return {}
    return { hookSpecificOutput: { hookEventName: 'Elicitation', ...elicitResult(plan.form, outcome) } }
  }
  if (outcome.kind !== 'answered') return {}
  const label = outcome.answers[0]?.selected[0]
  const by = outcome.by ? ` by ${outcome.by}` : ''
  if (label !== APPROVAL.approve && label !== APPROVAL.always && label !== APPROVAL.reject) return {}
  const allowed = label !== APPROVAL.reject
  const message = outcome.reason?.trim()
    ? outcome.reason.trim()
    : allowed
      ? `Approved${by} in askbridge.`
      : `Rejected${by} in askbridge.`
  if (plan.event === 'PreToolUse') {
    return {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: allowed ? 'allow' : 'deny',
        permissionDecisionReason: message,
      },
    }
  }
  if (!allowed) {
    return {
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message } },
    }
  }
  return {
    hookSpecificOutput: {
      hookEventName: 'PermissionRequest',
      decision: {
        behavior: 'allow',
        ...(label === APPROVAL.always && plan.always ? { updatedPermissions: plan.always } : {}),
      },
    },
  }
}
