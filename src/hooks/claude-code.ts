/**
 * Claude Code hook payloads -> question batches, and people's answers -> the exact hook output.
 * Pure functions; src/hooks/run.ts asks the batch and waits.
 * Hook reference: https://code.claude.com/docs/en/hooks
 */

import { describeZodError } from '../protocol/schemas.js'
import type { AskUserQuestionAnswerItem, AskUserQuestionItem, ToolCallInfo } from '../protocol/types.js'
import { DIALECTS, type Dialect, type HookClient, type TimeoutDecision } from './dialects.js'
import { type ElicitationForm, elicitationContent, elicitationForm, isDeclined } from './elicit.js'
import { HookError } from './errors.js'
import {
  askUserQuestionInputSchema,
  type ElicitResult,
  type GrantableUpdate,
  grantableUpdateSchema,
  HOOK_EVENTS,
  type HookOutput,
  hookInputSchema,
  type PermissionUpdate,
} from './schemas.js'
import { preview, renderTool, type WholeInput } from './tool.js'

/** The approval's option labels (the protocol answer is exactly one of them). */
export const APPROVAL = { approve: 'Approve', reject: 'Reject', always: 'Always approve' } as const
/** The extra labels of the choices card (several suggestions, a mode change, stop or edit). */
export const CHOICES = {
  stop: 'Reject and stop the agent',
  alwaysPrefix: 'Always approve: ',
} as const
/** The plan review's labels (ExitPlanMode). */
export const PLAN = { approve: 'Approve', keep: 'Keep planning' } as const

/** The most of a suggestion an "Always approve: …" label names (the rest is in its description). */
const LABEL_CHARS = 200
const DESCRIPTION_CHARS = 2_000

/** The reviewer choices a hook request may add (`?choices=stop,edit`, `askbridge hook --choices`). */
export const EXTRA_CHOICES = ['stop', 'edit'] as const
export type ExtraChoice = (typeof EXTRA_CHOICES)[number]

/** What picking a label does. */
type Choice = { do: 'allow' } | { do: 'deny' } | { do: 'stop' } | { do: 'always'; update: GrantableUpdate }

/** What a hook request becomes. */
export type HookPlan =
  | {
      kind: 'approval'
      event: 'PermissionRequest' | 'PreToolUse'
      client: HookClient
      sessionId: string
      question: AskUserQuestionItem
      tool: ToolCallInfo
      /** Each option label and what it does. */
      choices: Record<string, Choice>
      /** "Edit, then allow": the tool input field the typed text replaces. */
      edit?: 'command' | 'new_string'
      /** The whole tool input, for the audit log and updatedInput. */
      toolInput: Record<string, unknown>
    }
  | {
      /** Claude Code's AskUserQuestion, answered through PreToolUse. */
      kind: 'questions'
      event: 'PreToolUse'
      client: HookClient
      sessionId: string
      questions: AskUserQuestionItem[]
      tool: ToolCallInfo
      toolInput: Record<string, unknown>
    }
  | {
      /** Claude Code's ExitPlanMode, answered through PreToolUse. */
      kind: 'plan'
      event: 'PreToolUse'
      client: HookClient
      sessionId: string
      question: AskUserQuestionItem
      tool: ToolCallInfo
      toolInput: Record<string, unknown>
    }
  | {
      kind: 'form'
      event: 'Elicitation'
      client: HookClient
      sessionId: string
      form: ElicitationForm
      source?: string
    }
  | {
      kind: 'fyi'
      event: 'Notification' | 'Stop'
      client: HookClient
      sessionId: string
      title: string
      text: string
    }
  | {
      /** Recorded in the audit log; nothing is asked, nothing decided. */
      kind: 'record'
      event: 'ElicitationResult'
      client: HookClient
      sessionId: string
      detail: Record<string, unknown>
    }

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
function describeUpdate(u: GrantableUpdate): string {
  const where = DESTINATIONS[u.destination] ?? `in ${u.destination}`
  if (u.type === 'setMode') return `switch to ${u.mode} mode ${where}`
  if ('directories' in u) {
    return `${u.type === 'addDirectories' ? 'add' : 'remove'} ${u.directories.join(', ')} ${where}`
  }
  const rules = u.rules.map((r) => (r.ruleContent ? `${r.toolName}(${r.ruleContent})` : r.toolName))
  const verb = u.type === 'replaceRules' ? 'replace with ' : u.type === 'removeRules' ? 'remove ' : ''
  return `${verb}${u.behavior} ${rules.join(', ')} ${where}`
}

export interface PlanOptions {
  /** The hook's dialect. @default 'claude-code' */
  client?: HookClient
  /** Reviewer choices beyond approve / reject / always. */
  choices?: readonly ExtraChoice[]
}

