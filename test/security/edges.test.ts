/**
 * The attack suite's network-edge and storage rows, against the real `serve`: "loopback only"
 * also needs a loopback peer and refuses forwarding headers (unless from a trusted proxy); a
 * request must arrive in time while long waits are not limited; connections and event streams
 * are capped per client and in total; /metrics labels are routes, not paths; database files are
 * 0600. Held: the default bind is 127.0.0.1, the 1 MiB body cap, no secrets in logs.
 */
import { statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { parseConfig } from '../../src/config/env.js'
import type { Logger } from '../../src/log.js'
import { serve } from '../../src/server/serve.js'
import { FakeDiscord } from '../fakes/discord/server.js'
import { testSchema } from '../helpers/pg.js'
import { startBridge, type TestBridge } from '../server/helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function bridge(env: Record<string, string> = {}): Promise<TestBridge> {
  const b = await startBridge(env)
  cleanups.push(() => b.close())
  return b
}

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One request with any headers (fetch would not send Host or Forwarded as given). */
function get(url: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { headers, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        body += c
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

const codeOf = (a: Answer) => (JSON.parse(a.body) as { error?: { code?: string } }).error?.code

/** A raw connection; `reply` resolves with everything the server sent until it closed. */
function rawConnection(url: string): Promise<{ socket: Socket; reply: Promise<string> }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let data = ''
    socket.setEncoding('utf8')
    socket.on('data', (c: string) => {
      data += c
    })
    const reply = new Promise<string>((r) => socket.on('close', () => r(data)))
    socket.once('error', reject)
    socket.once('connect', () => resolve({ socket, reply }))
    cleanups.push(() => {
      socket.destroy()
    })
  })
}

