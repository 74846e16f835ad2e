import { existsSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname, resolve } from 'node:path'
import { z } from 'zod'
import type { PlatformModule } from '../platform.js'
import { parseDuration } from '../routing/duration.js'
import { DEFAULT_EDGE_LIMITS as EDGE } from '../server/edge.js'
import { isPostgresUrl, parsePostgresUrl } from '../store/pg-url.js'

/** Hosts that never leave the machine; anything else needs ASKBRIDGE_API_TOKEN. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/** An optional variable: trimmed, and unset when empty. */
export const optionalText = z
  .string()
  .transform((v) => v.trim())
  .optional()
  .transform((v) => (v === '' ? undefined : v))

/** An optional http(s) URL variable; the message names what it is for. */
export const url = (what: string) =>
  optionalText.refine((v) => v === undefined || /^https?:\/\/[^\s]+$/.test(v), {
    message: `must be an http(s) URL for ${what}`,
  })

/**
 * What is wrong with an ASKBRIDGE_DB value, caught here so it is named with every other problem
 * rather than failing later, alone, when the store opens.
 */
function dbProblem(value: string): string | undefined {
  if (value === 'memory' || value === ':memory:') return undefined
  if (isPostgresUrl(value)) {
    const parsed = parsePostgresUrl(value)
    return 'problem' in parsed ? parsed.problem : undefined
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) && !value.startsWith('sqlite:')) {
    return 'must be sqlite:PATH, a file path or a postgres:// URL'
  }
  const path = value.startsWith('sqlite:') ? value.slice('sqlite:'.length) : value
  // An empty path would open a throwaway database: every question lost on restart.
  if (path.trim() === '') return 'needs a file path after "sqlite:"'
  const dir = dirname(resolve(path))
  if (!existsSync(dir)) return `the directory ${dir} does not exist`
  return undefined
}

const port = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return 8787
    const n = Number(v)
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      ctx.addIssue({ code: 'custom', message: `must be a port number 0-65535, got "${v}"` })
      return z.NEVER
    }
    return n
  })

const seconds = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback
      const n = Number(v)
      if (!Number.isInteger(n) || (n <= 0 && n !== -1)) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number of seconds (or -1), got "${v}"` })
        return z.NEVER
      }
      return n
    })

/** A retention period in ms: a duration such as `30d`, or `0` to keep everything. */
const retention = (fallback: number) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return fallback
    if (/^0+$/.test(v)) return 0
    const ms = parseDuration(v)
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration such as 30d, 12h or 90m, or 0 to keep everything, got "${v}"`,
      })
      return z.NEVER
    }
    return ms
  })

