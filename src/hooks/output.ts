/** People's answers -> the exact hook output: per plan kind, and the fail-closed answer when nobody decided. */

import type { AskUserQuestionAnswerItem, AskUserQuestionItem } from '../protocol/types.js'
import { DIALECTS, type HookClient, type TimeoutDecision } from './dialects.js'
import { type ElicitationForm, elicitationContent, isDeclined } from './elicit.js'
import { type HookOutcome, type HookPlan, PLAN } from './plan.js'
import type { ElicitResult, HookOutput } from './schemas.js'

/** The MCP result of a form's outcome: accept with typed content, decline, or cancel. */
export function elicitResult(form: Pick<ElicitationForm, 'fields'>, outcome: HookOutcome): ElicitResult {
  if (outcome.kind !== 'answered') return { action: 'cancel' }
  if (isDeclined(outcome.answers)) return { action: 'decline' }
  return { action: 'accept', content: elicitationContent(form, outcome.answers) }
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

/** What every asked plan's answer needs: the fail-closed answer, who answered, and their reason. */
interface Said {
  none: () => HookOutput
  /** " by NAME", or empty. */
  by: string
  reason: string | undefined
}

function decide(plan: HookPlan, outcome: HookOutcome, options: OutputOptions): HookOutput {
  if (plan.kind === 'fyi' || plan.kind === 'record') return {}
  if (plan.kind === 'form') {
    // Waiting ran out: no decision, Claude Code shows its own dialog. A cancel is a cancel.
    if (outcome.kind === 'no-decision') return {}
    return { hookSpecificOutput: { hookEventName: 'Elicitation', ...elicitResult(plan.form, outcome) } }
  }
  const said: Said = {
    none: () => noDecisionOutput(plan.event, plan.client, options),
    by: outcome.kind === 'answered' && outcome.by ? ` by ${outcome.by}` : '',
    reason: outcome.kind === 'answered' ? outcome.reason?.trim() : undefined,
  }
  if (plan.kind === 'questions') return decideQuestions(plan, outcome, said)
  if (plan.kind === 'plan') return decidePlan(outcome, said)
  return decideApproval(plan, outcome, said)
}

/** AskUserQuestion: allow with the answers filled in, or deny when declined or cancelled. */
function decideQuestions(
  plan: Extract<HookPlan, { kind: 'questions' }>,
  outcome: HookOutcome,
  { none, by }: Said,
): HookOutput {
  if (outcome.kind === 'cancelled')
    return preToolUse('deny', 'The question was cancelled in askbridge; nobody will answer it.')
  if (outcome.kind !== 'answered') return none()
  const answers = askAnswers(plan.questions, outcome.answers)
  if (Object.keys(answers).length === 0)
    return preToolUse('deny', `The questions were declined${by} in askbridge.`)
  return preToolUse('allow', `Answered${by} in askbridge.`, { ...plan.toolInput, answers })
}

/** ExitPlanMode: allow to approve, deny with the typed feedback to keep planning. */
function decidePlan(outcome: HookOutcome, { none, by, reason }: Said): HookOutput {
  if (outcome.kind === 'cancelled') return preToolUse('deny', 'The plan review was cancelled in askbridge.')
  if (outcome.kind !== 'answered') return none()
  const a = outcome.answers[0]
  if (a?.selected.includes(PLAN.approve))
    return preToolUse('allow', reason || `Plan approved${by} in askbridge.`)
  const feedback = a?.custom?.trim()
  return preToolUse('deny', feedback || reason || `The plan was declined${by} in askbridge; keep planning.`)
}

/** A tool call's permission: the picked choice, or "Other…" (an edit to allow, or a reason to refuse). */
function decideApproval(
  plan: Extract<HookPlan, { kind: 'approval' }>,
  outcome: HookOutcome,
  { none, by, reason }: Said,
): HookOutput {
  if (outcome.kind !== 'answered') return plan.event === 'PreToolUse' ? none() : {}
  const a = outcome.answers[0]
  const custom = a?.custom?.trim()
  if (custom) return decideOther(plan, a?.custom as string, custom, by)
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

/** "Other…": the edited command or text (Edit, then allow), else a refusal with the typed reason. */
function decideOther(
  plan: Extract<HookPlan, { kind: 'approval' }>,
  typed: string,
  custom: string,
  by: string,
): HookOutput {
  if (plan.edit) {
    const updatedInput = { ...plan.toolInput, [plan.edit]: typed }
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
