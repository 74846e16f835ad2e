import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ConfigError, parseConfig } from '../../src/config/env.js'
import { act, cardPosted, request, startBridge, type TestBridge } from './helpers.js'

const TOKEN = 'test-api-token-not-secret'
const auth = { authorization: `Bearer ${TOKEN}` }
const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }

describe('with ASKBRIDGE_API_TOKEN', () => {
  let b: TestBridge
  beforeAll(async () => {
    b = await startBridge({ ASKBRIDGE_API_TOKEN: TOKEN })
  })
  afterAll(async () => {
    await b.close()
  })

  test('the API needs the bearer token', async () => {
    const none = await request(b.url, 'GET', '/v1/questions')
    expect(none.status).toBe(401)
    expect(none.body.error).toMatchObject({ name: 'HttpError', code: 'UNAUTHORIZED' })
    const wrong = await request(b.url, 'GET', '/v1/questions', undefined, {
      authorization: 'Bearer nope-nope-nope',
    })
    expect(wrong.status).toBe(401)
    const right = await request(b.url, 'GET', '/v1/questions', undefined, auth)
    expect(right.status).toBe(200)
    expect((await request(b.url, 'POST', '/v1/ask', { questions: [colour] })).status).toBe(401)
    expect((await request(b.url, 'GET', '/metrics')).status).toBe(401)
  })

  test('/healthz stays open for probes', async () => {
    expect((await request(b.url, 'GET', '/healthz')).status).toBe(200)
  })

  test('the inbox: 401 without its cookie (the API token is refused), the one-time link sets it', async () => {
    const none = { cookie: '' }
    // A person gets a short page that says how to get in, not the API's JSON.
    const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', ...none }
    const bare = await request(b.url, 'GET', '/inbox', undefined, html)
    expect(bare.status).toBe(401)
    expect(bare.headers.get('content-type')).toMatch(/^text\/html/)
    expect(bare.text).toContain('/inbox?login=')
    expect(bare.text).not.toContain(TOKEN)
    // The API token opens nothing in the inbox: not as a link, not as a bearer token.
    const asLink = await request(b.url, 'GET', `/inbox?login=${TOKEN}`, undefined, html)
    expect(asLink.status).toBe(401)
    expect(asLink.text).toContain('not valid')
    expect(asLink.text).not.toContain(TOKEN)
    const bearer = await request(b.url, 'GET', '/inbox/api/cards', undefined, { ...auth, ...none })
    expect(bearer.status).toBe(401)
    expect(bearer.body.error).toMatchObject({ code: 'INBOX_SIGN_IN_REQUIRED' })
    // Scripts (no HTML in Accept) and the inbox's API get the JSON error.
    const script = await request(b.url, 'GET', '/inbox', undefined, none)
    expect(script.body.error).toMatchObject({ code: 'INBOX_SIGN_IN_REQUIRED' })

    const link = `${b.url}${b.bridge.http.signInLink()}`
    const login = await fetch(link, { redirect: 'manual' })
    expect(login.status).toBe(302)
    expect(login.headers.get('location')).toBe('/inbox')
    expect(login.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/)
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    // One time: the same link again is refused.
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(401)
    const page = await request(b.url, 'GET', '/inbox', undefined, { cookie })
    expect(page.status).toBe(200)
    expect(page.text).toContain('askbridge inbox')
    // The cookie opens the inbox only, never the API.
    expect((await request(b.url, 'GET', '/v1/questions', undefined, { cookie })).status).toBe(401)

    const asking = request(b.url, 'POST', '/v1/ask', { callId: 'tok-1', questions: [colour] }, auth)
    await cardPosted(b.url, 'tok-1', { cookie })
    await act(b.url, 'tok-1', { type: 'choose', questionId: 'colour', label: 'Red' }, 'Ana', { cookie })
    expect((await asking).body).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }], callId: 'tok-1' })
  })
})

