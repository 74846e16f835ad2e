/** The server's and its edge's variables (listen address, API tokens, connection and wait caps, log level), and the host/token rule. */
import { isIP } from 'node:net'
import { z } from 'zod'
import { parseDuration } from '../routing/duration.js'
import { type AgentTokenEntry, loadAgentTokens } from './agent-tokens.js'
import { DEFAULT_EDGE_LIMITS as EDGE } from './edge-limits.js'
import { count, optionalText, port } from './values.js'

/** Hosts that never leave the machine; anything else needs ASKBRIDGE_API_TOKEN. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/** How many asks may wait on HTTP connections at once (ASKBRIDGE_MAX_WAITING_ASKS). */
export const DEFAULT_MAX_WAITING_ASKS = 5000

export const serverVars = {
  ASKBRIDGE_HOST: optionalText
    .transform((v) => v ?? '127.0.0.1')
    .meta({ description: 'HTTP listen address. Anything but loopback requires `ASKBRIDGE_API_TOKEN`.' }),
  ASKBRIDGE_PORT: port.meta({ description: 'HTTP listen port.' }),
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
  ASKBRIDGE_LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error'])
    .optional()
    .default('info')
    .meta({ description: 'Level of the JSON-lines log on stderr: `debug`, `info`, `warn`, `error`.' }),
}

/** Listening beyond loopback needs a token: the rule across ASKBRIDGE_HOST and the token variables. */
export function accessProblems(get: (key: string) => string | undefined): string[] {
  const host = get('ASKBRIDGE_HOST') ?? '127.0.0.1'
  if (
    !isLoopback(host) &&
    get('ASKBRIDGE_API_TOKEN') === undefined &&
    get('ASKBRIDGE_AGENT_TOKENS') === undefined
  ) {
    return [
      `ASKBRIDGE_API_TOKEN (or ASKBRIDGE_AGENT_TOKENS) is required when ASKBRIDGE_HOST (${host}) is not loopback`,
    ]
  }
  return []
}
