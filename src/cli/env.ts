import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parse } from 'dotenv'

/**
 * The client side (`ask`, `mcp`, `audit`) needs only a few variables, so it reads them
 * without validating the server's whole configuration: a bad Slack setting must not stop
 * a script from asking through a bridge that runs elsewhere.
 */
export function clientEnv(
  env: Record<string, string | undefined> = process.env,
): Record<string, string | undefined> {
  const file = resolve('.env')
  if (!existsSync(file)) return env
  try {
    return { ...parse(readFileSync(file)), ...env }
  } catch {
    return env
  }
}

export function nonEmpty(v: string | undefined): string | undefined {
  const t = v?.trim()
  return t ? t : undefined
}