describe('without a token', () => {
  let b: TestBridge
  beforeAll(async () => {
    b = await startBridge()
  })
  afterAll(async () => {
    await b.close()
  })

  test('only loopback Host names are served (no DNS rebinding)', async () => {
    // fetch will not send a foreign Host header, so speak HTTP directly.
    const get = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${b.url}/v1/questions`, { headers: { host } }, (res) => {
          let body = ''
          res.on('data', (d: Buffer) => {
            body += d.toString()
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        })
        req.on('error', reject)
        req.end()
      })
    const evil = await get('evil.example:8787')
    expect(evil.status).toBe(403)
    expect(JSON.parse(evil.body).error.code).toBe('FORBIDDEN_HOST')
    expect((await get('localhost:8787')).status).toBe(200)
  })

  test('a page on another web origin cannot answer, admit or ask (no CORS preflight needed for those POSTs)', async () => {
    const raw = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; code?: string }>((resolve, reject) => {
        const req = httpRequest(`${b.url}${path}`, { method, headers }, (res) => {
          let text = ''
          res.on('data', (d: Buffer) => {
            text += d.toString()
          })
          res.on('end', () => {
            const parsed = JSON.parse(text || '{}') as { error?: { code?: string } }
            resolve({
              status: res.statusCode ?? 0,
              ...(parsed.error?.code ? { code: parsed.error.code } : {}),
            })
          })
        })
        req.on('error', reject)
        req.end(body)
      })
    const pending = await request(b.url, 'POST', '/v1/ask', {
      callId: 'csrf-1',
      agentId: 'csrf',
      timeoutMs: 1,
      questions: [colour],
    })
    expect(pending.body.pending).toBe(true)
    const host = new URL(b.url).host
    // What fetch(url, {method: 'POST', mode: 'no-cors', body: new Blob([...])}) sends: no content type.
    const answer = JSON.stringify({ answers: [{ id: 'colour', selected: ['Red'] }] })
    for (const origin of ['http://evil.example', 'http://127.0.0.1:1', 'null']) {
      const forged = await raw('POST', '/v1/questions/csrf-1/answer', { origin }, answer)
      expect([forged.status, forged.code], origin).toEqual([403, 'FORBIDDEN_ORIGIN'])
    }
    const crossSite = await raw('POST', '/v1/ask', { 'sec-fetch-site': 'cross-site' }, '{"questions":[]}')
    expect([crossSite.status, crossSite.code]).toEqual([403, 'FORBIDDEN_ORIGIN'])
    expect(
      (await raw('POST', '/v1/agents/csrf/replies/csrf-1/admit', { origin: 'http://evil.example' })).code,
    ).toBe('FORBIDDEN_ORIGIN')
    // Nothing reached the call.
    expect((await request(b.url, 'GET', '/v1/questions/csrf-1')).body.queuedReply).toBeUndefined()
    // The inbox's own origin, and clients that send no Origin (curl, scripts), still work.
    const own = await raw('POST', '/v1/questions/csrf-1/answer', { origin: `http://${host}` }, answer)
    expect(own.status).toBe(200)
    expect((await request(b.url, 'GET', '/v1/questions/csrf-1')).body.queuedReply).toBeDefined()
    expect((await raw('DELETE', '/v1/agents/csrf/replies/csrf-1', {})).status).toBe(200)
    // Reading stays open to any origin's GET (the browser keeps the response from the page).
    expect((await raw('GET', '/v1/questions', { origin: 'http://evil.example' })).status).toBe(200)
  })

  test('serve refuses to listen beyond loopback', () => {
    expect(() => parseConfig({ ASKBRIDGE_HOST: '0.0.0.0' }, PLATFORMS)).toThrow(ConfigError)
    expect(() => parseConfig({ ASKBRIDGE_HOST: '0.0.0.0' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_API_TOKEN \(or ASKBRIDGE_AGENT_TOKENS\) is required/,
    )
    expect(
      parseConfig({ ASKBRIDGE_HOST: '0.0.0.0', ASKBRIDGE_API_TOKEN: TOKEN }, PLATFORMS).ASKBRIDGE_HOST,
    ).toBe('0.0.0.0')
    expect(
      parseConfig({ ASKBRIDGE_HOST: '0.0.0.0', ASKBRIDGE_API_TOKEN: TOKEN }, PLATFORMS).ASKBRIDGE_HOST,
    ).toBe('0.0.0.0')
  })
})
