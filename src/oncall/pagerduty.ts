import { z } from 'zod'
import { AskbridgeError } from '../errors.js'

/** Options of {@link PagerDutyClient}. */
export interface PagerDutyClientOptions {
  /** A REST API key (`PAGERDUTY_API_TOKEN`). Sent as `Authorization: Token token=…`, never logged. */
  token: string
  /** @default https://api.pagerduty.com */
  apiUrl?: string
  /** Per request. @default 5000 */
  timeoutMs?: number
  /** How often a 429 is retried after its Retry-After. @default 2 */
  maxRetries?: number
  /** A Retry-After longer than this is not waited for: the look-up fails instead. @default 10000 */
  maxRetryAfterMs?: number
  /** Entries per page. PagerDuty allows at most 100. @default 100 */
  pageSize?: number
}

/** One person on call, from `GET /oncalls` with `include[]=users`. */
export interface PagerDutyOnCall {
  user: { id: string; name: string; email: string }
  level: number
  policyId: string
  scheduleId?: string
  /** Epoch ms; undefined: always on call. */
  start?: number
  /** Epoch ms; undefined: does not go off call. */
  end?: number
}

export type PagerDutyErrorCode =
  | 'unauthorized'
  | 'not-found'
  | 'rate-limited'
  | 'unavailable'
  | 'bad-response'

/** A failed PagerDuty request; the message never contains the token. */
export class PagerDutyError extends AskbridgeError {
  override readonly name = 'PagerDutyError'
  constructor(
    readonly code: PagerDutyErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message)
  }
}

const reference = z.object({ id: z.string(), summary: z.string().optional() })
const oncallSchema = z.object({
  escalation_level: z.number().int(),
  escalation_policy: reference,
  schedule: reference.nullable().optional(),
  user: z.object({
    id: z.string(),
    // With include[]=users the user is the full object; without, a reference (no email).
    name: z.string().optional(),
    summary: z.string().optional(),
    email: z.string().optional(),
  }),
  start: z.string().nullable().optional(),
  end: z.string().nullable().optional(),
})
const oncallsPage = z.object({
  oncalls: z.array(oncallSchema),
  limit: z.number().int().optional(),
  offset: z.number().int().optional(),
  more: z.boolean().optional(),
})
const named = z.object({ id: z.string(), name: z.string().optional(), summary: z.string().optional() })

const time = (v: string | null | undefined) => {
  if (!v) return undefined
  const t = Date.parse(v)
  return Number.isNaN(t) ? undefined : t
}

/**
 * A small client for the parts of PagerDuty's REST API v2 askbridge reads: who is on call
 * (`GET /oncalls`, every page) and whether a schedule or escalation policy exists. A 429 is
 * retried after its `Retry-After` (or `ratelimit-reset`) seconds.
 */
export class PagerDutyClient {
  readonly apiUrl: string
  private readonly token: string
  private readonly timeoutMs: number
  private readonly maxRetries: number
  private readonly maxRetryAfterMs: number
  private readonly pageSize: number

