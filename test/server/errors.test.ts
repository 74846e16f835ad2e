import { readdirSync, readFileSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ConfigError } from '../../src/config/env.js'
import { USER_QUESTION_ERROR_CODES, UserQuestionError } from '../../src/protocol/errors.js'
import { errorResponse, HttpError, STATUS_OF_CODE } from '../../src/server/errors.js'
import { StorageError } from '../../src/store/errors.js'
import { act, cardPosted, request, startBridge, type TestBridge } from './helpers.js'

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
  })
}

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }

describe('error mapping', () => {
  test('every protocol code has its status and keeps {name, code, message}', () => {
    const expected: Record<string, number> = {
      BAD_QUESTION: 400,
      EMPTY_QUESTIONS: 400,
      BAD_INTENT: 400,
      BAD_TIMEOUT: 400,
      BAD_ANSWER: 400,
      CALLER_NOT_LIVE: 403,
      DELEGATED_CALLER: 403,
      DUPLICATE_WAIT: 409,
      REPLY_QUEUED: 409,
      ASK_CANCELLED: 410,
      ASK_ABORTED: 499,
      ASK_TIMED_OUT: 504,
      NO_PROVIDER: 503,
      PROVIDER_ERROR: 502,
    }
    for (const code of USER_QUESTION_ERROR_CODES) {
      const { status, body } = errorResponse(new UserQuestionError(code, `it was ${code}`))
      expect(status, code).toBe(expected[code])
      expect(body).toEqual({ error: { name: 'UserQuestionError', code, message: `it was ${code}` } })
    }
    for (const code of USER_QUESTION_ERROR_CODES) expect(STATUS_OF_CODE, code).toHaveProperty(code)
  })

  test('the HTTP, hook and storage codes have their status, and keep {name, code, message}', () => {
    const expected: Record<string, number> = {
      BAD_REQUEST: 400,
      BAD_JSON: 400,
      BAD_PATH: 400,
      BAD_HOLD: 400,
      BAD_ACTION: 400,
      BAD_BODY: 400,
      BAD_PAYLOAD: 400,
      BAD_INTERACTION: 400,
      UNAUTHORIZED: 401,
      SIGN_IN_REQUIRED: 401,
      INBOX_SIGN_IN_REQUIRED: 401,
      FORBIDDEN_SCOPE: 403,
      FORBIDDEN_AGENT: 403,
      FORBIDDEN_ORIGIN: 403,
      FORBIDDEN_PEER: 403,
      FORBIDDEN_HOST: 403,
      FORWARDED_REFUSED: 403,
      CSRF: 403,
      NOT_ALLOWED: 403,
      NOT_FOUND: 404,
      METHOD_NOT_ALLOWED: 405,
      REQUEST_TIMEOUT: 408,
      AMBIGUOUS_CALL: 409,
      NOT_ANSWERABLE: 409,
      BODY_TOO_LARGE: 413,
      UNSUPPORTED_MEDIA_TYPE: 415,
      RATE_LIMITED: 429,
      TOO_MANY_CONNECTIONS: 429,
      TOO_MANY_STREAMS: 429,
      INTERNAL: 500,
      NOT_BUILT: 500,
      OVERLOADED: 503,
      SHUTTING_DOWN: 503,
      NOT_STARTED: 503,
      // A hook request that cannot become a card travels as an HttpError with the hook's code.
      UNSUPPORTED_HOOK: 400,
      UNSUPPORTED_SCHEMA: 400,
      BAD_HOOK: 400,
      BAD_TOOL_INPUT: 400,
    }
    for (const [code, status] of Object.entries(expected)) {
      expect(errorResponse(new HttpError(code, `it was ${code}`)), code).toEqual({
        status,
        body: { error: { name: 'HttpError', code, message: `it was ${code}` } },
      })
    }
    expect(errorResponse(new StorageError('full', 'the disk is full'))).toEqual({
      status: 503,
      body: { error: { name: 'StorageError', code: 'STORAGE_UNAVAILABLE', message: 'the disk is full' } },
    })
    // The table holds these and the protocol's codes, nothing else.
    expect(Object.keys(STATUS_OF_CODE).sort()).toEqual(
      [...new Set([...Object.keys(expected), ...USER_QUESTION_ERROR_CODES, 'STORAGE_UNAVAILABLE'])].sort(),
    )
  })

  test('every code thrown as an HttpError in the source has its status in the table', () => {
    const root = new URL('../..', import.meta.url).pathname
    // The CLI's client throws HttpErrors too (BAD_URL, UNREACHABLE): seen, never answered with.
    const sources = [...files(join(root, 'src')), ...files(join(root, 'adapters'))].filter(
      (file) => !file.includes(join('src', 'cli', '')),
    )
    const thrown = new Set(
      sources.flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/new HttpError\(\s*'([A-Z_]+)'/g)].map((m) => m[1] as string),
      ),
    )
    expect(thrown.size).toBeGreaterThan(20)
    expect([...thrown].filter((code) => !Object.hasOwn(STATUS_OF_CODE, code))).toEqual([])
  })

  test('a protocol error that crossed a wire is recognised; unknown errors never leak', () => {
    expect(errorResponse({ name: 'UserQuestionError', code: 'NO_PROVIDER', message: 'x' }).status).toBe(503)
    const leak = errorResponse(new Error('SELECT * FROM secrets at /home/app/src/x.ts:12'))
    expect(leak).toEqual({
      status: 500,
      body: {
        error: { name: 'HttpError', code: 'INTERNAL', message: 'internal error (see the server log)' },
      },
    })
    // An error of askbridge's own that is not meant for the wire, or a code the table does not
    // know, is internal too: neither its message nor its code leaves.
    expect(errorResponse(new ConfigError(['ASKBRIDGE_DB is a secret path']))).toEqual(leak)
    expect(errorResponse(new HttpError('TEAPOT', 'short and stout'))).toEqual(leak)
    expect(errorResponse({ name: 'HttpError', code: 'NOT_FOUND', message: 'a look-alike' })).toEqual(leak)
  })
})