/** The tool input field "Edit, then allow" replaces, for the tools where a person can edit one. */
function editField(toolName: string, input: Record<string, unknown>): 'command' | 'new_string' | undefined {
  if (toolName === 'Bash' && typeof input.command === 'string') return 'command'
  if (toolName === 'Edit' && typeof input.new_string === 'string') return 'new_string'
  return undefined
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

function planApproval(
  input: {
    hook_event_name: 'PermissionRequest' | 'PreToolUse'
    tool_name: string
    tool_input: Record<string, unknown>
    permission_suggestions?: PermissionUpdate[] | undefined
    mcp_server?: { source: string } | undefined
  },
  sessionId: string,
  dialect: Dialect,
  whole: WholeInput | undefined,
  extra: readonly ExtraChoice[],
): HookPlan {
  const event = input.hook_event_name
  const rendered = renderTool(input.tool_name, input.tool_input, whole ? { whole } : {})
  const extras = event === 'PermissionRequest' ? dialect.permissionExtras : true
  // Only suggestions that allow, of a type this version knows; the rest are passed over.
  const suggestions: GrantableUpdate[] =
    event === 'PermissionRequest' && dialect.permissionExtras
      ? (input.permission_suggestions ?? []).flatMap((s) => {
          const known = grantableUpdateSchema.safeParse(s)
          // The parsed entry has only the documented fields (an absent ruleContent stays absent).
          return known.success && (!('behavior' in known.data) || known.data.behavior === 'allow')
            ? [known.data as GrantableUpdate]
            : []
        })
      : []
  const stop = extras && extra.includes('stop')
  const canEdit = event === 'PermissionRequest' ? dialect.permissionExtras : dialect.preToolUseEdit
  const edit = canEdit && extra.includes('edit') ? editField(input.tool_name, input.tool_input) : undefined
  const only = suggestions.length === 1 ? suggestions[0] : undefined
  // One suggestion that is not a mode change: the plain approval card, its "Always approve"
  // grants exactly that one. Anything more is a list the reviewer picks one line from.
  const plain =
    !stop && !edit && (suggestions.length === 0 || (only !== undefined && only.type !== 'setMode'))
  const subject = rendered.subject
  const base = {
    id: 'permission',
    header: dialect.name,
    question: `Allow ${dialect.name} to use ${subject}?`,
  }
  const common = {
    kind: 'approval' as const,
    event,
    client: dialect.client,
    sessionId,
    tool: {
      name: input.tool_name,
      input: rendered.text,
      ...(input.mcp_server ? { mcpSource: input.mcp_server.source } : {}),
    },
    toolInput: input.tool_input,
  }
  if (plain) {
    const alwaysNote = only ? `\n\n**${APPROVAL.always}** also remembers: ${describeUpdate(only)}.` : ''
    const choices: Record<string, Choice> = {
      [APPROVAL.approve]: { do: 'allow' },
      [APPROVAL.reject]: { do: 'deny' },
      ...(only ? { [APPROVAL.always]: { do: 'always', update: only } } : {}),
    }
    return {
      ...common,
      choices,
      question: {
        ...base,
        detail: `${rendered.detail}${alwaysNote}`,
        options: Object.keys(choices).map((label) => ({ label })),
        intent: {
          kind: 'approval',
          approve: APPROVAL.approve,
          reject: APPROVAL.reject,
          ...(only ? { always: APPROVAL.always } : {}),
          subject: { name: subject },
        },
      },
    }
  }
  const choices: Record<string, Choice> = {
    [APPROVAL.approve]: { do: 'allow' },
    [APPROVAL.reject]: { do: 'deny' },
  }
  const descriptions: Record<string, string> = {
    [APPROVAL.approve]: 'Run it this once.',
    [APPROVAL.reject]: `Refuse it; ${dialect.name} is told and carries on.`,
  }
  if (stop) {
    choices[CHOICES.stop] = { do: 'stop' }
    descriptions[CHOICES.stop] = `Refuse it and stop ${dialect.name} until someone resumes it.`
  }
  for (const s of suggestions) {
    // A label is the answer value: short enough for any button, distinct from every other one.
    const text = describeUpdate(s)
    const named = `${CHOICES.alwaysPrefix}${text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text}`
    let label = named
    for (let n = 2; Object.hasOwn(choices, label); n++) label = `${named} (${n})`
    choices[label] = { do: 'always', update: s }
    descriptions[label] =
      text.length > LABEL_CHARS
        ? `Run it, and remember only this: ${text.slice(0, DESCRIPTION_CHARS)}`
        : 'Run it, and remember only this.'
  }
  const otherNote = edit
    ? `**Other…**: type the ${edit === 'command' ? 'command' : 'new text'} to use instead, and it runs with your edit (Edit, then allow).`
    : '**Other…**: refuse it with the reason you type.'
  return {
    ...common,
    choices,
    ...(edit ? { edit } : {}),
    question: {
      ...base,
      detail: `${rendered.detail}\n\n${otherNote}`,
      options: Object.keys(choices).map((label) => ({ label, description: descriptions[label] as string })),
    },
  }
}

function planQuestions(toolInput: Record<string, unknown>, sessionId: string, client: HookClient): HookPlan {
  const parsed = askUserQuestionInputSchema.safeParse(toolInput)
  if (!parsed.success) {
    throw new HookError(
      'BAD_TOOL_INPUT',
      `malformed AskUserQuestion input: ${describeZodError(parsed.error)}`,
    )
  }
  const questions = parsed.data.questions.map(
    (q, i): AskUserQuestionItem => ({
      id: `q${i + 1}`,
      question: q.question.trim(),
      ...(q.header?.trim() ? { header: q.header.trim() } : {}),
      options: q.options.map((o) => ({
        label: o.label.trim(),
        ...(o.description?.trim() ? { description: o.description.trim() } : {}),
      })),
      ...(q.multiSelect ? { multiSelect: true } : {}),
    }),
  )
  return {
    kind: 'questions',
    event: 'PreToolUse',
    client,
    sessionId,
    questions,
    tool: { name: 'AskUserQuestion', input: questions.map((q) => q.question).join('\n') },
    toolInput,
  }
}

function planReview(
  toolInput: Record<string, unknown>,
  sessionId: string,
  client: HookClient,
  whole: WholeInput | undefined,
): HookPlan {
  const plan =
    typeof toolInput.plan === 'string' && toolInput.plan.trim() ? toolInput.plan : '_(no plan text)_'
  const { shown, note } = preview(plan, undefined, whole)
  return {
    kind: 'plan',
    event: 'PreToolUse',
    client,
    sessionId,
    question: {
      id: 'plan',
      header: DIALECTS[client].name,
      question: 'Approve this plan?',
      detail: `${shown}${note}`,
      options: [{ label: PLAN.approve }, { label: PLAN.keep }],
      intent: { kind: 'plan-review', approve: PLAN.approve },
    },
    tool: { name: 'ExitPlanMode', input: plan },
    toolInput,
  }
}

/** The MCP result of a form's outcome: accept with typed content, decline, or cancel. */
export function elicitResult(form: Pick<ElicitationForm, 'fields'>, outcome: HookOutcome): ElicitResult {
  if (outcome.kind !== 'answered') return { action: 'cancel' }
  if (isDeclined(outcome.answers)) return { action: 'decline' }
  return { action: 'accept', content: elicitationContent(form, outcome.answers) }
}

/** The questions asked, for the audit log and routes. */
export function planQuestionsOf(plan: Exclude<HookPlan, { kind: 'fyi' | 'record' }>): AskUserQuestionItem[] {
  if (plan.kind === 'form') return plan.form.questions
  if (plan.kind === 'questions') return plan.questions
  return [plan.question]
}

export interface OutputOptions {
  /** What PreToolUse answers when nobody decided (ASKBRIDGE_HOOK_TIMEOUT_DECISION). @default 'ask' */
  timeoutDecision?: TimeoutDecision
}

const NOBODY = 'Nobody decided in askbridge in time'

/**
 * The answer when nobody decided (the wait ran out, the bridge is shutting down, or something
 * failed): PreToolUse fails closed, "ask" (Claude Code's own prompt) or "deny"; every other
 * event is `{}`, no decision. Never allow.
 */
export function noDecisionOutput(
  event: unknown,
  client: HookClient = 'claude-code',
  options: OutputOptions = {},
  why = NOBODY,
): HookOutput {
  if (event !== 'PreToolUse') return {}
  const dialect = DIALECTS[client]
  const decision = dialect.noDecision(options.timeoutDecision ?? 'ask')
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision,
      permissionDecisionReason:
        decision === 'ask' ? `${why}; asking here instead.` : `${why}; the call is refused.`,
    },
  }
}

