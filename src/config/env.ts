import { existsSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname, resolve } from 'node:path'
import { z } from 'zod'
import { AskbridgeError } from '../errors.js'
import type { PlatformDescriptor as PlatformModule } from '../platform-descriptor.js'
import { parseDuration } from '../routing/duration.js'
import { isPostgresUrl, parsePostgresUrl } from '../store/pg-url.js'
import { type AgentTokenEntry, loadAgentTokens } from './agent-tokens.js'
import { DEFAULT_EDGE_LIMITS as EDGE } from './edge-limits.js'

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

/**
 * Every environment variable askbridge reads, each with its description (`.meta`), from which
 * docs/configuration.md is generated (`npm run docs:config`); `.env.example` lists them too.
 */
export const envSchema = z.object({
  ASKBRIDGE_HOST: optionalText
    .transform((v) => v ?? '127.0.0.1')
    .meta({ description: 'HTTP listen address. Anything but loopback requires `ASKBRIDGE_API_TOKEN`.' }),
  ASKBRIDGE_PORT: port.meta({ description: 'HTTP listen port.' }),
  ASKBRIDGE_DB: optionalText
    .transform((v, ctx) => {
      const problem = dbProblem(v ?? './askbridge.db')
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem })
        return z.NEVER
      }
      return v ?? './askbridge.db'
    })
    .meta({
      description:
        'Where questions, cards and the audit live: `sqlite:PATH` or a path (one bridge), or `postgres://USER:PASSWORD@HOST:PORT/DB[?schema=NAME]`, shared by several bridges. The password is secret.',
    }),
  ASKBRIDGE_API_TOKEN: optionalText
    .refine((v) => v === undefined || v.length >= 8, {
      message: 'must be at least 8 characters',
    })
    .meta({
      description:
        'Bearer token for the HTTP API, acting for every agent (at least 8 characters; never accepted by the inbox). Unset, with no agent tokens either: only clients on this machine are served (a loopback peer naming a loopback host, no proxy headers).',
    }),
  /** A JSON file of per-agent tokens (their SHA-256 digests, agent, scopes, requester). */
  ASKBRIDGE_AGENT_TOKENS: optionalText
    .transform((v, ctx): AgentTokenEntry[] | undefined => {
      if (v === undefined) return undefined
      const loaded = loadAgentTokens(v)
      if ('problems' in loaded) {
        for (const message of loaded.problems) ctx.addIssue({ code: 'custom', message })
        return z.NEVER
      }
      return loaded.tokens
    })
    .meta({
      description:
        'A JSON file of per-agent tokens: the SHA-256 digest of each token, the agent (or `prefix*`) it acts as, its scopes (`ask`, `answer`, `admin`), optionally the person it acts for (`requester`) and a rate limit. The file holds digests only (see docs/security.md).',
      unset: 'no agent tokens',
    }),
  ASKBRIDGE_ROUTES: optionalText.meta({
    description: 'Routes file (JSON): destinations, responders, quorum, escalation.',
    unset: 'one default route',
  }),
  ASKBRIDGE_URL: url('the bridge')
    .transform((v) => v ?? 'http://127.0.0.1:8787')
    .meta({ description: 'Where the clients (`askbridge ask`, `mcp`, `audit`, `hook`) find the bridge.' }),
  /** Where people reach this bridge (links from chat platforms into the inbox); no trailing slash. */
  ASKBRIDGE_PUBLIC_URL: url('links into the inbox (https://askbridge.example.com)')
    .transform((v) => v?.replace(/\/+$/, ''))
    .meta({
      description:
        'Where people reach this bridge (behind a proxy or TLS), for links from chat cards into the inbox; with inbox sign-in, `PUBLIC_URL/inbox/callback` is the redirect URI unless `ASKBRIDGE_OIDC_REDIRECT_URI` is set.',
      unset: 'the part of `ASKBRIDGE_OIDC_REDIRECT_URI` before `/inbox/callback`, else no links',
    }),
  ASKBRIDGE_MCP_TIMEOUT: seconds(50).meta({
    description:
      'Seconds an MCP `ask_user_question` call waits before returning "pending" (`-1`: until answered). Many MCP clients abort tool calls after about 60 s.',
  }),
  /** Hook requests that name no timeout answer "no decision" before this (milliseconds after parsing); Claude Code's own default. */
  ASKBRIDGE_HOOK_TIMEOUT: optionalText
    .transform((v, ctx) => {
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
    })
    .meta({
      description:
        'Claude Code hooks that name no timeout (`?timeout=`, `--timeout`) answer "no decision" before this (600 s, as the default of Claude Code): PreToolUse then answers `ASKBRIDGE_HOOK_TIMEOUT_DECISION`, PermissionRequest `{}` (`90s`, `10m`, or seconds).',
      unit: 'ms',
    }),
  /** What a Claude Code PreToolUse hook answers when nobody decides in time: ask (its own prompt) or deny. */
  ASKBRIDGE_HOOK_TIMEOUT_DECISION: optionalText
    .pipe(z.enum(['ask', 'deny']).optional())
    .transform((v) => v ?? 'ask')
    .meta({
      description:
        'What a PreToolUse hook answers when nobody decides in time: `ask` (Claude Code shows its own prompt) or `deny`. A Codex PreToolUse always denies (Codex has no ask).',
    }),
  /** Blocking and timed asks (`POST /v1/ask`) waiting at once; more get 503 OVERLOADED. */
  ASKBRIDGE_MAX_WAITING_ASKS: optionalText
    .transform((v, ctx) => {
      if (v === undefined) return DEFAULT_MAX_WAITING_ASKS
      const n = Number(v)
      if (!Number.isInteger(n) || n < 1) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number of asks (1 or more), got "${v}"` })
        return z.NEVER
      }
      return n
    })
    .meta({
      description:
        'Asks (`POST /v1/ask`, blocking or inside their window) that may wait for their answers at once; past it an ask gets 503 `OVERLOADED` with `Retry-After` and is not stored.',
    }),
  /** Peers (IP addresses) whose Forwarded / X-Forwarded-* headers a bridge without a token accepts. */
  ASKBRIDGE_TRUSTED_PROXIES: optionalText
    .transform((v, ctx) => {
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
    })
    .meta({
      description:
        'Proxies (IP addresses, comma-separated) whose `Forwarded` / `X-Forwarded-*` headers a bridge without a token accepts (others get 403 `FORWARDED_REFUSED`); the rightmost `X-Forwarded-For` address is then the client for the caps.',
    }),
  /** A request (headers and body) must arrive within this (ms); long waits after it are not limited. */
  ASKBRIDGE_BODY_TIMEOUT: optionalText
    .transform((v, ctx) => {
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
    })
    .meta({
      description:
        'A request (headers and body) must arrive within this, else 408 `REQUEST_TIMEOUT`; waiting for an answer afterwards is not limited (`30s`, `500ms`, or seconds).',
      unit: 'ms',
    }),
  ASKBRIDGE_MAX_CONNECTIONS: count(EDGE.connections, 'connections').meta({
    description:
      'Connections open at once in total; past it a new connection gets 503 `OVERLOADED` and is closed.',
  }),
  ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT: count(EDGE.connectionsPerClient, 'connections').meta({
    description:
      'Connections open at once per client address; past it a new connection gets 429 `TOO_MANY_CONNECTIONS` and is closed.',
  }),
  ASKBRIDGE_MAX_STREAMS: count(EDGE.streams, 'event streams').meta({
    description:
      'Server-Sent Events streams (inbox pages, late replies) open at once in total; past it 503 `OVERLOADED` with `Retry-After`.',
  }),
  ASKBRIDGE_MAX_STREAMS_PER_CLIENT: count(EDGE.streamsPerClient, 'event streams').meta({
    description:
      'Server-Sent Events streams open at once per client; past it 429 `TOO_MANY_STREAMS` with `Retry-After`.',
  }),
  ASKBRIDGE_AGENT_ID: optionalText
    .refine((v) => v === undefined || /^[A-Za-z0-9_.:-]{1,64}$/.test(v), {
      message: 'must be 1-64 characters of A-Z a-z 0-9 _ . : -',
    })
    .meta({
      description:
        'The agent id `askbridge mcp` asks as (1-64 characters of `A-Z a-z 0-9 _ . : -`); late replies are queued to it.',
      unset: '`mcp`',
    }),
  /** Settled and dropped calls older than this are pruned (ms; 0 keeps everything). */
  ASKBRIDGE_RETENTION: retention(30 * 86_400_000).meta({
    description:
      'Settled and cancelled questions older than this are deleted with their log, card, posts and late replies (`30d`, `12h`, `90m`); `0` keeps everything. Open and continued questions are never deleted.',
    unit: 'ms',
  }),
  /** Audit entries older than this are pruned (ms; 0, the default, keeps the audit). */
  ASKBRIDGE_AUDIT_RETENTION: retention(0).meta({
    description: 'Audit entries older than this are deleted; `0` keeps the audit.',
    unit: 'ms',
  }),
  ASKBRIDGE_LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error'])
    .optional()
    .default('info')
    .meta({ description: 'Level of the JSON-lines log on stderr: `debug`, `info`, `warn`, `error`.' }),
  ASKBRIDGE_OIDC_ISSUER: url('the OpenID Connect provider (its issuer URL)').meta({
    description:
      "Inbox sign-in through OpenID Connect: the provider's issuer URL. With the client id and secret set, the inbox requires sign-in.",
    unset: 'no sign-in',
  }),
  ASKBRIDGE_OIDC_CLIENT_ID: optionalText.meta({
    description: 'Inbox sign-in: the OpenID Connect client id.',
  }),
  ASKBRIDGE_OIDC_CLIENT_SECRET: optionalText.meta({
    description: 'Inbox sign-in: the OpenID Connect client secret.',
  }),
  ASKBRIDGE_OIDC_REDIRECT_URI: url('the inbox sign-in callback (https://HOST/inbox/callback)').meta({
    description:
      "Inbox sign-in: the callback URL registered with the provider; never taken from a request's Host header.",
    unset: '`ASKBRIDGE_PUBLIC_URL/inbox/callback`',
  }),
  PAGERDUTY_API_TOKEN: optionalText.meta({
    description:
      'PagerDuty REST API key, needed when a route names a schedule or escalation policy (`oncall`).',
  }),
  PAGERDUTY_API_URL: url('the PagerDuty REST API').meta({
    description: 'PagerDuty REST base.',
    unset: '`https://api.pagerduty.com`',
  }),
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
  if (
    !isLoopback(host) &&
    get('ASKBRIDGE_API_TOKEN') === undefined &&
    get('ASKBRIDGE_AGENT_TOKENS') === undefined
  ) {
    problems.push(
      `ASKBRIDGE_API_TOKEN (or ASKBRIDGE_AGENT_TOKENS) is required when ASKBRIDGE_HOST (${host}) is not loopback`,
    )
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
export function schemaOf(platforms: readonly PlatformModule[]) {
  const fragments: Record<string, PlatformModule['env'][string]> = {}
  for (const platform of platforms) Object.assign(fragments, platform.env)
  return envSchema.extend(fragments)
}

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

function dbPassword(value: string): string | undefined {
  if (!isPostgresUrl(value)) return undefined
  const parsed = parsePostgresUrl(value)
  return 'target' in parsed ? parsed.target.password : undefined
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

/** Every inbox cookie (sign-in session, sign-in flow, one-time link) is `Secure` when people reach the bridge over https. */
export function secureCookiesOf(config: Config): boolean {
  return [publicUrlOf(config), redirectUriOf(config)].some((u) => u?.startsWith('https:') === true)
}
