/**
 * The Web API client's transport (adapters/slack/fetch.ts) under the real @slack/web-api WebClient,
 * against a real local HTTP server: what the WebClient reads from a response (the JSON, the scope
 * headers, a 429's Retry-After, a non-200) arrives as it does through the global fetch, redirects
 * are not followed, and the client's timeout still ends a request.
 */

import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { webApi } from '@slack/bolt'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { slackFetch } from '../../adapters/slack/fetch.js'

interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

let server: Server
let base: string
let seen: Seen[] = []
let respond: (req: IncomingMessage, res: ServerResponse) => void

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => {
      body += c
    })
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      respond(req, res)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

beforeEach(() => {
  seen = []
})

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
    .end(JSON.stringify(body))

function client(options: webApi.WebClientOptions = {}) {
  return new webApi.WebClient('fake-bot-token-for-tests', {
    slackApiUrl: base,
    fetch: slackFetch(),
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    logLevel: webApi.LogLevel.ERROR, // the expected failures below are not warnings
    ...options,
  })
}

describe('slackFetch under the WebClient', () => {
  it('sends the form body and the token, and returns the JSON with the scope headers read', async () => {
    respond = (_req, res) =>
      json(
        res,
        200,
        { ok: true, channel: 'C1', ts: '1700000000.000100', note: 'héllo ✓' },
        {
          'x-oauth-scopes': 'chat:write,im:write',
          'x-accepted-oauth-scopes': 'chat:write',
        },
      )
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'Ship *4f2c1*? ✓' } }]
    const result = await client().chat.postMessage({ channel: 'C1', text: 'Ship 4f2c1?', blocks })
    expect(result).toMatchObject({
      ok: true,
      ts: '1700000000.000100',
      note: 'héllo ✓',
      response_metadata: { scopes: ['chat:write', 'im:write'], acceptedScopes: ['chat:write'] },
    })
    expect(seen).toHaveLength(1)
    const [req] = seen
    expect(req?.method).toBe('POST')
    expect(req?.url).toBe('/api/chat.postMessage')
    expect(req?.headers.authorization).toBe('Bearer fake-bot-token-for-tests')
    expect(req?.headers['content-type']).toBe('application/x-www-form-urlencoded')
    const form = new URLSearchParams(req?.body)
    expect(form.get('channel')).toBe('C1')
    expect(JSON.parse(form.get('blocks') ?? 'null')).toEqual(blocks)
  })

  it("a platform error is the WebClient's platform error", async () => {
    respond = (_req, res) => json(res, 200, { ok: false, error: 'channel_not_found' })
    await expect(client().chat.postMessage({ channel: 'C0', text: 'x' })).rejects.toMatchObject({
      code: 'slack_webapi_platform_error',
      data: { ok: false, error: 'channel_not_found' },
    })
  })

  it('a 429 is a rate-limited error carrying Retry-After', async () => {
    respond = (_req, res) => json(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': '7' })
    await expect(client().chat.update({ channel: 'C1', ts: '1.2', text: 'x' })).rejects.toMatchObject({
      code: 'slack_webapi_rate_limited_error',
      retryAfter: 7,
    })
  })

  it('a 5xx is an HTTP error with its status and body, and is retried as the retry policy says', async () => {
    let calls = 0
    respond = (_req, res) => {
      calls++
      if (calls === 1) res.writeHead(503, { 'content-type': 'text/plain' }).end('down for a moment')
      else json(res, 200, { ok: true })
    }
    await expect(client().chat.update({ channel: 'C1', ts: '1.2', text: 'x' })).rejects.toMatchObject({
      code: 'slack_webapi_http_error',
      statusCode: 503,
      body: 'down for a moment',
    })
    calls = 0
    const retried = client({ retryConfig: { retries: 1, minTimeout: 1, maxTimeout: 1 } })
    await expect(retried.chat.update({ channel: 'C1', ts: '1.2', text: 'x' })).resolves.toMatchObject({
      ok: true,
    })
    expect(calls).toBe(2)
  })

  it('a redirect is not followed', async () => {
    respond = (req, res) => {
      if (req.url === '/api/chat.postMessage') res.writeHead(302, { location: `${base}elsewhere` }).end()
      else json(res, 200, { ok: true })
    }
    await expect(client().chat.postMessage({ channel: 'C1', text: 'x' })).rejects.toMatchObject({
      code: 'slack_webapi_http_error',
      statusCode: 302,
    })
    expect(seen.map((s) => s.url)).toEqual(['/api/chat.postMessage'])
  })

  it("the client's timeout ends a request the server never answers", async () => {
    respond = () => {} // never answers
    await expect(
      client({ timeout: 200 }).chat.postMessage({ channel: 'C1', text: 'x' }),
    ).rejects.toMatchObject({
      code: 'slack_webapi_request_error',
    })
  })

  it('a refused connection is a request error, not a crash', async () => {
    const probe = createServer()
    probe.listen(0, '127.0.0.1')
    await once(probe, 'listening')
    const port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const c = client({ slackApiUrl: `http://127.0.0.1:${port}/api/` })
    await expect(c.chat.postMessage({ channel: 'C1', text: 'x' })).rejects.toMatchObject({
      code: 'slack_webapi_request_error',
    })
  })
})