/** AskUserQuestion's `answers`: question text -> the chosen label, several joined with ", ", Other as typed. */
function askAnswers(
  questions: AskUserQuestionItem[],
  answers: AskUserQuestionAnswerItem[],
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const q of questions) {
    const a = answers.find((x) => x.id === q.id)
    if (!a) continue
    const parts = [...a.selected, ...(a.custom?.trim() ? [a.custom] : [])]
    if (parts.length > 0) out[q.question] = parts.join(', ')
  }
  return out
}

const preToolUse = (
  decision: 'allow' | 'deny',
  reason: string,
  updatedInput?: Record<string, unknown>,
): HookOutput => ({
  hookSpecificOutput: {
    hookEventName: 'PreToolUse',
    permissionDecision: decision,
    permissionDecisionReason: reason,
    ...(updatedInput ? { updatedInput } : {}),
  },
})

/**
 * The hook's JSON answer. Nobody deciding is {@link noDecisionOutput}: never allow. PermissionRequest
 * and Elicitation then answer `{}` and Claude Code shows its own dialog.
 */
export function hookOutput(plan: HookPlan, outcome: HookOutcome, options: OutputOptions = {}): HookOutput {
  return DIALECTS[plan.client].translate(decide(plan, outcome, options))
}

function decide(plan: HookPlan, outcome: HookOutcome, options: OutputOptions): HookOutput {
  if (plan.kind === 'fyi' || plan.kind === 'record') return {}
  if (plan.kind === 'form') {
    // Waiting ran out: no decision, Claude Code shows its own dialog. A cancel is a cancel.
    if (outcome.kind === 'no-decision') return {}
    return { hookSpecificOutput: { hookEventName: 'Elicitation', ...elicitResult(plan.form, outcome) } }
  }
  const none = () => noDecisionOutput(plan.event, plan.client, options)
  const by = outcome.kind === 'answered' && outcome.by ? ` by ${outcome.by}` : ''
  const reason = outcome.kind === 'answered' ? outcome.reason?.trim() : undefined
  if (plan.kind === 'questions') {
    if (outcome.kind === 'cancelled')
      return preToolUse('deny', 'The question was cancelled in askbridge; nobody will answer it.')
    if (outcome.kind !== 'answered') return none()
    const answers = askAnswers(plan.questions, outcome.answers)
    if (Object.keys(answers).length === 0)
      return preToolUse('deny', `The questions were declined${by} in askbridge.`)
    return preToolUse('allow', `Answered${by} in askbridge.`, { ...plan.toolInput, answers })
  }
  if (plan.kind === 'plan') {
    if (outcome.kind === 'cancelled') return preToolUse('deny', 'The plan review was cancelled in askbridge.')
    if (outcome.kind !== 'answered') return none()
    const a = outcome.answers[0]
    if (a?.selected.includes(PLAN.approve))
      return preToolUse('allow', reason || `Plan approved${by} in askbridge.`)
    const feedback = a?.custom?.trim()
    return preToolUse('deny', feedback || reason || `The plan was declined${by} in askbridge; keep planning.`)
  }
  if (outcome.kind !== 'answered') return plan.event === 'PreToolUse' ? none() : {}
  const a = outcome.answers[0]
  const custom = a?.custom?.trim()
  if (custom) {
    // "Other…": the edited command or text (Edit, then allow), else a refusal with the typed reason.
    if (plan.edit) {
      const updatedInput = { ...plan.toolInput, [plan.edit]: a?.custom as string }
      const message = `Approved with an edit${by} in askbridge.`
      return plan.event === 'PreToolUse'
        ? preToolUse('allow', message, updatedInput)
        : {
            hookSpecificOutput: {
              hookEventName: 'PermissionRequest',
              decision: { behavior: 'allow', updatedInput },
            },
          }
    }
    return plan.event === 'PreToolUse'
      ? preToolUse('deny', custom)
      : {
          hookSpecificOutput: {
            hookEventName: 'PermissionRequest',
            decision: { behavior: 'deny', message: custom },
          },
        }
  }
  const label = a?.selected[0] ?? ''
  const choice = Object.hasOwn(plan.choices, label) ? plan.choices[label] : undefined
  if (!choice) return plan.event === 'PreToolUse' ? none() : {}
  const allowed = choice.do === 'allow' || choice.do === 'always'
  const message = reason || (allowed ? `Approved${by} in askbridge.` : `Rejected${by} in askbridge.`)
  if (plan.event === 'PreToolUse') {
    if (choice.do === 'stop') {
      return { continue: false, stopReason: `Stopped${by} in askbridge.`, ...preToolUse('deny', message) }
    }
    return preToolUse(allowed ? 'allow' : 'deny', message)
  }
  if (!allowed) {
    return {
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: {
          behavior: 'deny',
          message,
          ...(choice.do === 'stop' ? { interrupt: true as const } : {}),
        },
      },
    }
  }
  return {
    hookSpecificOutput: {
      hookEventName: 'PermissionRequest',
      decision: {
        behavior: 'allow',
        ...(choice.do === 'always' ? { updatedPermissions: [choice.update] } : {}),
      },
    },
  }
}
