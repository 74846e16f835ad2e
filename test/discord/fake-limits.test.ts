/**
 * The fake Discord's rate limits: per-route buckets with Discord's headers and the global 50 a
 * second, at the limit and one past, so a benchmark cannot pass by a lenient fake.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { DiscordLimits, GLOBAL_PER_SECOND, ROUTE_LIMITS } from '../fakes/discord/limits.js'
import { FakeDiscord } from '../fakes/discord/server.js'

function clock() {
  let now = 1_000_000
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms
    },
  }
}

const CHANNEL = '110000000000000003'
const OTHER = '110000000000000009'
const post = (id = CHANNEL) => `/channels/${id}/messages`
const edit = (id = CHANNEL) => `/channels/${id}/messages/120000000000000001`

describe('fake Discord rate limits (injected clock)', () => {
  it('uses the documented global limit and the route limits Discord sends', () => {
    expect(GLOBAL_PER_SECOND).toBe(50)
    expect(ROUTE_LIMITS.map((r) => [r.method, r.limit, r.windowMs])).toEqual([
      ['POST', 5, 5000],
      ['PATCH', 5, 5000],
    ])
  })

  it('creating messages: 5 per 5 s per channel with the headers, the 6th gets 429; edits are a bucket of their own', () => {
    const c = clock()
    const limits = new DiscordLimits({ now: c.now })
    for (let i = 0; i < 5; i++) {
      const v = limits.check('POST', post())
      expect(v.ok, `post ${i}`).toBe(true)
      expect(v.headers).toMatchObject({
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': String(4 - i),
        'x-ratelimit-reset-after': '5.000',
        'x-ratelimit-bucket': 'msg-create',
      })
    }
    const past = limits.check('POST', post())
    expect(past).toMatchObject({
      ok: false,
      status: 429,
      headers: { 'retry-after': '5.000', 'x-ratelimit-scope': 'user', 'x-ratelimit-remaining': '0' },
      body: { retry_after: 5, global: false },
    })
    // Another channel, and edits in this one, have buckets of their own.
    expect(limits.check('POST', post(OTHER)).ok).toBe(true)
    expect(limits.check('PATCH', edit()).ok).toBe(true)
    c.advance(4999)
    expect(limits.check('POST', post()).ok).toBe(false)
    c.advance(1)
    expect(limits.check('POST', post()).ok).toBe(true)
  })

  it('the global limit: 50 a second across routes, the 51st gets a global 429; interactions exempt', () => {
    const c = clock()
    const limits = new DiscordLimits({ now: c.now })
    for (let i = 0; i < GLOBAL_PER_SECOND; i++)
      expect(limits.check('GET', `/channels/${100000000000000000 + i}/messages`).ok, `request ${i}`).toBe(
        true,
      )
    const past = limits.check('GET', '/users/@me')
    expect(past).toMatchObject({
      ok: false,
      headers: { 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global', 'retry-after': '1.000' },
      body: { global: true, retry_after: 1 },
    })
    expect(limits.check('POST', '/interactions/1/tok/callback').ok).toBe(true)
    expect(limits.check('POST', '/webhooks/1/tok').ok).toBe(true)
    c.advance(1000)
    expect(limits.check('GET', '/users/@me').ok).toBe(true)
  })

  it('a refused request uses nothing; speed shortens the windows', () => {
    const c = clock()
    const limits = new DiscordLimits({ now: c.now, speed: 10 })
    for (let i = 0; i < 5; i++) limits.check('PATCH', edit())
    for (let i = 0; i < 20; i++) expect(limits.check('PATCH', edit()).ok).toBe(false)
    c.advance(500)
    expect(limits.check('PATCH', edit()).ok).toBe(true)
  })
})

describe('fake Discord rate limits on the wire', () => {
  let fake: FakeDiscord | undefined
  afterEach(async () => {
    await fake?.close()
    fake = undefined
  })

  const send = (f: FakeDiscord, i: number) =>
    fetch(`${f.apiUrl}/v10/channels/${f.channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${f.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: `m${i}`, allowed_mentions: { parse: [] } }),
    })

  it('answers past a bucket with 429, retry_after and the headers discord.js reads', async () => {
    fake = await new FakeDiscord().start()
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const res = await send(fake, i)
      statuses.push(res.status)
      expect(res.headers.get('x-ratelimit-bucket')).toBe('msg-create')
      if (res.status === 429) {
        expect(res.headers.get('x-ratelimit-scope')).toBe('user')
        expect(await res.json()).toMatchObject({ global: false, retry_after: expect.any(Number) })
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(fake.limited).toBe(1)
    expect(fake.channelMessages()).toHaveLength(5)
  })

  it('can be turned off for tests about something else', async () => {
    fake = await new FakeDiscord({ rateLimits: false }).start()
    for (let i = 0; i < 8; i++) expect((await send(fake, i)).status).toBe(200)
  })
})
