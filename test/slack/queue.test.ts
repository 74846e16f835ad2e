import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ChannelQueues, SlackQueueError } from '../../adapters/slack/queue.js'

/** What @slack/web-api throws for a 429 when `rejectRateLimitedCalls` is on. */
const rateLimited = (retryAfter: number) =>
  Object.assign(new Error('rate limited'), { code: 'slack_webapi_rate_limited_error', retryAfter })

describe('per-channel queues (simulated clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('posts to one channel in a short burst, then one a second; other channels alongside', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 1000, postBurst: 2 })
    const started: string[] = []
    const call = (lane: string, n: number) =>
      queues.run(lane, (api) =>
        api('chat.postMessage', async () => {
          started.push(`${lane}${n}`)
        }),
      )
    const all = Promise.all([call('A', 1), call('A', 2), call('A', 3), call('A', 4), call('B', 1)])
    await vi.advanceTimersByTimeAsync(0)
    expect(started.sort()).toEqual(['A1', 'A2', 'B1'])
    await vi.advanceTimersByTimeAsync(999)
    expect(started).toHaveLength(3)
    await vi.advanceTimersByTimeAsync(1)
    expect(started.at(-1)).toBe('A3')
    await vi.advanceTimersByTimeAsync(999)
    expect(started).toHaveLength(4)
    await vi.advanceTimersByTimeAsync(1)
    expect(started.at(-1)).toBe('A4')
    await all
  })

  it('sustains the allowed posting rate: 100 posts after the burst take 98 intervals', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 1000, postBurst: 2 })
    const at: number[] = []
    const t0 = Date.now()
    const posts = Array.from({ length: 100 }, () =>
      queues.run('A', (api) => api('chat.postMessage', async () => void at.push(Date.now() - t0))),
    )
    await vi.advanceTimersByTimeAsync(98_000)
    await Promise.all(posts)
    expect(at).toHaveLength(100)
    expect(at.at(-1)).toBe(98_000)
    // Never faster than the bucket allows: at most 2 + t/1000 posts by time t.
    for (const [i, t] of at.entries()) expect(i + 1).toBeLessThanOrEqual(2 + Math.floor(t / 1000))
  })

  it('updates do not wait behind the posts queued in their channel', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 1000, postBurst: 2 })
    const events: string[] = []
    const posts = Array.from({ length: 200 }, (_, i) =>
      queues.run('A', (api) => api('chat.postMessage', async () => void events.push(`post${i}`))),
    )
    await vi.advanceTimersByTimeAsync(5000)
    const updated = queues.update('A:1.000001', 'chat.update', async () => void events.push('update'))
    await vi.advanceTimersByTimeAsync(0)
    await updated
    expect(events.at(-1)).toBe('update')
    expect(events.filter((e) => e.startsWith('post'))).toHaveLength(7)
    queues.stop()
    await Promise.allSettled(posts)
  })

  it('a newer update of a message replaces one still waiting; only the newest is sent', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0 })
    const sent: string[] = []
    let limitedOnce = false
    const update = (ts: string, v: string) =>
      queues.update(`C:${ts}`, 'chat.update', async () => {
        if (!limitedOnce) {
          limitedOnce = true
          throw rateLimited(2)
        }
        sent.push(`${ts}=${v}`)
      })
    // The first update meets a 429: chat.update is held for 2 s, and updates queue meanwhile.
    const held = update('m0', 'v1')
    await vi.advanceTimersByTimeAsync(0)
    const first = update('m1', 'v1')
    const other = update('m2', 'v1')
    const second = update('m1', 'v2')
    const third = update('m1', 'v3')
    await vi.advanceTimersByTimeAsync(1999)
    expect(sent).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    await Promise.all([held, first, second, third, other])
    expect(sent.sort()).toEqual(['m0=v1', 'm1=v3', 'm2=v1'])
    expect(queues.superseded).toBe(2)
  })

  it('an update of a message on the wire waits for it, then the newest goes', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, pace: false })
    const sent: string[] = []
    let release = () => {}
    const first = queues.update('C:1', 'chat.update', async () => {
      sent.push('v1 start')
      await new Promise<void>((resolve) => {
        release = resolve
      })
      sent.push('v1 done')
    })
    await vi.advanceTimersByTimeAsync(0)
    const second = queues.update('C:1', 'chat.update', async () => void sent.push('v2'))
    const third = queues.update('C:1', 'chat.update', async () => void sent.push('v3'))
    await vi.advanceTimersByTimeAsync(5000)
    expect(sent).toEqual(['v1 start'])
    release()
    await Promise.all([first, second, third])
    expect(sent).toEqual(['v1 start', 'v1 done', 'v3'])
  })

  it('paces chat.postMessage across the workspace too (several hundred a minute)', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 1000, postBurst: 2 })
    const at: number[] = []
    const t0 = Date.now()
    const posts = Array.from({ length: 200 }, (_, i) =>
      queues.run(`C${i}`, (api) => api('chat.postMessage', async () => void at.push(Date.now() - t0))),
    )
    await vi.advanceTimersByTimeAsync(10_000)
    await Promise.all(posts)
    // 150 at once, then 300 a minute (one per 200 ms).
    expect(at.filter((t) => t === 0)).toHaveLength(150)
    expect(at.at(-1)).toBe(50 * 200)
  })

  it('keeps the messages of one task together: nothing interleaves in the lane', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, pace: false })
    const order: string[] = []
    const card = (name: string) =>
      queues.run('C', async (api) => {
        for (const part of [1, 2, 3]) {
          await api('chat.postMessage', async () => {
            order.push(`${name}${part}`)
            await Promise.resolve()
          })
        }
      })
    await Promise.all([card('x'), card('y')])
    expect(order).toEqual(['x1', 'x2', 'x3', 'y1', 'y2', 'y3'])
  })

  it('honours Retry-After: the call waits and is retried, and its method waits everywhere', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, pace: false })
    let attempts = 0
    const events: string[] = []
    const limited = queues.run('A', (api) =>
      api('chat.update', async () => {
        attempts++
        events.push(`A attempt ${attempts}`)
        if (attempts === 1) throw rateLimited(2)
        return 'ok'
      }),
    )
    await vi.advanceTimersByTimeAsync(0)
    const sameMethod = queues.run('B', (api) => api('chat.update', async () => events.push('B update')))
    const otherMethod = queues.run('B2', (api) => api('chat.postMessage', async () => events.push('B2 post')))
    await vi.advanceTimersByTimeAsync(0)
    expect(events).toEqual(['A attempt 1', 'B2 post'])
    await vi.advanceTimersByTimeAsync(1999)
    expect(events).toEqual(['A attempt 1', 'B2 post'])
    await vi.advanceTimersByTimeAsync(1)
    expect(events).toEqual(['A attempt 1', 'B2 post', 'A attempt 2', 'B update'])
    await expect(limited).resolves.toBe('ok')
    await Promise.all([sameMethod, otherMethod])
    expect(queues.rateLimited).toBe(1)
  })

  it('a 429 on chat.postMessage holds only the channel Slack limited, not every channel', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, pace: false })
    const events: string[] = []
    let attempts = 0
    const limited = queues.run('A', (api) =>
      api('chat.postMessage', async () => {
        attempts++
        events.push(`A post ${attempts}`)
        if (attempts === 1) throw rateLimited(5)
      }),
    )
    await vi.advanceTimersByTimeAsync(0)
    const otherChannel = queues.run('B', (api) => api('chat.postMessage', async () => events.push('B post')))
    const sameChannel = queues.run('A', (api) => api('chat.postMessage', async () => events.push('A next')))
    await vi.advanceTimersByTimeAsync(0)
    // Channel B posts at once; channel A waits out its Retry-After, in order.
    expect(events).toEqual(['A post 1', 'B post'])
    await vi.advanceTimersByTimeAsync(4999)
    expect(events).toEqual(['A post 1', 'B post'])
    await vi.advanceTimersByTimeAsync(1)
    expect(events).toEqual(['A post 1', 'B post', 'A post 2', 'A next'])
    await Promise.all([limited, otherChannel, sameChannel])
  })

  it('gives up after the configured number of rate-limited attempts, and errors pass through', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, pace: false, maxRateLimitRetries: 2 })
    const always = queues.run('A', (api) =>
      api('chat.update', async () => {
        throw rateLimited(0)
      }),
    )
    const failure = expect(always).rejects.toBeInstanceOf(SlackQueueError)
    await vi.advanceTimersByTimeAsync(10)
    await failure
    expect(queues.rateLimited).toBe(3)
    await expect(
      queues.run('A', (api) =>
        api('chat.update', async () => {
          throw new Error('channel_not_found')
        }),
      ),
    ).rejects.toThrow('channel_not_found')
  })

  it('a 429 on an update holds chat.update everywhere, not the channel posts', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0 })
    const events: string[] = []
    let attempts = 0
    const limited = queues.update('A:1', 'chat.update', async () => {
      attempts++
      events.push(`update ${attempts}`)
      if (attempts === 1) throw rateLimited(3)
    })
    await vi.advanceTimersByTimeAsync(0)
    const other = queues.update('B:1', 'chat.update', async () => void events.push('other update'))
    const post = queues.run('A', (api) => api('chat.postMessage', async () => void events.push('post')))
    await vi.advanceTimersByTimeAsync(0)
    expect(events).toEqual(['update 1', 'post'])
    await vi.advanceTimersByTimeAsync(2999)
    expect(events).toEqual(['update 1', 'post'])
    await vi.advanceTimersByTimeAsync(1)
    expect(events.sort()).toEqual(['other update', 'post', 'update 1', 'update 2'])
    await Promise.all([limited, other, post])
  })

  it('pace: false sends at once; only 429s slow it down', async () => {
    const queues = new ChannelQueues({ pace: false })
    const sent: number[] = []
    const all = Array.from({ length: 120 }, (_, i) =>
      queues.run('A', (api) => api('chat.postMessage', async () => void sent.push(i))),
    )
    const updates = Array.from({ length: 120 }, (_, i) =>
      queues.update(`A:${i}`, 'chat.update', async () => void sent.push(i)),
    )
    await vi.advanceTimersByTimeAsync(0)
    await Promise.all([...all, ...updates])
    expect(sent).toHaveLength(240)
  })

  it('stop() rejects queued updates', async () => {
    const queues = new ChannelQueues()
    const burst = Array.from({ length: 25 }, (_, i) => queues.update(`C:${i}`, 'chat.update', async () => {}))
    await vi.advanceTimersByTimeAsync(0)
    await Promise.all(burst)
    const waiting = queues.update('C:late', 'chat.update', async () => {})
    const failure = expect(waiting).rejects.toBeInstanceOf(SlackQueueError)
    queues.stop()
    await failure
    await queues.idle()
  })

  it('stop() rejects waiting work', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, pace: false })
    const waiting = queues.run('A', (api) =>
      api('chat.update', async () => {
        throw rateLimited(60)
      }),
    )
    const failure = expect(waiting).rejects.toBeInstanceOf(SlackQueueError)
    await vi.advanceTimersByTimeAsync(0)
    queues.stop()
    await failure
    await expect(queues.run('A', async () => 1)).rejects.toBeInstanceOf(SlackQueueError)
  })
})
