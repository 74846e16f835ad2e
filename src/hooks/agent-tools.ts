/** Claude Code's own asking tools through PreToolUse: AskUserQuestion as questions, ExitPlanMode as a plan review. */

import { describeZodError } from '../protocol/schemas.js'
import type { AskUserQuestionItem } from '../protocol/types.js'
import { DIALECTS, type HookClient } from './dialects.js'
import { HookError } from './errors.js'
import { type HookPlan, PLAN } from './plan.js'
import { askUserQuestionInputSchema } from './schemas.js'
import { preview, type WholeInput } from './tool.js'

export function planQuestions(
  toolInput: Record<string, unknown>,
  sessionId: string,
  client: HookClient,
): HookPlan {
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

export function planReview(
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
