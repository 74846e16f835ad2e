import { AskbridgeError } from '../errors.js'

export const USER_QUESTION_ERROR_CODES = [
  'EMPTY_QUESTIONS',
  'BAD_INTENT',
  'NO_PROVIDER',
  'ASK_ABORTED',
  'ASK_TIMED_OUT',
  'BAD_TIMEOUT',
  'CALLER_NOT_LIVE',
  'DELEGATED_CALLER',
  'PROVIDER_ERROR',
  'BAD_ANSWER',
  'REPLY_QUEUED',
  'DUPLICATE_WAIT',
  'ASK_CANCELLED',
  'BAD_QUESTION',
] as const

export type UserQuestionErrorCode = (typeof USER_QUESTION_ERROR_CODES)[number]

export interface SerializedUserQuestionError {
  name: 'UserQuestionError'
  code: UserQuestionErrorCode
  message: string
}

/** The one coded error of the protocol. Survives serialization as `{name, code, message}`. */
export class UserQuestionError extends AskbridgeError {
  override readonly name = 'UserQuestionError' as const
  readonly code: UserQuestionErrorCode

  constructor(code: UserQuestionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }

  override toJSON(): SerializedUserQuestionError {
    return { name: this.name, code: this.code, message: this.message }
  }

  /** Restore an error that crossed a wire; the transported object is kept as `cause`. */
  static fromJSON(value: unknown): UserQuestionError | undefined {
    if (!isSerializedUserQuestionError(value)) return undefined
    return new UserQuestionError(value.code, value.message, { cause: value })
  }
}

export function isUserQuestionErrorCode(value: unknown): value is UserQuestionErrorCode {
  return typeof value === 'string' && (USER_QUESTION_ERROR_CODES as readonly string[]).includes(value)
}

function isSerializedUserQuestionError(value: unknown): value is SerializedUserQuestionError {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return v.name === 'UserQuestionError' && isUserQuestionErrorCode(v.code) && typeof v.message === 'string'
}

/**
 * A protocol error in any form: an instance, or an object shaped `{name, code, message}` that
 * crossed a wire (or came from another copy of this module). Returns it as a UserQuestionError.
 */
export function asUserQuestionError(error: unknown): UserQuestionError | undefined {
  if (error instanceof UserQuestionError) return error
  return UserQuestionError.fromJSON(error)
}

export function hasCode(error: unknown, code: UserQuestionErrorCode): boolean {
  return asUserQuestionError(error)?.code === code
}
