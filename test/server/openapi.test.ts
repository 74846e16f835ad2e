/**
 * Every route of the HTTP API answers what `GET /v1/openapi.json` says: real requests against a
 * real bridge, each status and body validated against the path's response schema.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { CardState } from '../../src/card/types.js'
import { act, cardPosted, type Json, request, startBridge, type TestBridge, until } from './helpers.js'

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: { $ref: string } }> }>
}
interface Document {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const agent = 'oa-agent'

let b: TestBridge
let doc: Document
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
const validators = new Map<string, ValidateFunction>()
/** `METHOD template` of every operation a test called. */
const called = new Set<string>()

beforeAll(async () => {
  b = await startBridge()
  const res = await request(b.url, 'GET', '/v1/openapi.json')
  expect(res.status).toBe(200)
  doc = JSON.parse(res.text) as Document
  ajv.addSchema({ $id: 'openapi.json', components: doc.components })
  check('GET', '/v1/openapi.json', res)
})
afterAll(async () => {
  await b.close()
})

/** Validate a response against the document's schema for its path, method and status. */
function check(method: string, template: string, res: Json): Json {
  const operation = doc.paths[template]?.[method.toLowerCase()]
  if (!operation) throw new Error(`the document has no ${method} ${template}`)
  called.add(`${method} ${template}`)
  const response = operation.responses[String(res.status)] ?? operation.responses.default
  if (!response) throw new Error(`${method} ${template}: status ${res.status} is not documented`)
  if (res.status < 400) {
    expect(
      operation.responses[String(res.status)],
      `${method} ${template} ${res.status} documented`,
    ).toBeDefined()
  }
  const ref = response.content?.['application/json']?.schema.$ref
  if (!ref) throw new Error(`${method} ${template} ${res.status}: no JSON schema`)
  let validate = validators.get(ref)
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi.json${ref}` })
    validators.set(ref, validate)
  }
  const body: unknown = JSON.parse(res.text)
  if (!validate(body)) {
    expect.fail(
      `${method} ${template} ${res.status} does not match ${ref}: ${ajv.errorsText(validate.errors)}\n${res.text}`,
    )
  }
  return res
}

async function call(method: string, template: string, path: string, body?: unknown): Promise<Json> {
  return check(method, template, await request(b.url, method, path, body))
}

/** The next new card of `agentId` in the store. */
async function cardOf(agentId: string, seen = new Set<string>()): Promise<CardState> {
  return until(async () => {
    const cards = await b.bridge.store.listCards<CardState>()
    return cards.map((c) => c.state).find((c) => c.agentId === agentId && !seen.has(c.callId))
  }, `a card of ${agentId}`)
}

describe('every route answers what the OpenAPI document says', () => {
  test('asks: blocking, timed (pending), re-read, late answer, replies, admit, discard, cancel', async () => {
    const asking = call('POST', '/v1/ask', '/v1/ask', {
      callId: 'oa-blk',
      agentId: agent,
      questions: [colour],
    })
    await cardPosted(b.url, 'oa-blk')
    await act(b.url, 'oa-blk', { type: 'choose', questionId: 'colour', label: 'Red' })
    expect((await asking).body).toMatchObject({
      callId: 'oa-blk',
      answers: [{ id: 'colour', selected: ['Red'] }],
    })

    const timed = await call('POST', '/v1/ask', '/v1/ask', {
      callId: 'oa-late',
      agentId: agent,
      timeoutMs: 1000,
      questions: [colour],
    })
    expect(timed.body).toEqual({ pending: true, callId: 'oa-late' })

    await call('GET', '/v1/questions', `/v1/questions?agentId=${agent}&limit=1`)
    await call('GET', '/v1/questions/{callId}', `/v1/questions/oa-blk?agentId=${agent}`)
    await call('GET', '/v1/questions/{callId}', `/v1/questions/oa-late?agentId=${agent}`)

    const answer = { answers: [{ id: 'colour', selected: ['Blue'] }], agentId: agent }
    const accepted = await call(
      'POST',
      '/v1/questions/{callId}/answer',
      '/v1/questions/oa-late/answer',
      answer,
    )
    expect(accepted.body).toEqual({ accepted: true })
    const replies = await call('GET', '/v1/agents/{agentId}/replies', `/v1/agents/${agent}/replies`)
    expect(replies.body.replies).toHaveLength(1)
    // The call with its queued reply.
    await call('GET', '/v1/questions/{callId}', `/v1/questions/oa-late?agentId=${agent}`)
    const queued = await call('POST', '/v1/questions/{callId}/answer', '/v1/questions/oa-late/answer', answer)
    expect(queued.status).toBe(409)

    const discarded = await call(
      'DELETE',
      '/v1/agents/{agentId}/replies/{callId}',
      `/v1/agents/${agent}/replies/oa-late`,
    )
    expect(discarded.body).toEqual({ discarded: true, callId: 'oa-late' })
    await call('POST', '/v1/questions/{callId}/answer', '/v1/questions/oa-late/answer', answer)
    const admitted = await call(
      'POST',
      '/v1/agents/{agentId}/replies/{callId}/admit',
      `/v1/agents/${agent}/replies/oa-late/admit`,
    )
    expect(admitted.body).toEqual({ admitted: true, callId: 'oa-late' })
    const noReply = await call(
      'POST',
      '/v1/agents/{agentId}/replies/{callId}/admit',
      `/v1/agents/${agent}/replies/oa-late/admit`,
    )
    expect(noReply.status).toBe(404)

    await call('POST', '/v1/ask', '/v1/ask', {
      callId: 'oa-cancel',
      agentId: agent,
      timeoutMs: 1000,
      questions: [colour],
    })
    const cancelled = await call(
      'DELETE',
      '/v1/questions/{callId}',
      `/v1/questions/oa-cancel?agentId=${agent}`,
    )
    expect(cancelled.body).toEqual({ cancelled: true, callId: 'oa-cancel', agentId: agent })
    const gone = await call('DELETE', '/v1/questions/{callId}', `/v1/questions/oa-cancel?agentId=${agent}`)
    expect(gone.status).toBe(409)

    const audit = await call('GET', '/v1/audit', `/v1/audit?agentId=${agent}`)
    expect((audit.body.events as unknown[]).length).toBeGreaterThan(0)
  })

  test('errors are `{error: {name, code, message}}`', async () => {
    expect((await call('GET', '/v1/questions/{callId}', '/v1/questions/no-such-call')).status).toBe(404)
    expect((await call('POST', '/v1/ask', '/v1/ask', { questions: [colour], extra: 1 })).status).toBe(400)
    expect((await call('POST', '/v1/ask', '/v1/ask', { questions: [] })).status).toBe(400)
    expect((await call('GET', '/v1/questions', '/v1/questions?limit=0')).status).toBe(400)
    expect((await call('GET', '/v1/audit', '/v1/audit?since=yesterday')).status).toBe(400)
  })

  test('an MCP elicitation, answered in the inbox', async () => {
    const asking = call('POST', '/v1/elicit', '/v1/elicit', {
      message: 'How many replicas?',
      requestedSchema: {
        type: 'object',
        properties: { replicas: { type: 'integer', minimum: 1, maximum: 9, default: 3 } },
        required: ['replicas'],
      },
      agentId: 'oa-elicit',
    })
    const card = await cardOf('oa-elicit')
    await cardPosted(b.url, card.callId)
    await act(b.url, card.callId, { type: 'submit' })
    expect((await asking).body).toEqual({ action: 'accept', content: { replicas: 3 } })
  })

  test('a Claude Code permission hook, approved in the inbox', async () => {
    const asking = call('POST', '/v1/hooks/claude-code', '/v1/hooks/claude-code', {
      session_id: 'oa-session',
      hook_event_name: 'PermissionRequest',
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
    })
    const card = await until(async () => {
      const cards = await b.bridge.store.listCards<CardState>()
      return cards.map((c) => c.state).find((c) => c.agentId.startsWith('claude-code:'))
    }, 'the hook card')
    await cardPosted(b.url, card.callId)
    await act(b.url, card.callId, { type: 'approve' })
    expect((await asking).body).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    })
    const bad = await call('POST', '/v1/hooks/claude-code', '/v1/hooks/claude-code', {
      session_id: 's',
      hook_event_name: 'SessionStart',
    })
    expect(bad.status).toBe(400)
  })

  test('healthz', async () => {
    expect((await call('GET', '/healthz', '/healthz')).body).toEqual({ ok: true })
  })

  test('every operation in the document was called', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => m !== 'parameters')
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    expect(documented.filter((op) => !called.has(op))).toEqual([])
  })
})
