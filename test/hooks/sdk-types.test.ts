/**
 * Fixtures and answers that cannot drift from Claude Code: every Claude Code hook fixture and
 * every answer askbridge gives are checked against the hook types `@anthropic-ai/claude-agent-sdk`
 * exports. `npm run typecheck` compiles this file, so a Claude Code release that changes a shape
 * breaks the build, not a user. (The Codex fixtures follow Codex's own JSON schemas; the SDK has
 * no types for them.)
 */
import type {
  ElicitationHookInput,
  ElicitationResultHookInput,
  NotificationHookInput,
  PermissionRequestHookInput,
  PreToolUseHookInput,
  StopHookInput,
  SyncHookJSONOutput,
} from '@anthropic-ai/claude-agent-sdk'
import type { AskUserQuestionInput, ExitPlanModeInput } from '@anthropic-ai/claude-agent-sdk/sdk-tools'
import { describe, expect, it } from 'vitest'
import { planHook } from '../../src/hooks/claude-code.js'
import { hookOutput } from '../../src/hooks/output.js'
import type { HookOutcome } from '../../src/hooks/plan.js'
import type { HookOutput } from '../../src/hooks/schemas.js'
import elicitationForm from '../fixtures/claude-code/elicitation-form.json' with { type: 'json' }
import notification from '../fixtures/claude-code/notification.json' with { type: 'json' }
import permissionRequestBash from '../fixtures/claude-code/permission-request-bash.json' with { type: 'json' }
import permissionRequestEdit from '../fixtures/claude-code/permission-request-edit.json' with { type: 'json' }
import permissionRequestSuggestions from '../fixtures/claude-code/permission-request-suggestions.json' with {
  type: 'json',
}
import askUserQuestion from '../fixtures/claude-code/pre-tool-use-ask-user-question.json' with {
  type: 'json',
}
import preToolUseBash from '../fixtures/claude-code/pre-tool-use-bash.json' with { type: 'json' }
import exitPlanMode from '../fixtures/claude-code/pre-tool-use-exit-plan-mode.json' with { type: 'json' }
import stop from '../fixtures/claude-code/stop.json' with { type: 'json' }

/**
 * JSON imports widen string literals ("PreToolUse" is read as string), so a fixture is checked
 * against the SDK type with its literals widened the same way: every field the type requires is
 * there with its type; the literal values (event names, enums) are checked at run time below and
 * by askbridge's own schemas.
 */
type Widen<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer U)[]
        ? Widen<U>[]
        : T extends object
          ? { [K in keyof T]: Widen<T[K]> }
          : T
const as = <T extends object, E extends string>(json: T, event: E) => ({ ...json, hook_event_name: event })

// Inputs: each fixture is what Claude Code sends for its event.
const inputs = {
  'permission-request-bash': as(
    permissionRequestBash,
    'PermissionRequest',
  ) satisfies Widen<PermissionRequestHookInput>,
  'permission-request-suggestions': as(
    permissionRequestSuggestions,
    'PermissionRequest',
  ) satisfies Widen<PermissionRequestHookInput>,
  'permission-request-edit': as(
    permissionRequestEdit,
    'PermissionRequest',
  ) satisfies Widen<PermissionRequestHookInput>,
  'pre-tool-use-bash': as(preToolUseBash, 'PreToolUse') satisfies Widen<PreToolUseHookInput>,
  'pre-tool-use-ask-user-question': as(askUserQuestion, 'PreToolUse') satisfies Widen<PreToolUseHookInput>,
  'pre-tool-use-exit-plan-mode': as(exitPlanMode, 'PreToolUse') satisfies Widen<PreToolUseHookInput>,
  'elicitation-form': as(elicitationForm, 'Elicitation') satisfies Widen<ElicitationHookInput>,
  notification: as(notification, 'Notification') satisfies Widen<NotificationHookInput>,
  stop: as(stop, 'Stop') satisfies Widen<StopHookInput>,
}
// The tool inputs of Claude Code's own tools, as their SDK types.
askUserQuestion.tool_input satisfies Omit<AskUserQuestionInput, 'questions'> & {
  questions: Array<{ question: string; header: string; options: object[]; multiSelect: boolean }>
}
exitPlanMode.tool_input satisfies ExitPlanModeInput
// Outputs: every answer askbridge gives (the one type all of them have) is a Claude Code hook output.
const fits = (output: HookOutput): SyncHookJSONOutput => output
// ElicitationResult is recorded, never answered: its input is one Claude Code sends.
;({
  session_id: 's',
  transcript_path: '/t.jsonl',
  cwd: '/',
  hook_event_name: 'ElicitationResult',
  mcp_server_name: 'deployer',
  action: 'decline',
}) satisfies ElicitationResultHookInput

describe('fixtures and answers checked against the Agent SDK types', () => {
  it('every fixture names the event its type says', () => {
    for (const [name, typed] of Object.entries(inputs)) {
      const raw = {
        'permission-request-bash': permissionRequestBash,
        'permission-request-suggestions': permissionRequestSuggestions,
        'permission-request-edit': permissionRequestEdit,
        'pre-tool-use-bash': preToolUseBash,
        'pre-tool-use-ask-user-question': askUserQuestion,
        'pre-tool-use-exit-plan-mode': exitPlanMode,
        'elicitation-form': elicitationForm,
        notification,
        stop,
      }[name]
      expect(raw?.hook_event_name, name).toBe(typed.hook_event_name)
    }
  })

  it('the answers askbridge gives for them are SyncHookJSONOutput values', () => {
    const outcomes: HookOutcome[] = [
      { kind: 'no-decision' },
      { kind: 'cancelled' },
      { kind: 'answered', answers: [{ id: 'permission', selected: ['Approve'] }], by: 'Grace' },
    ]
    for (const [name, payload] of Object.entries(inputs)) {
      const plan = planHook(payload)
      // A form's answers are typed fields, not an option label: its answers are covered by the e2e tests.
      for (const outcome of plan.kind === 'form' ? outcomes.slice(0, 2) : outcomes) {
        const output = fits(hookOutput(plan, outcome))
        expect(typeof output, name).toBe('object')
      }
    }
  })
})
