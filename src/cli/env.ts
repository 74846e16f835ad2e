import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parse } from 'dotenv'
import { BridgeClient, DEFAULT_BRIDGE_URL } from './client.js'

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

/**
 * The client of the bridge every command uses (`ask`, `mcp`, `audit`, `hook`): ASKBRIDGE_URL (or a
 * `--url` flag, which wins) and ASKBRIDGE_API_TOKEN from the environment or `.env`. Throws a
 * HttpError (BAD_URL) naming the variable or flag when the URL is not http(s).
 */
export function clientFromEnv(
  env: Record<string, string | undefined>,
  flags: { url?: string } = {},
): BridgeClient {
  const e = clientEnv(env)
  const token = nonEmpty(e.ASKBRIDGE_API_TOKEN)
  const fromEnv = nonEmpty(e.ASKBRIDGE_URL)
  return new BridgeClient({
    url: flags.url ?? fromEnv ?? DEFAULT_BRIDGE_URL,
    urlSource: flags.url !== undefined ? '--url' : 'ASKBRIDGE_URL',
    ...(token ? { token } : {}),
  })
}
