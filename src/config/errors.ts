/** ConfigError: the one error a bad configuration throws, naming every problem. */
import { AskbridgeError } from '../errors.js'

/** A configuration problem; `message` names every bad variable, meant to be printed as-is. */
export class ConfigError extends AskbridgeError {
  override readonly name = 'ConfigError'
  readonly code = 'INVALID_CONFIG'
  readonly problems: string[]
  constructor(problems: string[]) {
    super(`askbridge: invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.problems = problems
  }
}
