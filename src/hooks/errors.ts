import { AskbridgeError } from '../errors.js'

/** Why a hook request cannot become a card. HTTP answers 400 with this code; `askbridge hook` exits 1. */
export type HookErrorCode =
  | 'UNSUPPORTED_HOOK'
  | 'UNSUPPORTED_SCHEMA'
  | 'BAD_HOOK'
  | 'BAD_TOOL_INPUT'
  | 'BAD_ANSWER'

export class HookError extends AskbridgeError {
  override readonly name = 'HookError' as const
  readonly code: HookErrorCode

  constructor(code: HookErrorCode, message: string) {
    super(message)
    this.code = code
  }
}
