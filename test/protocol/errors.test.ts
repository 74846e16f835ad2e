import { describe, expect, it } from 'vitest'
import {
  asUserQuestionError,
  USER_QUESTION_ERROR_CODES,
  UserQuestionError,
} from '../../src/protocol/errors.js'
import {
  answerSchema,
  lateReplySchema,
  projectionViewSchema,
  serializedErrorSchema,
  timedResultSchema,
} from '../../src/protocol/schemas.js'

describe('UserQuestionError', () => {
  it.each(USER_QUESTION_ERROR_CODES)(
    '%s serializes to {name, code, message} and is restored with cause',
    (code) => {
      const error = new UserQuestionError(code, `failed: ${code}`)
      const wire = JSON.parse(JSON.stringify(error))
      expect(wire).toEqual({ name: 'UserQuestionError', code, message: `failed: ${code}` })
      expect(serializedErrorSchema.parse(wire)).toEqual(wire)
      const restored = UserQuestionError.fromJSON(wire)
      expect(restored).toBeInstanceOf(UserQuestionError)
      expect(restored).toMatchObject({ code, message: `failed: ${code}` })
      expect(restored?.cause).toBe(wire)
    },
  )

  it('does not restore things that are not protocol errors', () => {
    expect(UserQuestionError.fromJSON({ name: 'Error', code: 'BAD_ANSWER', message: 'x' })).toBeUndefined()
    expect(
      UserQuestionError.fromJSON({ name: 'UserQuestionError', code: 'NOPE', message: 'x' }),
    ).toBeUndefined()
    expect(asUserQuestionError(new Error('plain'))).toBeUndefined()
    expect(asUserQuestionError(null)).toBeUndefined()
  })
})

describe('wire schemas', () => {
  it('accept the protocol shapes and refuse unknown fields', () => {
    expect(answerSchema.safeParse({ answers: [{ id: 'a', selected: ['x'], custom: 'y' }] }).success).toBe(
      true,
    )
    expect(answerSchema.safeParse({ answers: [{ id: 'a', selected: 'x' }] }).success).toBe(false)
    expect(answerSchema.safeParse({ answers: [], extra: 1 }).success).toBe(false)
    expect(timedResultSchema.safeParse({ pending: true, callId: 'c' }).success).toBe(true)
    expect(timedResultSchema.safeParse({ pending: false, callId: 'c' }).success).toBe(false)
    expect(
      projectionViewSchema.safeParse({ active: [], settled: [{ callId: 'c', answers: [] }] }).success,
    ).toBe(true)
    expect(
      lateReplySchema.safeParse({
        source: 'user-question-reply',
        outcome: 'answered',
        payload: {
          kind: 'answer_to_pending_question',
          tool: 'ask_user_question',
          callId: 'c',
          questions: [{ id: 'q', question: 'Q?' }],
          answers: [{ id: 'q', selected: [], custom: 'text' }],
        },
      }).success,
    ).toBe(true)
  })
})
