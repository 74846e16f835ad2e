/**
 * Hostile input: a seeded property-based fuzz of every entry point. Bodies are authentic (Slack
 * and Discord requests carry valid signatures) but malformed: arbitrary JSON, and real payloads
 * with fields replaced, retyped or removed. Whatever arrives, the answer is a 4xx or a 2xx,
 * never a 500, and the process does not crash (an unhandled rejection fails the run).
 */
import { request as httpRequest } from 'node:http'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signSlackRequest } from '../../adapters/slack/verify.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { alice, type DiscordRig, discordRig } from '../discord/rig.js'
import { until } from '../helpers/service.js'
import { startBridge, type TestBridge } from '../server/helpers.js'
import { type Bridge, startBridge as startSlackBridge, startSlackRig } from '../slack/rig.js'

const RUNS = 2000
/** Thousands of requests on a shared 2-core machine: time enough, never a wall-clock assertion. */
const FUZZ_TIMEOUT_MS = 180_000
/** A request still waiting when the client gave up (a valid blocking ask). */
const HELD = 0
const SEED = 20261130

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }, { label: 'Green' }],
}
const regions: AskUserQuestionItem = {
  id: 'regions',
  question: 'Which regions?',
  multiSelect: true,
  options: [{ label: 'eu' }, { label: 'us' }],
}

/** Every path to a value inside `value` (the root too). */
function pathsOf(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [prefix]
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...pathsOf(v, [...prefix, i]))
  } else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]))
  return out
}

const DELETE = Symbol('delete')

function setAt(root: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value === DELETE ? null : value
  if (typeof root !== 'object' || root === null) return root
  let node = root as Record<string | number, unknown>
  for (const key of path.slice(0, -1)) {
    const next = node[key]
    if (typeof next !== 'object' || next === null) return root
    node = next as Record<string | number, unknown>
  }
  const last = path.at(-1) as string | number
  if (value === DELETE) {
    if (Array.isArray(node)) node.splice(Number(last), 1)
    else delete node[last]
  } else node[last] = value
  return root
}

/** A real payload with one to three fields replaced by arbitrary JSON (or removed). */
function mutated(base: unknown): fc.Arbitrary<unknown> {
  const paths = pathsOf(base)
  const replacement = fc.oneof(
    fc.constant<unknown>(DELETE),
    fc.constant<unknown>(null),
    fc.jsonValue({ maxDepth: 2 }),
    fc.string({ maxLength: 8 }),
    fc.integer(),
  )
  return fc
    .array(fc.tuple(fc.nat({ max: paths.length - 1 }), replacement), { minLength: 1, maxLength: 3 })
    .map((changes) => {
      let copy = structuredClone(base)
      for (const [i, v] of changes) copy = setAt(copy, paths[i] as Array<string | number>, v)
      return copy
    })
}

/** Arbitrary JSON, or a real payload bent out of shape. */
function hostile(bases: unknown[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 4, arbitrary: fc.oneof(...bases.map(mutated)) },
  )
}

function checkStatuses(statuses: number[]): void {
  const counts: Record<number, number> = {}
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1
  console.log('statuses', JSON.stringify(counts))
  const bad = statuses.filter((s) => s >= 500)
  expect(statuses.length).toBeGreaterThanOrEqual(RUNS)
  expect(bad, `responses >= 500: ${bad.length}`).toEqual([])
}

