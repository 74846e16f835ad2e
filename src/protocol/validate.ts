import { UserQuestionError } from './errors.js'
import { answerSchema, describeZodError, questionsSchema } from './schemas.js'
import type { AskUserQuestionAnswer, AskUserQuestionItem } from './types.js'

/** The largest timeout a timer can hold (2^31 - 1 ms); every entry point checks against it. */
export const MAX_TIMEOUT_MS = 2_147_483_647

/** Shape checks the seam leaves unchecked: types, ids, labels. Throws BAD_QUESTION. */
export function checkQuestions(questions: unknown): asserts questions is AskUserQuestionItem[] {
  const parsed = questionsSchema.safeParse(questions)
  if (!parsed.success) {
    throw new UserQuestionError('BAD_QUESTION', `malformed question batch: ${describeZodError(parsed.error)}`)
  }
  const ids = new Set<string>()
  for (const q of parsed.data) {
    if (ids.has(q.id)) throw new UserQuestionError('BAD_QUESTION', `duplicate question id "${q.id}"`)
    ids.add(q.id)
    const labels = new Set<string>()
    for (const o of q.options ?? []) {
      if (labels.has(o.label)) {
        throw new UserQuestionError(
          'BAD_QUESTION',
          `question "${q.id}" has duplicate option label "${o.label}"`,
        )
      }
      labels.add(o.label)
    }
  }
}

/** Intent rules of the protocol. Throws BAD_INTENT. */
export function checkIntents(questions: AskUserQuestionItem[], timed: boolean): void {
  for (const q of questions) {
    const intent = q.intent
    if (!intent) continue
    if (q.detail === undefined || q.detail === '') {
      throw new UserQuestionError('BAD_INTENT', `question "${q.id}": an intent is only allowed with detail`)
    }
    const labels = (q.options ?? []).map((o) => o.label)
    if (intent.kind === 'plan-review') {
      if (!labels.includes(intent.approve)) {
        throw new UserQuestionError(
          'BAD_INTENT',
          `question "${q.id}": plan-review approve "${intent.approve}" is not one of its options`,
        )
      }
      continue
    }
    if (questions.length !== 1) {
      throw new UserQuestionError('BAD_INTENT', 'an approval must be the only question in its request')
    }
    if (timed) throw new UserQuestionError('BAD_INTENT', 'an approval is blocking only: no timed wait')
    if (q.multiSelect) throw new UserQuestionError('BAD_INTENT', 'an approval cannot be multi-select')
    const actions = [intent.approve, intent.reject, ...(intent.always === undefined ? [] : [intent.always])]
    if (new Set(actions).size !== actions.length) {
      throw new UserQuestionError('BAD_INTENT', 'approval approve, reject and always labels must be distinct')
    }
    if (actions.length !== labels.length || !actions.every((a) => labels.includes(a))) {
      throw new UserQuestionError(
        'BAD_INTENT',
        'approval approve, reject and always must be exactly the question options',
      )
    }
  }
}

/**
 * A batch answering `questions`: each question exactly once, only its own labels, single-select
 * at most one label and no label beside `custom`. Throws BAD_ANSWER.
 */
export function checkAnswer(questions: AskUserQuestionItem[], answer: unknown): AskUserQuestionAnswer {
  const parsed = answerSchema.safeParse(answer)
  if (!parsed.success) {
    throw new UserQuestionError('BAD_ANSWER', `malformed answer: ${describeZodError(parsed.error)}`)
  }
  const byId = new Map(questions.map((q) => [q.id, q]))
  const seen = new Set<string>()
  for (const item of parsed.data.answers) {
    const q = byId.get(item.id)
    if (!q) throw new UserQuestionError('BAD_ANSWER', `answer names unknown question "${item.id}"`)
    if (seen.has(item.id)) throw new UserQuestionError('BAD_ANSWER', `question "${item.id}" answered twice`)
    seen.add(item.id)
    const labels = new Set((q.options ?? []).map((o) => o.label))
    for (const label of item.selected) {
      if (!labels.has(label)) {
        throw new UserQuestionError('BAD_ANSWER', `"${label}" is not an option of question "${item.id}"`)
      }
    }
    if (new Set(item.selected).size !== item.selected.length) {
      throw new UserQuestionError('BAD_ANSWER', `question "${item.id}" selects a label twice`)
    }
    if (!q.multiSelect && item.selected.length > (item.custom === undefined ? 1 : 0)) {
      throw new UserQuestionError(
        'BAD_ANSWER',
        `question "${item.id}" is single-select: one label, or custom text with none`,
      )
    }
  }
  if (seen.size !== questions.length) {
    const missing = questions.filter((q) => !seen.has(q.id)).map((q) => q.id)
    throw new UserQuestionError('BAD_ANSWER', `answer is missing question(s): ${missing.join(', ')}`)
  }
  return parsed.data as AskUserQuestionAnswer
}
