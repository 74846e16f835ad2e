import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { AgentTokenEntry, Requester, Scope } from '../config/agent-tokens.js'
import { HttpError } from './errors.js'

/** Who is calling the `/v1` API, after the bearer token is checked. */
export interface Caller {
  /** For logs and the audit: `api-token`, `loopback`, or `agent-token:AGENT`. Never the token. */
  label: string
  /** Agent ids this caller may ask as and read: an exact id, a `prefix*`, or `*` for every agent. */
  agent: string
  scopes: ReadonlySet<Scope>
  requester?: Requester
  /** Per-token rate limit (agent tokens only). */
  ratePerMinute?: number
  /** The token's digest, the key of its rate limit. */
  key?: string
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/** The all-agents admin caller: ASKBRIDGE_API_TOKEN, or any loopback caller when no token is set. */
function adminCaller(label: string): Caller {
  return { label, agent: '*', scopes: new Set<Scope>(['ask', 'answer', 'admin']) }
}

/**
 * Checks bearer tokens for the `/v1` API. Tokens are compared as SHA-256 digests in constant
 * time, against every configured digest (so timing says nothing about which matched).
 */
export class Credentials {
  private readonly apiDigest: Buffer | undefined
  private readonly agents: Array<{ digest: Buffer; entry: AgentTokenEntry }>

  constructor(options: { apiToken?: string | undefined; agentTokens?: AgentTokenEntry[] | undefined }) {
    this.apiDigest = options.apiToken === undefined ? undefined : sha256(options.apiToken)
    this.agents = (options.agentTokens ?? []).map((entry) => ({
      digest: Buffer.from(entry.sha256, 'hex'),
      entry,
    }))
  }

  /** Whether any token is configured: then every API request needs one. */
  get required(): boolean {
    return this.apiDigest !== undefined || this.agents.length > 0
  }

  /** The caller a request's bearer token names, or undefined (no or a wrong token). */
  fromRequest(req: IncomingMessage): Caller | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
    const token = m?.[1]
    if (!token) return undefined
    const d = sha256(token)
    let found: Caller | undefined
    if (this.apiDigest && timingSafeEqual(d, this.apiDigest)) found = adminCaller('api-token')
    for (const { digest, entry } of this.agents) {
      if (timingSafeEqual(d, digest) && !found) {
        found = {
          label: `agent-token:${entry.agent}`,
          agent: entry.agent,
          scopes: new Set(entry.scopes.includes('admin') ? ['ask', 'answer', 'admin'] : entry.scopes),
          ...(entry.requester ? { requester: entry.requester } : {}),
          ratePerMinute: entry.ratePerMinute ?? 600,
          key: entry.sha256,
        }
      }
    }
    return found
  }

  /** The caller of a request that needs no token (none configured): a loopback admin. */
  static loopback(): Caller {
    return adminCaller('loopback')
  }
}

/** Whether `caller` may act for `agentId`. */
export function mayActFor(caller: Caller, agentId: string): boolean {
  if (caller.scopes.has('admin') || caller.agent === '*') return true
  if (caller.agent.endsWith('*')) return agentId.startsWith(caller.agent.slice(0, -1))
  return caller.agent === agentId
}

/** 403 unless `caller` holds `scope`. */
export function requireScope(caller: Caller, scope: Scope): void {
  if (caller.scopes.has('admin') || caller.scopes.has(scope)) return
  throw new HttpError('FORBIDDEN_SCOPE', `this token may not do that (it needs the "${scope}" scope)`)
}

/** 403 unless `caller` may act for `agentId`. */
export function requireAgent(caller: Caller, agentId: string): void {
  if (mayActFor(caller, agentId)) return
  throw new HttpError(
    'FORBIDDEN_AGENT',
    `this token asks as agent "${caller.agent}"; it may not act for agent "${agentId}"`,
  )
}

/**
 * The agent id a request names, checked against the caller: the named one (403 when the token
 * belongs to another agent), else the token's own agent, else `fallback`.
 */
export function agentOf(caller: Caller, named: string | undefined, fallback: string): string {
  if (named !== undefined) {
    requireAgent(caller, named)
    return named
  }
  if (!caller.scopes.has('admin') && !caller.agent.endsWith('*')) return caller.agent
  requireAgent(caller, fallback)
  return fallback
}

/**
 * The agent a list (calls, audit) is limited to: none for a caller of every agent that names none,
 * else the named agent (403 when the token may not act for it), else the token's own agent.
 */
export function listedAgent(caller: Caller, named: string | undefined): string | undefined {
  const everyAgent = caller.scopes.has('admin') || caller.agent === '*'
  if (named === undefined && everyAgent) return undefined
  if (named === undefined && caller.agent.endsWith('*')) {
    throw new HttpError('BAD_REQUEST', `name the agent with ?agentId= (this token covers "${caller.agent}")`)
  }
  return agentOf(caller, named, caller.agent)
}