/** A whole number, 1 or more, of `what`; `fallback` when unset. */
const count = (fallback: number, what: string) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return fallback
    const n = Number(v)
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number of ${what} (1 or more), got "${v}"` })
      return z.NEVER
    }
    return n
  })

/** How many asks may wait on HTTP connections at once (ASKBRIDGE_MAX_WAITING_ASKS). */
export const DEFAULT_MAX_WAITING_ASKS = 5000

/** Every environment variable askbridge reads (see ARCHITECTURE.md, `.env.example`). */
export const envSchema = z.object({
  ASKBRIDGE_HOST: optionalText.transform((v) => v ?? '127.0.0.1'),
  ASKBRIDGE_PORT: port,
  ASKBRIDGE_DB: optionalText.transform((v, ctx) => {
    const problem = dbProblem(v ?? './askbridge.db')
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem })
      return z.NEVER
    }
    return v ?? './askbridge.db'
  }),
  ASKBRIDGE_API_TOKEN: optionalText.refine((v) => v === undefined || v.length >= 8, {
    message: 'must be at least 8 characters',
  }),
  ASKBRIDGE_ROUTES: optionalText,
  ASKBRIDGE_URL: url('the bridge').transform((v) => v ?? 'http://127.0.0.1:8787'),
  /** Where people reach this bridge (links from chat platforms into the inbox); no trailing slash. */
  ASKBRIDGE_PUBLIC_URL: url('links into the inbox (https://askbridge.example.com)').transform((v) =>
    v?.replace(/\/+$/, ''),
  ),
  ASKBRIDGE_MCP_TIMEOUT: seconds(50),
  /** Hook requests that name no timeout answer "no decision" before this (milliseconds after parsing); Claude Code's own default. */
  ASKBRIDGE_HOOK_TIMEOUT: optionalText.transform((v, ctx) => {
    if (v === undefined) return 600_000
    const ms = /^\d+$/.test(v) ? Number(v) * 1000 : parseDuration(v)
    if (ms === undefined || ms < 1000) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration such as 55s or 10m (or seconds), got "${v}"`,
      })
      return z.NEVER
    }
    return ms
  }),
  /** What a Claude Code PreToolUse hook answers when nobody decides in time: ask (its own prompt) or deny. */
  ASKBRIDGE_HOOK_TIMEOUT_DECISION: optionalText
    .pipe(z.enum(['ask', 'deny']).optional())
    .transform((v) => v ?? 'ask'),
  /** Blocking and timed asks (`POST /v1/ask`) waiting at once; more get 503 OVERLOADED. */
  ASKBRIDGE_MAX_WAITING_ASKS: optionalText.transform((v, ctx) => {
    if (v === undefined) return DEFAULT_MAX_WAITING_ASKS
    const n = Number(v)
    if (!Number.isInteger(n) || n < 1) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number of asks (1 or more), got "${v}"` })
      return z.NEVER
    }
    return n
  }),
  /** Peers (IP addresses) whose Forwarded / X-Forwarded-* headers a bridge without a token accepts. */
  ASKBRIDGE_TRUSTED_PROXIES: optionalText.transform((v, ctx) => {
    const list = (v ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean)
    const bad = list.filter((a) => isIP(a) === 0)
    if (bad.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `must be IP addresses separated by commas (such as 127.0.0.1,::1); not addresses: ${bad.join(', ')}`,
      })
      return z.NEVER
    }
    return list
  }),
  /** A request (headers and body) must arrive within this (ms); long waits after it are not limited. */
  ASKBRIDGE_BODY_TIMEOUT: optionalText.transform((v, ctx) => {
    if (v === undefined) return EDGE.bodyTimeoutMs
    const ms = /^\d+$/.test(v) ? Number(v) * 1000 : parseDuration(v)
    if (ms === undefined || ms < 100) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration such as 30s or 500ms (or seconds), at least 100ms, got "${v}"`,
      })
      return z.NEVER
    }
    return ms
  }),
  ASKBRIDGE_MAX_CONNECTIONS: count(EDGE.connections, 'connections'),
  ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT: count(EDGE.connectionsPerClient, 'connections'),
  ASKBRIDGE_MAX_STREAMS: count(EDGE.streams, 'event streams'),
  ASKBRIDGE_MAX_STREAMS_PER_CLIENT: count(EDGE.streamsPerClient, 'event streams'),
  ASKBRIDGE_AGENT_ID: optionalText.refine((v) => v === undefined || /^[A-Za-z0-9_.:-]{1,64}$/.test(v), {
    message: 'must be 1-64 characters of A-Z a-z 0-9 _ . : -',
  }),
  /** Settled and dropped calls older than this are pruned (ms; 0 keeps everything). */
  ASKBRIDGE_RETENTION: retention(30 * 86_400_000),
  /** Audit entries older than this are pruned (ms; 0, the default, keeps the audit). */
  ASKBRIDGE_AUDIT_RETENTION: retention(0),
  ASKBRIDGE_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).optional().default('info'),
  ASKBRIDGE_OIDC_ISSUER: url('the OpenID Connect provider (its issuer URL)'),
  ASKBRIDGE_OIDC_CLIENT_ID: optionalText,
  ASKBRIDGE_OIDC_CLIENT_SECRET: optionalText,
  ASKBRIDGE_OIDC_REDIRECT_URI: url('the inbox sign-in callback (https://HOST/inbox/callback)'),
  PAGERDUTY_API_TOKEN: optionalText,
  PAGERDUTY_API_URL: url('the PagerDuty REST API'),
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
  const problems: string[] = []
  const host = get('ASKBRIDGE_HOST') ?? '127.0.0.1'
  if (!isLoopback(host) && get('ASKBRIDGE_API_TOKEN') === undefined) {
    problems.push(`ASKBRIDGE_API_TOKEN is required when ASKBRIDGE_HOST (${host}) is not loopback`)
  }
  const oidc = ['ASKBRIDGE_OIDC_ISSUER', 'ASKBRIDGE_OIDC_CLIENT_ID', 'ASKBRIDGE_OIDC_CLIENT_SECRET']
  const oidcSet = oidc.filter((key) => get(key) !== undefined)
  if (oidcSet.length > 0 && oidcSet.length < oidc.length) {
    const missing = oidc.filter((key) => get(key) === undefined)
    problems.push(
      `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} needed with ${oidcSet.join(' and ')} (inbox sign-in)`,
    )
  }
  if (
    oidcSet.length === oidc.length &&
    get('ASKBRIDGE_OIDC_REDIRECT_URI') === undefined &&
    get('ASKBRIDGE_PUBLIC_URL') === undefined
  ) {
    // Never built from a request's Host header: anyone could name their own host there.
    problems.push(
      'ASKBRIDGE_OIDC_REDIRECT_URI or ASKBRIDGE_PUBLIC_URL is needed with ASKBRIDGE_OIDC_ISSUER (where the provider sends people back after sign-in)',
    )
  }
  if (get('ASKBRIDGE_OIDC_REDIRECT_URI') !== undefined && oidcSet.length === 0) {
    problems.push('ASKBRIDGE_OIDC_REDIRECT_URI is set but ASKBRIDGE_OIDC_ISSUER is not')
  }
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
function schemaOf(platforms: readonly PlatformModule[]) {
  const fragments: Record<string, PlatformModule['env'][string]> = {}
  for (const platform of platforms) Object.assign(fragments, platform.env)
  return envSchema.extend(fragments)
}