describe('bad input over HTTP', () => {
  let b: TestBridge
  beforeAll(async () => {
    b = await startBridge()
  })
  afterAll(async () => {
    await b.close()
  })

  const ask = (body: unknown, headers: Record<string, string> = {}) =>
    request(b.url, 'POST', '/v1/ask', body, headers)

  test('malformed JSON: 400 BAD_JSON', async () => {
    const res = await ask('{"questions": [', {})
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ name: 'HttpError', code: 'BAD_JSON' })
  })

  test('empty body, array body and non-JSON content type', async () => {
    expect((await ask('')).body.error?.code).toBe('BAD_JSON')
    expect((await ask('[1,2]')).body.error?.code).toBe('BAD_JSON')
    const form = await ask('questions=1', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(form.status).toBe(415)
    expect(form.body.error?.code).toBe('UNSUPPORTED_MEDIA_TYPE')
  })

  test('unknown top-level field: 400 BAD_REQUEST naming it', async () => {
    const res = await ask({ questions: [colour], colour: 'red' })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ name: 'HttpError', code: 'BAD_REQUEST' })
    expect(res.body.error?.message).toContain('colour')
  })

  test('unknown field inside a question: 400 BAD_QUESTION', async () => {
    const res = await ask({ questions: [{ ...colour, multi_select: true }] })
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ name: 'UserQuestionError', code: 'BAD_QUESTION' })
  })

  test('wrong types', async () => {
    const notArray = await ask({ questions: 'Which colour?' })
    expect([notArray.status, notArray.body.error?.code]).toEqual([400, 'BAD_QUESTION'])
    const badOptions = await ask({ questions: [{ id: 'a', question: 'b', options: 'Red' }] })
    expect([badOptions.status, badOptions.body.error?.code]).toEqual([400, 'BAD_QUESTION'])
    const timeout = await ask({ questions: [colour], timeoutMs: '5s' })
    expect([timeout.status, timeout.body.error?.code]).toEqual([400, 'BAD_TIMEOUT'])
    const agent = await ask({ questions: [colour], agentId: 42 })
    expect([agent.status, agent.body.error?.code]).toEqual([400, 'BAD_REQUEST'])
    const callId = await ask({ questions: [colour], callId: 'has spaces and/slashes' })
    expect([callId.status, callId.body.error?.code]).toEqual([400, 'BAD_REQUEST'])
  })

  test('protocol errors: EMPTY_QUESTIONS, duplicate ids, BAD_TIMEOUT, BAD_INTENT', async () => {
    const empty = await ask({ questions: [] })
    expect([empty.status, empty.body.error?.code]).toEqual([400, 'EMPTY_QUESTIONS'])
    const dup = await ask({ questions: [colour, colour] })
    expect([dup.status, dup.body.error?.code]).toEqual([400, 'BAD_QUESTION'])
    const zero = await ask({ questions: [colour], timeoutMs: 0 })
    expect([zero.status, zero.body.error?.code]).toEqual([400, 'BAD_TIMEOUT'])
    const approval = {
      id: 'ok',
      question: 'Deploy?',
      detail: 'prod',
      options: [{ label: 'Approve' }, { label: 'Reject' }],
      intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
    }
    const timedApproval = await ask({ questions: [approval], timeoutMs: 1000 })
    expect([timedApproval.status, timedApproval.body.error?.code]).toEqual([400, 'BAD_INTENT'])
    expect(timedApproval.body.error?.name).toBe('UserQuestionError')
  })

  test('oversize body (over 1 MiB): 413 BODY_TOO_LARGE', async () => {
    const big = JSON.stringify({ questions: [{ ...colour, detail: 'x'.repeat(1024 * 1024 + 10) }] })
    const res = await ask(big)
    expect(res.status).toBe(413)
    expect(res.body.error).toMatchObject({ name: 'HttpError', code: 'BODY_TOO_LARGE' })
    // The server is still fine.
    expect((await request(b.url, 'GET', '/healthz')).status).toBe(200)
  })

  test('oversize chunked body without a length is cut off too', async () => {
    const status = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(b.url).port), '127.0.0.1', () => {
        socket.write(
          'POST /v1/ask HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
        )
        const chunk = 'x'.repeat(64 * 1024)
        for (let i = 0; i < 20; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
      })
      let data = ''
      socket.on('data', (d) => {
        data += d.toString()
        if (data.includes('\r\n')) {
          resolve(data.split('\r\n')[0] ?? '')
          socket.destroy()
        }
      })
      socket.on('error', () => resolve(data.split('\r\n')[0] ?? 'reset'))
    })
    expect(status).toContain('413')
    expect((await request(b.url, 'GET', '/healthz')).status).toBe(200)
  })

  test('a missing required field is named plainly', async () => {
    const noQuestions = await ask({ agentId: 'a' })
    expect([noQuestions.status, noQuestions.body.error?.code]).toEqual([400, 'BAD_REQUEST'])
    expect(noQuestions.body.error?.message).toBe('questions is required')
    const noAnswers = await request(b.url, 'POST', '/v1/questions/x/answer', { agentId: 'a' })
    expect(noAnswers.body.error?.message).toBe('answers is required')
  })

  test('cancelling twice: 409 NOT_ANSWERABLE; unknown 404', async () => {
    const asking = ask({ callId: 'cancel-twice', questions: [colour] })
    await cardPosted(b.url, 'cancel-twice')
    expect((await request(b.url, 'DELETE', '/v1/questions/cancel-twice')).status).toBe(200)
    expect((await asking).body.error).toMatchObject({ code: 'ASK_CANCELLED' })
    const again = await request(b.url, 'DELETE', '/v1/questions/cancel-twice')
    expect([again.status, again.body.error?.code]).toEqual([409, 'NOT_ANSWERABLE'])
    const unknown = await request(b.url, 'DELETE', '/v1/questions/never-asked')
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'NOT_FOUND'])
  })

  test('unknown route 404, wrong method 405', async () => {
    const missing = await request(b.url, 'GET', '/v1/nothing-here')
    expect(missing.status).toBe(404)
    expect(missing.body.error).toMatchObject({ name: 'HttpError', code: 'NOT_FOUND' })
    const method = await request(b.url, 'PUT', '/v1/ask', { questions: [colour] })
    expect(method.status).toBe(405)
    expect(method.headers.get('allow')).toBe('POST')
    expect(method.body.error).toMatchObject({ name: 'HttpError', code: 'METHOD_NOT_ALLOWED' })
  })

  test('bad reply wait: 400', async () => {
    const res = await request(b.url, 'GET', '/v1/agents/a/replies?wait=soon')
    expect([res.status, res.body.error?.code]).toEqual([400, 'BAD_REQUEST'])
  })

  test('inbox actions: bad action 400, unknown card 404, form posts 415, refusals are values', async () => {
    const bad = await act(b.url, 'x', { type: 'explode' })
    expect([bad.status, bad.body.error?.code]).toEqual([400, 'BAD_ACTION'])
    const unknown = await act(b.url, 'no-such-card', { type: 'submit' })
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'NOT_FOUND'])
    const form = await request(b.url, 'POST', '/inbox/api/cards/x/actions', 'action=submit', {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(form.status).toBe(415)

    const asking = ask({ callId: 'refuse-1', questions: [colour, { ...colour, id: 'second' }] })
    await cardPosted(b.url, 'refuse-1')
    const early = await act(b.url, 'refuse-1', { type: 'submit' })
    expect(early.status).toBe(200)
    expect(early.body.ok).toBe(false)
    expect(early.body.message).toMatch(/answer or skip/i)
    await act(b.url, 'refuse-1', { type: 'choose', questionId: 'colour', label: 'Red' })
    await act(b.url, 'refuse-1', { type: 'skip', questionId: 'second' })
    await act(b.url, 'refuse-1', { type: 'submit' })
    expect((await asking).body.answers).toEqual([
      { id: 'colour', selected: ['Red'] },
      { id: 'second', selected: [] },
    ])
    const late = await act(b.url, 'refuse-1', { type: 'choose', questionId: 'colour', label: 'Blue' }, 'Bob')
    expect(late.body).toMatchObject({ ok: false, message: expect.stringMatching(/already answered by Ana/) })
  })

  test('a client that never reads its SSE stream does not block others', async () => {
    // Open several streams and never read them; the API keeps answering.
    const sockets = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const s = connect(Number(new URL(b.url).port), '127.0.0.1', () => {
              s.write(
                'GET /inbox/api/events HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n',
              )
              s.pause()
              resolve(s)
            })
          }),
      ),
    )
    const asking = ask({ callId: 'busy-1', questions: [colour] })
    await cardPosted(b.url, 'busy-1')
    await act(b.url, 'busy-1', { type: 'choose', questionId: 'colour', label: 'Blue' })
    expect((await asking).status).toBe(200)
    for (const s of sockets) s.destroy()
  })
})
