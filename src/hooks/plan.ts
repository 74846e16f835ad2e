/** What a hook request becomes (HookPlan), how its question ended (HookOutcome), and the card labels both use. */

import type { AskUserQuestionAnswerItem, AskUserQuestionItem, ToolCallInfo } from '../protocol/types.js'
import type { HookClient } from './dialects.js'
import type { ElicitationForm } from './elicit.js'
import type { GrantableUpdate } from './schemas.js'

/** The approval's option labels (the protocol answer is exactly one of them). */
export const APPROVAL = { approve: 'Approve', reject: 'Reject', always: 'Always approve' } as const
/** The extra labels of the choices card (several suggestions, a mode change, stop or edit). */
export const CHOICES = {
  stop: 'Reject and stop the agent',
  alwaysPrefix: 'Always approve: ',
} as const
/** The plan review's labels (ExitPlanMode). */
export const PLAN = { approve: 'Approve', keep: 'Keep planning' } as const

/** The reviewer choices a hook request may add (`?choices=stop,edit`, `askbridge hook --choices`). */
export const EXTRA_CHOICES = ['stop', 'edit'] as const
export type ExtraChoice = (typeof EXTRA_CHOICES)[number]

/** What picking a label does. */
export type Choice =
  | { do: 'allow' }
  | { do: 'deny' }
  | { do: 'stop' }
  | { do: 'always'; update: GrantableUpdate }

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

/** The questions asked, for the audit log and routes. */
export function planQuestionsOf(plan: Exclude<HookPlan, { kind: 'fyi' | 'record' }>): AskUserQuestionItem[] {
  if (plan.kind === 'form') return plan.form.questions
  if (plan.kind === 'questions') return plan.questions
  return [plan.question]
}
