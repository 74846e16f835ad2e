/**
 * The whole configuration: every variable's schema (by area in server-vars.ts, store-vars.ts,
 * agent-vars.ts, signin-vars.ts, in the reference table's order here), the rules across them,
 * and parseConfig.
 */
import { z } from 'zod'
import type { PlatformDescriptor as PlatformModule } from '../platform-descriptor.js'
import { agentVars as agent } from './agent-vars.js'
import { ConfigError } from './errors.js'
import { accessProblems, serverVars as server } from './server-vars.js'
import { signinVars as signin, signinProblems } from './signin-vars.js'
import { dbPassword, storeVars as store } from './store-vars.js'

// Where other modules and tests import them from.
export { ConfigError } from './errors.js'
export { DEFAULT_MAX_WAITING_ASKS } from './server-vars.js'
export { publicUrlOf, redirectUriOf, secureCookiesOf } from './signin-vars.js'
export { optionalText, url } from './values.js'

/**
 * Every environment variable askbridge reads, each with its description (`.meta`), from which
 * docs/configuration.md is generated (`npm run docs:config`); `.env.example` lists them too.
 */
export const envSchema = z.object({
  ASKBRIDGE_HOST: server.ASKBRIDGE_HOST,
  ASKBRIDGE_PORT: server.ASKBRIDGE_PORT,
  ASKBRIDGE_DB: store.ASKBRIDGE_DB,
  ASKBRIDGE_API_TOKEN: server.ASKBRIDGE_API_TOKEN,
  ASKBRIDGE_AGENT_TOKENS: server.ASKBRIDGE_AGENT_TOKENS,
  ASKBRIDGE_ROUTES: agent.ASKBRIDGE_ROUTES,
  ASKBRIDGE_URL: agent.ASKBRIDGE_URL,
  ASKBRIDGE_PUBLIC_URL: signin.ASKBRIDGE_PUBLIC_URL,
  ASKBRIDGE_MCP_TIMEOUT: agent.ASKBRIDGE_MCP_TIMEOUT,
  ASKBRIDGE_HOOK_TIMEOUT: agent.ASKBRIDGE_HOOK_TIMEOUT,
  ASKBRIDGE_HOOK_TIMEOUT_DECISION: agent.ASKBRIDGE_HOOK_TIMEOUT_DECISION,
  ASKBRIDGE_MAX_WAITING_ASKS: server.ASKBRIDGE_MAX_WAITING_ASKS,
  ASKBRIDGE_TRUSTED_PROXIES: server.ASKBRIDGE_TRUSTED_PROXIES,
  ASKBRIDGE_BODY_TIMEOUT: server.ASKBRIDGE_BODY_TIMEOUT,
  ASKBRIDGE_MAX_CONNECTIONS: server.ASKBRIDGE_MAX_CONNECTIONS,
  ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT: server.ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT,
  ASKBRIDGE_MAX_STREAMS: server.ASKBRIDGE_MAX_STREAMS,
  ASKBRIDGE_MAX_STREAMS_PER_CLIENT: server.ASKBRIDGE_MAX_STREAMS_PER_CLIENT,
  ASKBRIDGE_AGENT_ID: agent.ASKBRIDGE_AGENT_ID,
  ASKBRIDGE_RETENTION: store.ASKBRIDGE_RETENTION,
  ASKBRIDGE_AUDIT_RETENTION: store.ASKBRIDGE_AUDIT_RETENTION,
  ASKBRIDGE_LOG_LEVEL: server.ASKBRIDGE_LOG_LEVEL,
  ASKBRIDGE_OIDC_ISSUER: signin.ASKBRIDGE_OIDC_ISSUER,
  ASKBRIDGE_OIDC_CLIENT_ID: signin.ASKBRIDGE_OIDC_CLIENT_ID,
  ASKBRIDGE_OIDC_CLIENT_SECRET: signin.ASKBRIDGE_OIDC_CLIENT_SECRET,
  ASKBRIDGE_OIDC_REDIRECT_URI: signin.ASKBRIDGE_OIDC_REDIRECT_URI,
  PAGERDUTY_API_TOKEN: agent.PAGERDUTY_API_TOKEN,
  PAGERDUTY_API_URL: agent.PAGERDUTY_API_URL,
})

/**
 * Rules across variables. They run on the raw values even when a single variable is bad, so
 * one message names every problem.
 */
function crossProblems(
  raw: Record<string, string | undefined>,
  platforms: readonly PlatformModule[],
): string[] {
  const get = (key: string) => {
    const v = raw[key]?.trim()
    return v ? v : undefined
  }
  const problems = [...accessProblems(get), ...signinProblems(get)]
  for (const platform of platforms) problems.push(...(platform.crossProblems?.(get) ?? []))
  return problems
}

/** The core's own variables. */
export type CoreConfig = z.output<typeof envSchema>

/**
 * A validated configuration: the core's variables, and each platform's (by variable name, read
 * through the platform's `envOf`).
 */
export type Config = CoreConfig & { readonly [variable: string]: unknown }

/** The whole schema: the core's variables and every platform's fragment. */
export function schemaOf(platforms: readonly PlatformModule[]) {
  const fragments: Record<string, PlatformModule['env'][string]> = {}
  for (const platform of platforms) Object.assign(fragments, platform.env)
  return envSchema.extend(fragments)
}

/**
 * Validate an environment with the platforms' variables. Throws one ConfigError naming every
 * problem.
 */
export function parseConfig(
  env: Record<string, string | undefined>,
  platforms: readonly PlatformModule[],
): Config {
  const parsed = schemaOf(platforms).safeParse(env)
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => {
        const key = issue.path.map(String).join('.') || '(environment)'
        // Never echo a value: it may be a secret. The messages here never include the input.
        return `${key} ${issue.message}`
      })
  problems.push(...crossProblems(env, platforms))
  if (parsed.success) problems.push(...requesterProblems(parsed.data as Config, platforms))
  if (parsed.success && problems.length === 0) return parsed.data as Config
  throw new ConfigError(problems)
}

/**
 * Agent tokens' requesters on a platform: one the platforms know, with a user id of the
 * platform's shape. Values from the tokens file are never echoed.
 */
function requesterProblems(config: CoreConfig, platforms: readonly PlatformModule[]): string[] {
  const named = ['email', ...platforms.filter((p) => p.ids).map((p) => p.id)].join(', ')
  return (config.ASKBRIDGE_AGENT_TOKENS ?? []).flatMap((token, i) => {
    const requester = token.requester
    if (!requester || requester.platform === 'email') return []
    const at = `ASKBRIDGE_AGENT_TOKENS: tokens.${i}.requester`
    const ids = platforms.find((p) => p.id === requester.platform)?.ids
    if (!ids) return [`${at} names no platform askbridge knows (${named})`]
    return ids.user.pattern.test(requester.userId) ? [] : [`${at} is not a ${ids.user.what}`]
  })
}

/** Values that must never reach a log line. */
export function secretsOf(config: Config, platforms: readonly PlatformModule[]): string[] {
  return [
    config.ASKBRIDGE_API_TOKEN,
    ...platforms.flatMap((p) => p.secrets.map((variable) => config[variable])),
    dbPassword(config.ASKBRIDGE_DB),
    config.PAGERDUTY_API_TOKEN,
    config.ASKBRIDGE_OIDC_CLIENT_SECRET,
  ].filter((v): v is string => typeof v === 'string' && v.length > 0)
}