describe('fuzz: the HTTP API', () => {
  let b: TestBridge
  beforeAll(async () => {
    b = await startBridge()
  })
  afterAll(async () => {
    await b.close()
  })

  it(`${RUNS} malformed requests to the /v1 routes and the inbox: no 5xx`, {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    // A short-timed ask, so one that happens to be valid does not hold the run.
    const ask = {
      questions: [colour, regions],
      callId: 'fuzz-1',
      agentId: 'agent-1',
      timeoutMs: 1,
      route: 'default',
    }
    const answer = { answers: [{ id: 'colour', selected: ['Red'] }], agentId: 'agent-1' }
    const action = { action: { type: 'choose', questionId: 'colour', label: 'Red' }, person: { name: 'Ann' } }
    const segment = fc.oneof(
      fc.constantFrom('fuzz-1', 'nope', '%E0%A4%A', '%00', '..', 'a'.repeat(70)),
      fc.string({ maxLength: 10 }).map(encodeURIComponent),
    )
    const target = fc.oneof(
      fc.constant({ method: 'POST', path: () => '/v1/ask' }),
      segment.map((s) => ({ method: 'POST', path: () => `/v1/questions/${s}/answer` })),
      segment.map((s) => ({ method: 'GET', path: () => `/v1/questions/${s}` })),
      segment.map((s) => ({ method: 'DELETE', path: () => `/v1/questions/${s}` })),
      fc
        .tuple(segment, segment)
        .map(([a, c]) => ({ method: 'POST', path: () => `/v1/agents/${a}/replies/${c}/admit` })),
      segment.map((s) => ({ method: 'GET', path: () => `/v1/agents/${s}/replies?waitSeconds=0` })),
      segment.map((s) => ({ method: 'GET', path: () => `/v1/audit?callId=${s}` })),
      segment.map((s) => ({ method: 'POST', path: () => `/inbox/api/cards/${s}/actions` })),
      segment.map((s) => ({ method: 'GET', path: () => `/v1/questions?agentId=${s}` })),
    )
    const body = fc.oneof(
      hostile([ask, answer, action]),
      fc.string({ maxLength: 40 }).map((s) => ({ raw: s })),
    )
    const statuses: number[] = []
    await b.bridge.service.askTimed(
      { questions: [colour], agent: b.bridge.service.agents.ensure('agent-1') },
      'fuzz-1',
      1,
    )
    await fc.assert(
      fc.asyncProperty(target, body, async (t, value) => {
        const raw = (value as { raw?: unknown } | null)?.raw
        const text = typeof raw === 'string' ? raw : JSON.stringify(value)
        let status: number
        try {
          const res = await fetch(`${b.url}${t.path()}`, {
            method: t.method,
            headers: { 'content-type': 'application/json' },
            ...(t.method === 'GET' ? {} : { body: text }),
            signal: AbortSignal.timeout(300),
          })
          await res.arrayBuffer()
          status = res.status
        } catch (error) {
          // A valid blocking ask waits for its answer: held, which is right, not a failure.
          if ((error as Error).name !== 'TimeoutError') throw error
          status = HELD
        }
        statuses.push(status)
        return status < 500
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    checkStatuses(statuses)
  })
})

/** A raw request with any header values (fetch would normalise or refuse some). */
function rawRequest(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, headers }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('fuzz: cookies and headers', () => {
  let b: TestBridge
  beforeAll(async () => {
    b = await startBridge({ ASKBRIDGE_API_TOKEN: 'fuzz-token-123456' })
  })
  afterAll(async () => {
    await b.close()
  })

  it('a malformed askbridge_token cookie is a wrong token (401), not a 500', async () => {
    const status = await rawRequest(b.url, 'GET', '/inbox/api/cards', {
      cookie: 'askbridge_token=%E0%A4%A',
    })
    expect(status).toBe(401)
  })

  it(`${RUNS} hostile cookie, authorization, host, origin and content headers: no 5xx`, {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map(String.fromCharCode) })
    const escapes = fc
      .array(fc.oneof(printable, fc.constantFrom('%', '%E0%A4%A', '%ZZ', '%00', '%C3%28', '=', ';')), {
        maxLength: 6,
      })
      .map((parts) => parts.join(''))
    const headers = fc.record(
      {
        cookie: fc.oneof(
          escapes.map((v) => `askbridge_token=${v}`),
          fc.tuple(escapes, escapes).map(([a, v]) => `${a}=${v}; askbridge_token=${v}`),
          escapes,
        ),
        authorization: fc.oneof(
          escapes.map((v) => `Bearer ${v}`),
          escapes,
        ),
        host: fc.oneof(fc.constantFrom('127.0.0.1', 'localhost:1', '[::1]', 'evil.example'), printable),
        origin: fc.oneof(fc.constantFrom('null', 'http://127.0.0.1', 'file://'), printable),
        'content-type': fc.oneof(
          fc.constantFrom('application/json', 'text/plain', 'application/x+json'),
          printable,
        ),
        'sec-fetch-site': fc.constantFrom('cross-site', 'same-origin', 'none'),
        accept: fc.oneof(fc.constant('text/event-stream'), printable),
      },
      { requiredKeys: [] },
    )
    const route = fc.constantFrom(
      ['GET', '/inbox/api/cards'],
      ['GET', '/inbox'],
      ['GET', '/inbox?token=%E0%A4%A'],
      ['POST', '/inbox/api/cards/x/actions'],
      ['GET', '/v1/questions'],
      ['POST', '/v1/ask'],
      ['GET', '/healthz'],
      ['GET', '/v1/agents/a/replies?waitSeconds=0'],
    )
    const statuses: number[] = []
    await fc.assert(
      fc.asyncProperty(route, headers, async ([method, path], h) => {
        const clean = Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<
          string,
          string
        >
        const status = await rawRequest(
          b.url,
          method as string,
          path as string,
          clean,
          method === 'POST' ? '{}' : undefined,
        )
        statuses.push(status)
        return status < 500
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    checkStatuses(statuses)
  })
})

describe('fuzz: Slack interactivity (signed HTTP)', () => {
  let rig: Awaited<ReturnType<typeof startSlackRig>>
  let bridge: Bridge
  beforeAll(async () => {
    rig = await startSlackRig('http')
    bridge = await startSlackBridge(rig)
  })
  afterAll(async () => {
    await bridge.close()
  })

  it(`${RUNS} signed malformed bodies to /slack/events: no 5xx, no crash`, {
    timeout: FUZZ_TIMEOUT_MS,
  }, async () => {
    void bridge.service
      .ask({ questions: [colour, regions], agent: bridge.agent(), wait: { callId: 'fuzz-slack' } })
      .catch(() => {})
    const button = await until(
      () => rig.element('fuzz-slack', (r) => r.verb === 'choose' && r.q === 0),
      'card posted',
    )
    const menu = rig.element('fuzz-slack', (r) => r.verb === 'set' && r.q === 1)
    const other = rig.element('fuzz-slack', (r) => r.verb === 'other')
    const user = { id: rig.people.ann.userId, name: rig.people.ann.name }
    const bases: unknown[] = [rig.fake.actionPayload(user, button.message, button.actionId)]
    if (menu) bases.push(rig.fake.actionPayload(user, menu.message, menu.actionId, { values: ['0'] }))
    if (other) bases.push(rig.fake.actionPayload(user, other.message, other.actionId))
    bases.push({
      type: 'view_submission',
      user,
      view: {
        id: 'V0FUZZ',
        callback_id: other?.actionId ?? button.actionId,
        private_metadata: '{}',
        state: { values: { answer: { text: { type: 'plain_text_input', value: 'typed' } } } },
      },
    })
    const url = rig.fake.interactivityUrl as string
    const post = async (body: string, type: string) => {
      const timestamp = String(Math.floor(Date.now() / 1000))
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': type,
          'x-slack-request-timestamp': timestamp,
          'x-slack-signature': signSlackRequest(rig.fake.options.signingSecret, timestamp, body),
        },
        body,
      })
      return { status: res.status, body: await res.text() }
    }
    // The cases that gave 500s before: signed `payload=null` and a JSON null.
    const formNull = await post('payload=null', 'application/x-www-form-urlencoded')
    expect(formNull.status).toBe(400)
    expect(JSON.parse(formNull.body).error.code).toBe('BAD_BODY')
    expect((await post('null', 'application/json')).status).toBe(400)
    const noActions = await post(
      new URLSearchParams({
        payload: JSON.stringify({ type: 'block_actions', user, actions: 5 }),
      }).toString(),
      'application/x-www-form-urlencoded',
    )
    expect(noActions.status).toBe(400)
    expect(JSON.parse(noActions.body).error.code).toBe('BAD_PAYLOAD')
    const encoding = fc.constantFrom('form', 'json', 'form-null', 'bare-json')
    const statuses: number[] = []
    await fc.assert(
      fc.asyncProperty(hostile(bases), encoding, async (payload, how) => {
        const json = how === 'form-null' ? 'null' : JSON.stringify(payload)
        const body =
          how === 'json' || how === 'bare-json' ? json : new URLSearchParams({ payload: json }).toString()
        const timestamp = String(Math.floor(Date.now() / 1000))
        const res = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': how === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
            'x-slack-request-timestamp': timestamp,
            'x-slack-signature': signSlackRequest(rig.fake.options.signingSecret, timestamp, body),
          },
          body,
        })
        await res.arrayBuffer()
        statuses.push(res.status)
        return res.status < 500
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    checkStatuses(statuses)
    // The fuzz reached the card for real: some bodies were valid clicks.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0)
    expect(statuses.filter((s) => s === 400).length).toBeGreaterThan(0)
    await rig.adapter.idle()
  })
})

describe('fuzz: Discord interactions (signed HTTP)', () => {
  let rig: DiscordRig
  beforeAll(async () => {
    rig = await discordRig({ http: true })
  })
  afterAll(async () => {
    await rig.close()
  })

  it(`${RUNS} signed malformed interactions: no 5xx, no crash`, { timeout: FUZZ_TIMEOUT_MS }, async () => {
    void rig.service
      .ask({
        questions: [colour, regions],
        agent: rig.service.agents.ensure('agent-1'),
        wait: { callId: 'fuzz-discord' },
      })
      .catch(() => {})
    const found = await until(() => rig.component('fuzz-discord', { verb: 'choose', q: 0 }), 'card posted')
    const record = await rig.fake.click(found.message.id, found.customId, alice)
    await rig.waitResponded(record)
    const bases: unknown[] = [
      record.payload,
      { ...record.payload, type: 5, data: { custom_id: found.customId, components: [] } },
      { type: 3, id: '1', application_id: '1', token: 't' },
      { ...record.payload, data: { ...(record.payload.data as object), custom_id: 5 } },
      {
        ...record.payload,
        member: { ...(record.payload.member as object), roles: 7 },
      },
    ]
    // The cases that gave 500s before: no data, a numeric custom_id, numeric roles.
    for (const payload of bases.slice(2)) {
      const body = JSON.stringify(payload)
      const timestamp = String(Math.floor(Date.now() / 1000))
      const reply = await rig.fake.postRawReply(body, rig.fake.signBody(body, timestamp), timestamp)
      expect(reply.status, body).toBe(400)
      expect(JSON.parse(reply.body).code).toBe('BAD_INTERACTION')
    }
    const statuses: number[] = []
    await fc.assert(
      fc.asyncProperty(hostile(bases), async (payload) => {
        const body = JSON.stringify(payload)
        const timestamp = String(Math.floor(Date.now() / 1000))
        const reply = await rig.fake.postRawReply(body, rig.fake.signBody(body, timestamp), timestamp)
        statuses.push(reply.status)
        return reply.status < 500
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
    checkStatuses(statuses)
    expect(statuses.filter((s) => s === 400).length).toBeGreaterThan(0)
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0)
  })
})
