/**
 * A fake PagerDuty REST API v2, speaking the documented shapes of the parts askbridge reads:
 * `GET /oncalls` (filters `schedule_ids[]`, `escalation_policy_ids[]`, `include[]=users`,
 * pagination by `limit`/`offset`/`more`), `GET /schedules/{id}` and
 * `GET /escalation_policies/{id}`. Token auth (`Authorization: Token token=…`), the v2 media
 * type, 429 with `Retry-After`, and an outage switch. On-calls are computed from shifts on the
 * fake's own clock, the way PagerDuty computes them from schedules.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakePagerDutyUser {
  id: string
  name: string
  email: string
}

/** Someone on call for a policy level (through a schedule, or directly), from `start` to `end`. */
export interface FakeShift {
  user: string
  policy: string
  level: number
  schedule?: string
  /** Epoch ms; absent: always. */
  start?: number
  end?: number
}

export interface FakePagerDutyRequest {
  method: string
  path: string
  query: URLSearchParams
  status: number
  accept: string | undefined
}

const V2 = 'application/vnd.pagerduty+json;version=2'

export class FakePagerDuty {
  readonly token: string
  readonly users = new Map<string, FakePagerDutyUser>()
  readonly schedules = new Map<string, string>()
  readonly policies = new Map<string, string>()
  shifts: FakeShift[] = []
  readonly requests: FakePagerDutyRequest[] = []
  /** Every request fails with 503 while true. */
  down = false
  now: () => number
  #server: Server
  #url = ''
  #rateLimited: Array<{ retryAfter: number }> = []

  private constructor(options: { token: string; now: () => number }) {
    this.token = options.token
    this.now = options.now
    this.#server = createServer((req, res) => this.#handle(req, res))
  }

