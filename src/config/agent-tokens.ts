import { readFileSync } from 'node:fs'
import { z } from 'zod'

/**
 * What a credential may do on the `/v1` API. `ask`: ask, wait, read its own calls, handle its own
 * replies, cancel its own calls. `answer`: also answer a continued call over the API where the
 * route's policy lets an API caller answer. `admin`: every agent's calls, the whole audit.
 * No scope acts on a card in the inbox: the inbox never accepts these tokens.
 */
export type Scope = 'ask' | 'answer' | 'admin'

/** The person an agent acts for (excluded from approving with `excludeRequester`). */
export interface Requester {
  platform: string
  userId: string
}

/** One agent token, as the tokens file names it (the token itself is never stored). */
export interface AgentTokenEntry {
  /** SHA-256 of the token, 64 hex characters. */
  sha256: string
  /** The agent id the token asks as, or a prefix ending in `*` (`claude-code:*`). */
  agent: string
  scopes: Scope[]
  requester?: Requester
  /** Requests a minute this token may make; more get 429 RATE_LIMITED. @default 600 */
  ratePerMinute?: number
}

const ID = /^[A-Za-z0-9_.:-]{1,64}$/
const agentPattern = z
  .string()
  .refine((v) => ID.test(v) || (v.endsWith('*') && (v.length === 1 || ID.test(v.slice(0, -1)))), {
    message: 'must be an agent id (1-64 characters of A-Z a-z 0-9 _ . : -), optionally ending in *',
  })
/**
 * `email:ADDRESS` or `PLATFORM:USER_ID`: parsed here, once; the platform and its user id rule are
 * checked against the platform modules with the rest of the configuration (`parseConfig`).
 */
const requesterSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}:\S{1,320}$/, 'must be email:ADDRESS or PLATFORM:USER_ID')
  .transform((v): Requester => {
    const at = v.indexOf(':')
    const platform = v.slice(0, at)
    const userId = v.slice(at + 1)
    return platform === 'email' ? { platform: 'email', userId: userId.toLowerCase() } : { platform, userId }
  })

const entrySchema = z.strictObject({
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the token, 64 hex characters')
    .transform((v) => v.toLowerCase()),
  agent: agentPattern,
  scopes: z.array(z.enum(['ask', 'answer', 'admin'])).min(1),
  requester: requesterSchema.optional(),
  ratePerMinute: z.number().int().min(1).max(1_000_000).optional(),
})
const fileSchema = z.strictObject({ tokens: z.array(entrySchema).min(1) })

/**
 * Read and check the tokens file (ASKBRIDGE_AGENT_TOKENS). Problems are returned, one line each,
 * never with a value from the file (it holds digests, still not for logs).
 */
export function loadAgentTokens(path: string): { tokens: AgentTokenEntry[] } | { problems: string[] } {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    return { problems: [`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`] }
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { problems: [`${path} is not JSON`] }
  }
  const parsed = fileSchema.safeParse(json)
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map(
        (i) => `${path}: ${i.path.map(String).join('.') || '(file)'} ${i.message}`,
      ),
    }
  }
  const seen = new Set<string>()
  const problems: string[] = []
  parsed.data.tokens.forEach((t, i) => {
    if (seen.has(t.sha256)) problems.push(`${path}: tokens.${i}.sha256 repeats an earlier token`)
    seen.add(t.sha256)
  })
  if (problems.length > 0) return { problems }
  return {
    tokens: parsed.data.tokens.map(
      (t): AgentTokenEntry => ({
        sha256: t.sha256,
        agent: t.agent,
        scopes: [...new Set(t.scopes)],
        ...(t.requester ? { requester: t.requester } : {}),
        ...(t.ratePerMinute === undefined ? {} : { ratePerMinute: t.ratePerMinute }),
      }),
    ),
  }
}
