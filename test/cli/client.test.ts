/**
 * The HTTP client every agent-side command shares (`ask`, `mcp`, `hook`, `audit`) against a real
 * local server: what it makes of answers, redirects, a bridge that is not there, and a caller
 * that stops waiting.
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, expect, test } from 'vitest'
import { BridgeClient } from '../../src/cli/client.js'
import { HttpError } from '../../src/errors.js'
import { UserQuestionError } from '../../src/protocol/errors.js'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    server.close()
  }
})

/** A server whose every request `handle` answers; its base URL. */
async function serve(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<string> {
  const server = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    handle(req, res, body)
  })
  servers.push(server)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const QUESTIONS = [{ id: 'go', question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }]

test('a blocking ask sends its body and token and returns the JSON answer', async () => {
  const seen: Array<{
    method: string | undefined
    url: string | undefined
    auth: string | undefined
    type: string | undefined
    body: string
  }> = []
  const url = await serve((req, res, body) => {
    seen.push({
      method: req.method,
      url: req.url,
      auth: req.headers.authorization,
      type: req.headers['content-type'],
      body,
    })
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ callId: 'c1', answers: [{ questionId: 'go', selected: ['Yes'] }] }))
  })
  const client = new BridgeClient({ url, token: 'ab_secret' })
  const answer = await client.ask({ questions: QUESTIONS, callId: 'c1' })
  expect(answer).toEqual({ callId: 'c1', answers: [{ questionId: 'go', selected: ['Yes'] }] })
  expect(seen).toEqual([
    {
      method: 'POST',
      url: '/v1/ask',
      auth: 'Bearer ab_secret',
      type: 'application/json',
      body: JSON.stringify({ questions: QUESTIONS, callId: 'c1' }),
    },
  ])
})

test('a coded refusal comes back as its UserQuestionError or HttpError, with the status', async () => {
  let reply = {
    status: 400,
    body: { error: { name: 'UserQuestionError', code: 'BAD_QUESTION', message: 'no questions' } },
  }
  const url = await serve((_req, res) => {
    res.writeHead(reply.status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(reply.body))
  })
  const client = new BridgeClient({ url })
  const refused = await client.ask({ questions: [] }).catch((error: unknown) => error)
  expect(refused).toBeInstanceOf(UserQuestionError)
  expect(refused).toMatchObject({ code: 'BAD_QUESTION', message: 'no questions' })

  reply = {
    status: 503,
    body: { error: { name: 'HttpError', code: 'SHUTTING_DOWN', message: 'restarting' } },
  }
  const down = await client.ask({ questions: QUESTIONS }).catch((error: unknown) => error)
  expect(down).toBeInstanceOf(HttpError)
  expect(down).toMatchObject({ code: 'SHUTTING_DOWN', message: 'restarting', status: 503 })
})

test('a redirect is not followed (a POST would turn into a GET): the error names where it points', async () => {
  const asked: string[] = []
  let location = 'https://askbridge.example.com/v1/ask'
  const url = await serve((req, res) => {
    asked.push(`${req.method} ${req.url}`)
    res.writeHead(301, { location }).end()
  })
  const client = new BridgeClient({ url })
  const error = await client.ask({ questions: QUESTIONS }).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(HttpError)
  expect(error).toMatchObject({
    code: 'BAD_RESPONSE',
    status: 301,
    message: `askbridge at ${url} answered 301, a redirect to https://askbridge.example.com/v1/ask: set ASKBRIDGE_URL to the address it redirects to`,
  })
  expect(asked).toEqual(['POST /v1/ask'])

  // Where it points is read as a URL: credentials in it, or no URL at all, are not echoed.
  for (const unshown of ['https://user:hunter2@askbridge.example.com/', 'http://[not a url']) {
    location = unshown
    const refused = await client.ask({ questions: QUESTIONS }).catch((e: unknown) => e)
    expect(refused).toMatchObject({
      code: 'BAD_RESPONSE',
      message: `askbridge at ${url} answered 301, a redirect: set ASKBRIDGE_URL to the address it redirects to`,
    })
  }
})

test('an answer that is not JSON is named as such, with its status', async () => {
  const url = await serve((_req, res) => {
    res.writeHead(502, { 'content-type': 'text/html' })
    res.end('<html>Bad Gateway</html>')
  })
  const error = await new BridgeClient({ url }).ask({ questions: QUESTIONS }).catch((e: unknown) => e)
  expect(error).toMatchObject({
    code: 'BAD_RESPONSE',
    status: 502,
    message: 'askbridge answered 502 with non-JSON: <html>Bad Gateway</html>',
  })
})

test('no bridge listening: UNREACHABLE, naming the address and the socket error', async () => {
  // A port that was just free: nothing listens on it now.
  const url = await serve(() => {})
  const server = servers.pop() as Server
  server.close()
  await once(server, 'close')
  const error = await new BridgeClient({ url }).ask({ questions: QUESTIONS }).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(HttpError)
  expect(error).toMatchObject({
    code: 'UNREACHABLE',
    message: `cannot reach askbridge at ${url} (ECONNREFUSED): is \`askbridge serve\` running? (ASKBRIDGE_URL)`,
  })
})

test('a caller that stops waiting gets its own reason, and the bridge sees the connection close', async () => {
  let arrived!: () => void
  const waiting = new Promise<void>((resolve) => {
    arrived = resolve
  })
  let closed!: () => void
  const left = new Promise<void>((resolve) => {
    closed = resolve
  })
  const url = await serve((_req, res) => {
    // A blocking ask: no answer yet.
    res.on('close', closed)
    arrived()
  })
  const controller = new AbortController()
  const asked = new BridgeClient({ url }).ask({ questions: QUESTIONS }, controller.signal)
  await waiting
  const reason = new Error('the agent gave up')
  controller.abort(reason)
  await expect(asked).rejects.toBe(reason)
  await left
})