  static async start(options: { token?: string; now?: () => number } = {}): Promise<FakePagerDuty> {
    const fake = new FakePagerDuty({ token: options.token ?? 'pd-fake-token', now: options.now ?? Date.now })
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve))
    fake.#url = `http://127.0.0.1:${(fake.#server.address() as AddressInfo).port}`
    return fake
  }

  get url(): string {
    return this.#url
  }

  /** The next `count` requests get 429 with `Retry-After: retryAfter` (seconds). */
  rateLimit(count: number, retryAfter = 1): void {
    for (let i = 0; i < count; i++) this.#rateLimited.push({ retryAfter })
  }

  /** Successful `GET /oncalls` requests so far (each page counts). */
  get oncallRequests(): number {
    return this.requests.filter((r) => r.path === '/oncalls' && r.status === 200).length
  }

  close(): Promise<void> {
    this.#server.closeAllConnections()
    return new Promise((resolve) => this.#server.close(() => resolve()))
  }

  #handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', this.#url)
    const accept = req.headers.accept
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        status,
        accept,
      })
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
    }
    const error = (status: number, message: string, code: number) =>
      send(status, { error: { message, code, errors: [] } })
    if (this.down) return error(503, 'Service Unavailable', 5003)
    const limited = this.#rateLimited.shift()
    if (limited) {
      return send(
        429,
        { error: { message: 'Rate Limit Exceeded', code: 2020, errors: [] } },
        {
          'retry-after': String(limited.retryAfter),
          'ratelimit-limit': '960',
          'ratelimit-remaining': '0',
          'ratelimit-reset': String(limited.retryAfter),
        },
      )
    }
    const auth = /^Token token=(.+)$/.exec(req.headers.authorization ?? '')
    if (!auth || auth[1] !== this.token) return error(401, 'Unauthorized', 2006)
    if (
      accept !== undefined &&
      !accept.split(',').some((a) => [V2, 'application/json', '*/*'].includes(a.trim()))
    )
      return error(406, 'Not Acceptable', 2001)
    if (req.method !== 'GET') return error(405, 'Method Not Allowed', 2001)

    const schedule = /^\/schedules\/([^/]+)$/.exec(url.pathname)
    if (schedule) {
      const id = decodeURIComponent(schedule[1] ?? '')
      const name = this.schedules.get(id)
      if (name === undefined) return error(404, 'Not Found', 2100)
      return send(200, {
        schedule: { ...this.#ref('schedule', id, name), type: 'schedule', name, time_zone: 'UTC' },
      })
    }
    const policy = /^\/escalation_policies\/([^/]+)$/.exec(url.pathname)
    if (policy) {
      const id = decodeURIComponent(policy[1] ?? '')
      const name = this.policies.get(id)
      if (name === undefined) return error(404, 'Not Found', 2100)
      const levels = [...new Set(this.shifts.filter((s) => s.policy === id).map((s) => s.level))].sort()
      return send(200, {
        escalation_policy: {
          ...this.#ref('escalation_policy', id, name),
          type: 'escalation_policy',
          name,
          num_loops: 0,
          escalation_rules: levels.map((level) => ({
            id: `R${level}`,
            escalation_delay_in_minutes: 30,
            targets: this.shifts
              .filter((s) => s.policy === id && s.level === level)
              .map((s) =>
                s.schedule
                  ? this.#ref('schedule', s.schedule, this.schedules.get(s.schedule) ?? s.schedule)
                  : this.#ref('user', s.user, this.users.get(s.user)?.name ?? s.user),
              ),
          })),
        },
      })
    }
    if (url.pathname === '/oncalls') return this.#oncalls(url.searchParams, send, error)
    return error(404, 'Not Found', 2100)
  }

  #oncalls(
    q: URLSearchParams,
    send: (status: number, body: unknown) => void,
    error: (status: number, message: string, code: number) => void,
  ) {
    const limit = q.has('limit') ? Number(q.get('limit')) : 25
    const offset = q.has('offset') ? Number(q.get('offset')) : 0
    if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !Number.isInteger(offset) || offset < 0) {
      return error(400, 'Invalid Input Provided', 2001)
    }
    const schedules = q.getAll('schedule_ids[]')
    const policies = q.getAll('escalation_policy_ids[]')
    const full = q.getAll('include[]').includes('users')
    // No since/until: the on-calls running now.
    const now = this.now()
    const matching = this.shifts.filter(
      (s) =>
        (s.start ?? Number.NEGATIVE_INFINITY) <= now &&
        now < (s.end ?? Number.POSITIVE_INFINITY) &&
        (schedules.length === 0 || (s.schedule !== undefined && schedules.includes(s.schedule))) &&
        (policies.length === 0 || policies.includes(s.policy)),
    )
    const page = matching.slice(offset, offset + limit)
    send(200, {
      oncalls: page.map((s) => {
        const user = this.users.get(s.user) ?? {
          id: s.user,
          name: s.user,
          email: `${s.user}@example.invalid`,
        }
        return {
          escalation_policy: this.#ref(
            'escalation_policy',
            s.policy,
            this.policies.get(s.policy) ?? s.policy,
          ),
          escalation_level: s.level,
          schedule: s.schedule
            ? this.#ref('schedule', s.schedule, this.schedules.get(s.schedule) ?? s.schedule)
            : null,
          user: full
            ? {
                ...this.#ref('user', user.id, user.name),
                type: 'user',
                name: user.name,
                email: user.email,
                time_zone: 'UTC',
              }
            : this.#ref('user', user.id, user.name),
          start: s.start === undefined ? null : new Date(s.start).toISOString(),
          end: s.end === undefined ? null : new Date(s.end).toISOString(),
        }
      }),
      limit,
      offset,
      more: offset + page.length < matching.length,
      total: null,
    })
  }

  #ref(type: string, id: string, summary: string) {
    const plural = type === 'escalation_policy' ? 'escalation_policies' : `${type}s`
    return {
      id,
      type: `${type}_reference`,
      summary,
      self: `${this.#url}/${plural}/${id}`,
      html_url: `https://fake.pagerduty.com/${plural}/${id}`,
    }
  }
}
