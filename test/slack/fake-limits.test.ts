/**
 * The fake Slack's rate limits sit at Slack's documented numbers (docs/platform-limits.md#rate-limits): at the
 * limit a call goes through, one past it gets 429, so a benchmark cannot pass by a lenient fake.
 */
import { afterEach, describe, expect, it } from 'vitest'
import {
  METHOD_TIERS,
  POST_BURST,
  POST_INTERVAL_MS,
  POSTS_PER_MINUTE,
  SlackLimits,
  TIER_PER_MINUTE,
} from '../fakes/slack/limits.js'
import { FakeSlack } from '../fakes/slack/server.js'

function clock() {
  let now = 1_000_000
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms
    },
  }
}

describe('fake Slack rate limits (injected clock)', () => {
  it('uses the documented numbers', () => {
    expect(TIER_PER_MINUTE).toEqual({ 1: 1, 2: 20, 3: 50, 4: 100 })
    expect(METHOD_TIERS['chat.update']).toBe(3)
    expect(METHOD_TIERS['chat.delete']).toBe(3)
    expect(METHOD_TIERS['views.open']).toBe(4)
    expect(POST_INTERVAL_MS).toBe(1000)
    expect(POSTS_PER_MINUTE).toBeGreaterThanOrEqual(200)
  })

  it('chat.postMessage: a short burst per channel, then one per second; other channels unaffected', () => {
    const c = clock()
    const limits = new SlackLimits({ now: c.now })
    for (let i = 0; i < POST_BURST; i++)
      expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(undefined)
    expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(1)
    expect(limits.check('chat.postMessage', { channel: 'C2' })).toBe(undefined)
    c.advance(POST_INTERVAL_MS - 1)
    expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(1)
    c.advance(1)
    expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(undefined)
    expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(1)
    // Sustained: exactly one a second goes through, forever.
    for (let s = 0; s < 100; s++) {
      c.advance(POST_INTERVAL_MS)
      expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(undefined)
      expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(1)
    }
  })

  it('chat.postMessage: the workspace-wide limit across channels', () => {
    const c = clock()
    const limits = new SlackLimits({ now: c.now })
    for (let i = 0; i < POSTS_PER_MINUTE; i++)
      expect(limits.check('chat.postMessage', { channel: `C${i}` }), `post ${i}`).toBe(undefined)
    expect(limits.check('chat.postMessage', { channel: 'Cnew' })).toBe(1)
    c.advance(60_000 / POSTS_PER_MINUTE)
    expect(limits.check('chat.postMessage', { channel: 'Cnew' })).toBe(undefined)
  })

  it('a tier allows its per-minute number, per method per workspace, and refuses one past it', () => {
    for (const [method, tier] of Object.entries(METHOD_TIERS)) {
      const c = clock()
      const limits = new SlackLimits({ now: c.now })
      const perMinute = TIER_PER_MINUTE[tier]
      for (let i = 0; i < perMinute; i++)
        expect(limits.check(method, { channel: `C${i}` }), `${method} ${i}`).toBe(undefined)
      const retry = limits.check(method, { channel: 'Cother' })
      expect(retry, method).toBe(Math.ceil(60 / perMinute))
      // Another method has its own bucket.
      expect(limits.check(method === 'chat.update' ? 'chat.delete' : 'chat.update', {})).toBe(undefined)
      c.advance(60_000 / perMinute)
      expect(limits.check(method, {}), method).toBe(undefined)
      expect(limits.check(method, {}), method).not.toBe(undefined)
    }
  })

  it('a refused call uses no token, and unlimited start-up methods pass', () => {
    const c = clock()
    const limits = new SlackLimits({ now: c.now })
    for (let i = 0; i < POST_BURST; i++) limits.check('chat.postMessage', { channel: 'C1' })
    for (let i = 0; i < 50; i++) expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(1)
    c.advance(POST_INTERVAL_MS)
    expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(undefined)
    for (let i = 0; i < 100; i++) expect(limits.check('auth.test', {})).toBe(undefined)
  })

  it('speed runs the limits faster, Retry-After stays whole seconds', () => {
    const c = clock()
    const limits = new SlackLimits({ now: c.now, speed: 10 })
    for (let i = 0; i < POST_BURST; i++) limits.check('chat.postMessage', { channel: 'C1' })
    expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(1)
    c.advance(POST_INTERVAL_MS / 10)
    expect(limits.check('chat.postMessage', { channel: 'C1' })).toBe(undefined)
  })
})

describe('fake Slack rate limits on the wire', () => {
  let fake: FakeSlack | undefined
  afterEach(async () => {
    await fake?.close()
    fake = undefined
  })

  const post = (f: FakeSlack, method: string, args: Record<string, unknown>) =>
    fetch(`${f.apiUrl}${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.options.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(args),
    })

  it('answers past the limit with 429, ratelimited and Retry-After', async () => {
    fake = await FakeSlack.start()
    const statuses: number[] = []
    for (let i = 0; i <= POST_BURST; i++) {
      const res = await post(fake, 'chat.postMessage', { channel: 'C1', text: `m${i}` })
      statuses.push(res.status)
      if (res.status === 429) {
        expect(res.headers.get('retry-after')).toBe('1')
        expect(await res.json()).toEqual({ ok: false, error: 'ratelimited' })
      }
    }
    expect(statuses).toEqual([...Array(POST_BURST).fill(200), 429])
    expect(fake.limited).toBe(1)
    expect([...fake.messages.values()].filter((m) => m.channel === 'C1')).toHaveLength(POST_BURST)
  })

  it('can be turned off for tests about something else', async () => {
    fake = await FakeSlack.start({ rateLimits: false })
    for (let i = 0; i <= POST_BURST * 3; i++)
      expect((await post(fake, 'chat.postMessage', { channel: 'C1', text: `m${i}` })).status).toBe(200)
  })
})