/** An open SSE stream (late replies); resolves once its headers arrived, or with the refusal. */
function stream(url: string): Promise<{ status: number; body: Promise<string>; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/agents/edge-agent/replies`,
      { headers: { accept: 'text/event-stream' }, agent: false },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          body += c
        })
        const done = new Promise<string>((r) => {
          res.on('end', () => r(body))
          res.on('close', () => r(body))
        })
        resolve({ status: res.statusCode ?? 0, body: done, close: () => req.destroy() })
      },
    )
    req.on('error', reject)
    req.end()
    cleanups.push(() => {
      req.destroy()
    })
  })
}

describe('security: network edges', () => {
  it('loopback only: a peer that is not loopback is refused, whatever Host it names', async () => {
    const address = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address
    if (!address) throw new Error('this test needs a non-loopback IPv4 interface to connect from')
    // A host embedding the bridge may pass any Config; bound to every interface, without a token.
    const dir = (await bridge()).dir
    const config = { ...parseConfig({ ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: join(dir, 'wide.db') }, PLATFORMS) }
    config.ASKBRIDGE_HOST = '0.0.0.0'
    const wide = await serve({ config, platforms: PLATFORMS, escalationIntervalMs: 0 })
    cleanups.push(() => wide.close())
    const port = new URL(wide.url).port
    const res = await get(`http://${address}:${port}`, '/v1/questions', { host: `127.0.0.1:${port}` })
    expect(res.status).toBe(403)
    expect(codeOf(res)).toBe('FORBIDDEN_PEER')
    const inbox = await get(`http://${address}:${port}`, '/inbox/api/cards', { host: `localhost:${port}` })
    expect(inbox.status).toBe(403)
    // The same request from loopback is served.
    expect((await get(`http://127.0.0.1:${port}`, '/v1/questions')).status).toBe(200)
  })

  it('a request carrying Forwarded or X-Forwarded-* without a token is refused, unless from a trusted proxy', async () => {
    const b = await bridge()
    for (const [name, value] of [
      ['forwarded', 'for=203.0.113.9;host=askbridge.example'],
      ['x-forwarded-for', '203.0.113.9'],
      ['x-forwarded-host', 'askbridge.example'],
      ['x-forwarded-proto', 'https'],
    ] as const) {
      for (const path of ['/v1/questions', '/inbox/api/cards', '/inbox']) {
        const res = await get(b.url, path, { [name]: value })
        expect(res.status, `${name} ${path}`).toBe(403)
        expect(codeOf(res), `${name} ${path}`).toBe('FORWARDED_REFUSED')
      }
    }
    expect((await get(b.url, '/v1/questions')).status).toBe(200)
    // The proxy's address is trusted: its requests pass.
    const trusted = await bridge({ ASKBRIDGE_TRUSTED_PROXIES: '127.0.0.1, ::1' })
    expect((await get(trusted.url, '/v1/questions', { 'x-forwarded-for': '203.0.113.9' })).status).toBe(200)
    // With a token, the token authenticates; forwarding headers are fine.
    const token = await bridge({ ASKBRIDGE_API_TOKEN: 'edge-token-123456' })
    const authed = await get(token.url, '/v1/questions', {
      authorization: 'Bearer edge-token-123456',
      'x-forwarded-for': '203.0.113.9',
    })
    expect(authed.status).toBe(200)
    // A trusted-proxy list that is not addresses is a configuration error naming the variable.
    expect(() => parseConfig({ ASKBRIDGE_TRUSTED_PROXIES: '1, proxy.example' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_TRUSTED_PROXIES must be IP addresses/,
    )
  })

  it('a body sent one byte at a time gets a coded 408; a long wait after the body is not cut', async () => {
    const b = await bridge({ ASKBRIDGE_BODY_TIMEOUT: '300ms' })
    // A timed ask whose window (1.5 s) outlasts the body timeout: its answer still arrives.
    const waiting = fetch(`${b.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        callId: 'edge-wait',
        timeoutMs: 1500,
        questions: [{ id: 'go', question: 'Go?', options: [{ label: 'Yes' }, { label: 'No' }] }],
      }),
    })
    const { socket, reply } = await rawConnection(b.url)
    const body = JSON.stringify({ callId: 'edge-slow', questions: [] })
    socket.write(
      `POST /v1/ask HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    )
    let sent = 0
    const drip = setInterval(() => {
      if (sent < body.length && !socket.destroyed) socket.write(body[sent++] ?? '')
    }, 50)
    cleanups.push(() => clearInterval(drip))
    const text = await reply
    clearInterval(drip)
    expect(sent).toBeLessThan(body.length)
    expect(text).toMatch(/^HTTP\/1\.1 408 /)
    expect(text).toContain('"code":"REQUEST_TIMEOUT"')
    const answered = await waiting
    expect(answered.status).toBe(200)
    expect(await answered.json()).toMatchObject({ callId: 'edge-wait', pending: true })
    expect(() => parseConfig({ ASKBRIDGE_BODY_TIMEOUT: 'soon' }, PLATFORMS)).toThrow(/ASKBRIDGE_BODY_TIMEOUT/)
  })

  it('event streams are capped per client (429) and in total (503), with Retry-After; a closed one frees its place', async () => {
    const perClient = await bridge({ ASKBRIDGE_MAX_STREAMS_PER_CLIENT: '2' })
    const first = await stream(perClient.url)
    const second = await stream(perClient.url)
    expect([first.status, second.status]).toEqual([200, 200])
    const third = await stream(perClient.url)
    expect(third.status).toBe(429)
    expect(JSON.parse(await third.body)).toMatchObject({ error: { code: 'TOO_MANY_STREAMS' } })
    first.close()
    // Once the server saw the first stream close, a new one is admitted.
    let again = await stream(perClient.url)
    for (let i = 0; again.status === 429 && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 20))
      again = await stream(perClient.url)
    }
    expect(again.status).toBe(200)

    const total = await bridge({ ASKBRIDGE_MAX_STREAMS: '2', ASKBRIDGE_MAX_STREAMS_PER_CLIENT: '5' })
    await stream(total.url)
    await stream(total.url)
    const over = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        `${total.url}/v1/agents/edge-agent/replies`,
        { headers: { accept: 'text/event-stream' }, agent: false },
        (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (c: string) => {
            body += c
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
        },
      )
      req.on('error', reject)
      req.end()
    })
    expect(over.status).toBe(503)
    expect(over.headers['retry-after']).toBeDefined()
    expect(codeOf(over)).toBe('OVERLOADED')
  })

  it('connections are capped per client (429) and in total (503): the excess is answered, never left hanging', async () => {
    const perClient = await bridge({ ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT: '3' })
    const held: Socket[] = []
    for (let i = 0; i < 3; i++) {
      const { socket } = await rawConnection(perClient.url)
      // A request answered on it: the server has counted this connection.
      const answered = new Promise<void>((r) => socket.once('data', () => r()))
      socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n')
      await answered
      held.push(socket)
    }
    // The fourth connection's request is answered with the refusal, and not carried out.
    const { socket: fourth, reply } = await rawConnection(perClient.url)
    const ask = JSON.stringify({
      callId: 'refused-ask',
      timeoutMs: 1,
      questions: [{ id: 'go', question: 'Go?', options: [{ label: 'Yes' }, { label: 'No' }] }],
    })
    fourth.write(
      `POST /v1/ask HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${ask.length}\r\n\r\n${ask}`,
    )
    const refused = await reply
    expect(refused).toMatch(/^HTTP\/1\.1 429 /)
    expect(refused).toMatch(/retry-after: 1/i)
    expect(refused).toContain('"code":"TOO_MANY_CONNECTIONS"')
    expect(await perClient.bridge.store.findCalls('refused-ask')).toEqual([])
    // A held connection that closes frees its place.
    const last = held.pop()
    const closed = new Promise<void>((r) => last?.once('close', () => r()))
    last?.destroy()
    await closed
    let admitted = ''
    for (let i = 0; i < 50 && !admitted.startsWith('HTTP/1.1 200'); i++) {
      const { socket, reply: r } = await rawConnection(perClient.url)
      socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n')
      admitted = await r
    }
    expect(admitted).toMatch(/^HTTP\/1\.1 200 /)

    const total = await bridge({ ASKBRIDGE_MAX_CONNECTIONS: '2', ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT: '10' })
    for (let i = 0; i < 2; i++) {
      const { socket } = await rawConnection(total.url)
      const answered = new Promise<void>((r) => socket.once('data', () => r()))
      socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n')
      await answered
    }
    const { socket: third, reply: reply3 } = await rawConnection(total.url)
    third.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n')
    const overloaded = await reply3
    expect(overloaded).toMatch(/^HTTP\/1\.1 503 /)
    expect(overloaded).toContain('"code":"OVERLOADED"')
    expect(() => parseConfig({ ASKBRIDGE_MAX_CONNECTIONS: '0' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_MAX_CONNECTIONS/,
    )
  })

  it('/metrics labels come from the matched route: 50 unknown paths add one series, not 50', async () => {
    const b = await bridge()
    const series = async () =>
      (await (await fetch(`${b.url}/metrics`)).text())
        .split('\n')
        .filter((l) => l.startsWith('askbridge_http_requests_total{'))
    const before = await series()
    for (let i = 0; i < 50; i++) {
      const path = [`/v1/nope-${i}`, `/v2/nope-${i}`, `/nope-${i}`, `/v1/questions/x/y/${i}`][i % 4]
      expect((await fetch(`${b.url}${path}`)).status).toBe(404)
    }
    const added = (await series()).filter((l) => !before.includes(l))
    // The 404s share one label; the scrape between adds the /metrics series itself.
    expect(added.filter((l) => l.includes('status="404"'))).toEqual([
      'askbridge_http_requests_total{method="GET",route="other",status="404"} 50',
    ])
    expect(added.length).toBeLessThanOrEqual(2)
    // Known routes are labelled by their pattern, not their path.
    await fetch(`${b.url}/v1/questions/some-call-id`)
    await fetch(`${b.url}/inbox/tool/some-call-id`)
    const labels = (await series()).join('\n')
    expect(labels).toContain('route="/v1/questions/:callId"')
    expect(labels).toContain('route="/inbox/tool/:callId"')
    expect(labels).not.toContain('some-call-id')
  })

  it('held: default bind 127.0.0.1, 0.0.0.0 without a token refused, the 1 MiB body cap, no token in logs', async () => {
    expect(parseConfig({}, PLATFORMS).ASKBRIDGE_HOST).toBe('127.0.0.1')
    expect(() => parseConfig({ ASKBRIDGE_HOST: '0.0.0.0' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_API_TOKEN \(or ASKBRIDGE_AGENT_TOKENS\) is required/,
    )
    const b = await bridge()
    const big = await fetch(`${b.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callId: 'big', pad: 'x'.repeat(1024 * 1024) }),
    })
    expect(big.status).toBe(413)
    expect(await big.json()).toMatchObject({ error: { code: 'BODY_TOO_LARGE' } })

    // Refusals are logged with their code, never with the token or cookies.
    const lines: string[] = []
    const logger: Logger = {
      debug: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
      info: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
      warn: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
      error: (m, f) => lines.push(`${m} ${JSON.stringify(f ?? {})}`),
    }
    const token = 'secret-edge-token-7890'
    const config = parseConfig(
      {
        ASKBRIDGE_PORT: '0',
        ASKBRIDGE_DB: join(b.dir, 'logs.db'),
        ASKBRIDGE_API_TOKEN: token,
      },
      PLATFORMS,
    )
    const logged = await serve({ config, platforms: PLATFORMS, logger, escalationIntervalMs: 0 })
    cleanups.push(() => logged.close())
    const wrong = await get(logged.url, '/v1/questions', {
      authorization: `Bearer ${token}x`,
      cookie: `askbridge_token=${token}x`,
    })
    expect(wrong.status).toBe(401)
    const cookie = await get(logged.url, '/inbox/api/cards', { cookie: `askbridge_token=${token}x` })
    expect(cookie.status).toBe(401)
    const text = lines.join('\n')
    expect(text).toContain('UNAUTHORIZED')
    expect(text).not.toContain(token)
  })
})

describe('security: storage', () => {
  it('the SQLite database, -wal and -shm are created 0600', async () => {
    const b = await bridge()
    // A write, so the WAL and its index exist.
    const res = await fetch(`${b.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        callId: 'mode-1',
        timeoutMs: 1,
        questions: [{ id: 'go', question: 'Go?', options: [{ label: 'Yes' }, { label: 'No' }] }],
      }),
    })
    expect(res.status).toBe(200)
    const db = join(b.dir, 'bridge.db')
    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      expect((statSync(file).mode & 0o777).toString(8), file).toBe('600')
    }
  })

  it('on PostgreSQL a Discord HTTP interaction taken by one replica is a replay to the others', async () => {
    const schema = await testSchema()
    cleanups.push(() => schema.drop())
    const fake = await new FakeDiscord().start()
    cleanups.push(() => fake.close())
    const env = {
      ASKBRIDGE_DB: schema.url,
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.apiUrl,
      DISCORD_CHANNEL_ID: fake.channelId,
      DISCORD_PUBLIC_KEY: fake.publicKeyHex,
    }
    const a = await bridge(env)
    const b = await bridge(env)
    const body = JSON.stringify({ type: 1, id: '1', application_id: '1', token: 'ping', version: 1 })
    const timestamp = String(Math.floor(Date.now() / 1000))
    const post = (url: string) =>
      fetch(`${url}/discord/interactions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature-ed25519': fake.signBody(body, timestamp),
          'x-signature-timestamp': timestamp,
        },
        body,
      })
    const first = await post(a.url)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ type: 1 })
    const replayed = await post(b.url)
    expect(replayed.status).toBe(401)
    expect(await replayed.json()).toMatchObject({ message: 'stale or replayed request' })
    expect((await post(a.url)).status).toBe(401)
  })
})