  constructor(options: PagerDutyClientOptions) {
    this.token = options.token
    this.apiUrl = (options.apiUrl ?? 'https://api.pagerduty.com').replace(/\/+$/, '')
    this.timeoutMs = options.timeoutMs ?? 5000
    this.maxRetries = options.maxRetries ?? 2
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 10_000
    this.pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100))
  }

  /** Everyone on call now for these schedules or escalation policies (all pages). */
  async onCalls(filter: {
    scheduleIds?: string[]
    escalationPolicyIds?: string[]
  }): Promise<PagerDutyOnCall[]> {
    const out: PagerDutyOnCall[] = []
    for (let offset = 0, page = 0; page < 50; page++) {
      const query = new URLSearchParams()
      query.append('include[]', 'users')
      for (const id of filter.scheduleIds ?? []) query.append('schedule_ids[]', id)
      for (const id of filter.escalationPolicyIds ?? []) query.append('escalation_policy_ids[]', id)
      query.set('time_zone', 'UTC')
      query.set('limit', String(this.pageSize))
      query.set('offset', String(offset))
      const body = oncallsPage.safeParse(await this.get(`/oncalls?${query}`))
      if (!body.success)
        throw new PagerDutyError('bad-response', 'PagerDuty answered GET /oncalls in an unknown shape')
      for (const o of body.data.oncalls) {
        const email = o.user.email
        if (!email) continue // a user reference without include[]=users: nobody to reach
        const start = time(o.start)
        const end = time(o.end)
        out.push({
          user: { id: o.user.id, name: o.user.name ?? o.user.summary ?? email, email: email.toLowerCase() },
          level: o.escalation_level,
          policyId: o.escalation_policy.id,
          ...(o.schedule?.id ? { scheduleId: o.schedule.id } : {}),
          ...(start === undefined ? {} : { start }),
          ...(end === undefined ? {} : { end }),
        })
      }
      if (!body.data.more || body.data.oncalls.length === 0) return out
      offset += body.data.oncalls.length
    }
    return out
  }

  /** The schedule, or undefined when PagerDuty has none with this id. */
  schedule(id: string): Promise<{ id: string; name: string } | undefined> {
    return this.getNamed(`/schedules/${encodeURIComponent(id)}`, 'schedule')
  }

  /** The escalation policy, or undefined when PagerDuty has none with this id. */
  escalationPolicy(id: string): Promise<{ id: string; name: string } | undefined> {
    return this.getNamed(`/escalation_policies/${encodeURIComponent(id)}`, 'escalation_policy')
  }

  private async getNamed(path: string, key: string): Promise<{ id: string; name: string } | undefined> {
    try {
      const body = z.record(z.string(), z.unknown()).safeParse(await this.get(path))
      const item = named.safeParse(body.success ? body.data[key] : undefined)
      if (!item.success)
        throw new PagerDutyError('bad-response', `PagerDuty answered GET ${path} in an unknown shape`)
      return { id: item.data.id, name: item.data.name ?? item.data.summary ?? item.data.id }
    } catch (error) {
      if (error instanceof PagerDutyError && error.code === 'not-found') return undefined
      throw error
    }
  }

  private async get(path: string): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      let res: Response
      try {
        res = await fetch(`${this.apiUrl}${path}`, {
          headers: {
            accept: 'application/vnd.pagerduty+json;version=2',
            authorization: `Token token=${this.token}`,
          },
          signal: AbortSignal.timeout(this.timeoutMs),
        })
      } catch (error) {
        const why = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'unreachable'
        throw new PagerDutyError('unavailable', `PagerDuty (${this.apiUrl}) is ${why}`)
      }
      if (res.status === 429) {
        await res.body?.cancel()
        const wait = retryAfterMs(res.headers)
        if (attempt >= this.maxRetries || wait > this.maxRetryAfterMs) {
          throw new PagerDutyError('rate-limited', 'PagerDuty is rate limiting askbridge (429)', 429)
        }
        await new Promise((r) => setTimeout(r, wait))
        continue
      }
      if (res.status === 401 || res.status === 403) {
        await res.body?.cancel()
        throw new PagerDutyError(
          'unauthorized',
          `PagerDuty refused the API token (PAGERDUTY_API_TOKEN): HTTP ${res.status}`,
          res.status,
        )
      }
      if (res.status === 404) {
        await res.body?.cancel()
        throw new PagerDutyError('not-found', `PagerDuty has nothing at GET ${path.split('?')[0]}`, 404)
      }
      if (!res.ok) {
        await res.body?.cancel()
        throw new PagerDutyError('unavailable', `PagerDuty answered HTTP ${res.status}`, res.status)
      }
      try {
        return await res.json()
      } catch {
        throw new PagerDutyError('bad-response', 'PagerDuty answered with something that is not JSON')
      }
    }
  }
}

/** `Retry-After` (seconds or an HTTP date), else `ratelimit-reset` (seconds); at least 0. */
function retryAfterMs(headers: Headers): number {
  const value = headers.get('retry-after') ?? headers.get('ratelimit-reset')
  if (!value) return 1000
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? 1000 : Math.max(0, date - Date.now())
}