/** A configuration problem; `message` names every bad variable, meant to be printed as-is. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  readonly problems: string[]
  constructor(problems: string[]) {
    super(`askbridge: invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.problems = problems
  }
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
  if (parsed.success && problems.length === 0) return parsed.data as Config
  throw new ConfigError(problems)
}

function dbPassword(value: string): string | undefined {
  if (!isPostgresUrl(value)) return undefined
  const parsed = parsePostgresUrl(value)
  return 'target' in parsed ? parsed.target.password : undefined
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

/**
 * Where people reach the bridge, for links from chat platforms into the inbox:
 * ASKBRIDGE_PUBLIC_URL, else what precedes `/inbox/callback` in ASKBRIDGE_OIDC_REDIRECT_URI (the
 * address the sign-in provider sends people back to), else unknown (the listen address is often
 * loopback, which a link in a chat message cannot reach).
 */
export function publicUrlOf(config: Config): string | undefined {
  if (config.ASKBRIDGE_PUBLIC_URL) return config.ASKBRIDGE_PUBLIC_URL
  const redirect = config.ASKBRIDGE_OIDC_REDIRECT_URI
  const m = redirect ? /^(https?:\/\/.+?)\/inbox\/callback\/?$/.exec(redirect) : null
  return m?.[1]
}

/**
 * Where the sign-in provider sends people back: ASKBRIDGE_OIDC_REDIRECT_URI, else
 * ASKBRIDGE_PUBLIC_URL + `/inbox/callback`. Configuration only, never a request's Host header.
 */
export function redirectUriOf(config: Config): string | undefined {
  if (config.ASKBRIDGE_OIDC_REDIRECT_URI) return config.ASKBRIDGE_OIDC_REDIRECT_URI
  return config.ASKBRIDGE_PUBLIC_URL ? `${config.ASKBRIDGE_PUBLIC_URL}/inbox/callback` : undefined
}
