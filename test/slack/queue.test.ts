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

  it('spaces calls to one channel and runs other channels alongside', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 1000 })
    const started: string[] = []
    const call = (lane: string, n: number) =>
      queues.run(lane, (api) =>
        api('chat.postMessage', async () => {
          started.push(`${lane}${n}`)
        }),
      )
    const all = Promise.all([call('A', 1), call('A', 2), call('A', 3), call('B', 1)])
    await vi.advanceTimersByTimeAsync(0)
    expect(started).toEqual(['A1', 'B1'])
    await vi.advanceTimersByTimeAsync(999)
    expect(started).toEqual(['A1', 'B1'])
    await vi.advanceTimersByTimeAsync(1)
    expect(started).toEqual(['A1', 'B1', 'A2'])
    await vi.advanceTimersByTimeAsync(1000)
    expect(started).toEqual(['A1', 'B1', 'A2', 'A3'])
    await all
  })

  it('keeps the messages of one task together: nothing interleaves in the lane', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0 })
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
    const queues = new ChannelQueues({ perChannelIntervalMs: 0 })
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
    const queues = new ChannelQueues({ perChannelIntervalMs: 0 })
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
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, maxRateLimitRetries: 2 })
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

  it('stop() rejects waiting work', async () => {
    const queues = new ChannelQueues({ perChannelIntervalMs: 0 })
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
