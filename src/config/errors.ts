/** ConfigError: the one error a bad configuration throws, naming every problem. */

/** A configuration problem; `message` names every bad variable, meant to be printed as-is. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  readonly problems: string[]
  constructor(problems: string[]) {
    super(`askbridge: invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.problems = problems
  }
}
