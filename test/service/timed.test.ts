import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { UserQuestionError } from '../../src/protocol/errors.js'
import type { AnswererRequest, TimedUserQuestionResult } from '../../src/protocol/types.js'
import { colour, committed, deferred, keyFor, makeService } from '../helpers/service.js'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

const red = { answers: [{ id: 'colour', selected: ['Red'] }] }

describe('askTimed', () => {
  it.each([0, -5, 1.5, Number.NaN, 2_147_483_648, Number.MAX_SAFE_INTEGER + 2])(
    'BAD_TIMEOUT for %s',
    async (timeout) => {
      const { service, store } = makeService()
      const agent = service.agents.register('a')
      await expect(service.askTimed({ questions: [colour], agent }, 'c', timeout)).rejects.toMatchObject({
        code: 'BAD_TIMEOUT',
      })
      expect(await store.events()).toEqual([])
    },
  )

  it('accepts the bounds 1 and 2147483647', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(async () => red)
    await expect(service.askTimed({ questions: [colour], agent }, 'c1', 1)).resolves.toEqual(red)
    await expect(service.askTimed({ questions: [colour], agent }, 'c2', 2_147_483_647)).resolves.toEqual(red)
  })

  it('requires an agent', async () => {
    const { service } = makeService()
    const request = { questions: [colour] } as unknown as Parameters<typeof service.askTimed>[0]
    await expect(service.askTimed(request, 'c', 1000)).rejects.toMatchObject({ code: 'CALLER_NOT_LIVE' })
  })

  it('returns the answer when it arrives inside the window', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(async () => red)
    await expect(service.askTimed({ questions: [colour], agent }, 'c', 1000)).resolves.toEqual(red)
    expect(await service.projection()).toEqual({
      active: [],
      settled: [{ callId: 'c', answers: red.answers }],
    })
  })

  it('returns {pending, callId} when nothing arrives, and the call is continued', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(() => new Promise(() => {}))
    const result = service.askTimed({ questions: [colour], agent }, 'c', 1000)
    await vi.advanceTimersByTimeAsync(1000)
    await expect(result).resolves.toEqual({ pending: true, callId: 'c' })
    expect(await service.projection()).toEqual({
      active: [{ callId: 'c', questions: [colour], state: 'continued' }],
      settled: [],
    })
  })

  it('an unclaimed request is held until the deadline even if every answerer delegated', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use((_r, next) => next())
    let settled: TimedUserQuestionResult | undefined
    void service.askTimed({ questions: [colour], agent }, 'c', 1000).then((r) => {
      settled = r
    })
    await vi.advanceTimersByTimeAsync(999)
    expect(settled).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await committed()
    expect(settled).toEqual({ pending: true, callId: 'c' })
  })

  it('DUPLICATE_WAIT for the same agent and callId while one is live; other agents and calls are independent', async () => {
    const { service } = makeService()
    const a = service.agents.register('a')
    const b = service.agents.register('b')
    const answers = new Map<string, (v: typeof red) => void>()
    service.use(
      (request) =>
        new Promise((resolve) => {
          answers.set(`${request.agent?.id}/${request.callId}`, resolve)
        }),
    )
    const first = service.askTimed({ questions: [colour], agent: a }, 'c', 1000)
    await vi.advanceTimersByTimeAsync(0)
    await expect(service.askTimed({ questions: [colour], agent: a }, 'c', 1000)).rejects.toMatchObject({
      code: 'DUPLICATE_WAIT',
    })
    const sibling = service.askTimed({ questions: [colour], agent: a }, 'd', 500)
    const other = service.askTimed({ questions: [colour], agent: b }, 'c2', 1000)
    await vi.advanceTimersByTimeAsync(0)
    answers.get('a/c')?.(red)
    await expect(first).resolves.toEqual(red)
    await vi.advanceTimersByTimeAsync(500)
    await expect(sibling).resolves.toEqual({ pending: true, callId: 'd' })
    answers.get('b/c2')?.(red)
    await expect(other).resolves.toEqual(red)
    // The wait ended, so the same call id may wait again.
    const again = service.askTimed({ questions: [colour], agent: a }, 'c', 10)
    await vi.advanceTimersByTimeAsync(10)
    await expect(again).resolves.toEqual({ pending: true, callId: 'c' })
  })

  it("the caller's signal aborting ends it with ASK_ABORTED", async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(() => new Promise(() => {}))
    const controller = new AbortController()
    const result = service.askTimed({ questions: [colour], agent, signal: controller.signal }, 'c', 1000)
    await vi.advanceTimersByTimeAsync(100)
    controller.abort()
    await expect(result).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    expect((await service.projection()).active).toEqual([])
  })

  it("a timeout aborts only the waterfall's own signal, never the caller's", async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    const seen = deferred<AnswererRequest>()
    service.use((request) => {
      seen.resolve(request)
      return new Promise(() => {})
    })
    const caller = new AbortController()
    const result = service.askTimed({ questions: [colour], agent, signal: caller.signal }, 'c', 1000)
    const request = await seen.promise
    await vi.advanceTimersByTimeAsync(1000)
    await expect(result).resolves.toEqual({ pending: true, callId: 'c' })
    expect(caller.signal.aborted).toBe(false)
    expect(request.signal.aborted).toBe(true)
    expect((request.signal.reason as UserQuestionError).code).toBe('ASK_TIMED_OUT')
  })

  it('closing the service ends every wait with ASK_ABORTED', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(() => new Promise(() => {}))
    const one = service.askTimed({ questions: [colour], agent }, 'c1', 1000)
    const two = service.askTimed({ questions: [colour], agent }, 'c2', 1000)
    const blocking = service.ask({ questions: [colour], agent })
    await vi.advanceTimersByTimeAsync(0)
    await service.close()
    await expect(one).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    await expect(two).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    await expect(blocking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
  })

  it('a client rejecting with ASK_TIMED_OUT maps to pending; other codes are rethrown', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(async () => {
      throw new UserQuestionError('ASK_TIMED_OUT', 'client countdown ended')
    })
    await expect(service.askTimed({ questions: [colour], agent }, 'c', 1000)).resolves.toEqual({
      pending: true,
      callId: 'c',
    })
    const { service: s2 } = makeService()
    const agent2 = s2.agents.register('a')
    s2.use(async () => {
      throw new UserQuestionError('ASK_CANCELLED', 'no')
    })
    await expect(s2.askTimed({ questions: [colour], agent: agent2 }, 'c', 1000)).rejects.toMatchObject({
      code: 'ASK_CANCELLED',
    })
  })
})

describe('attachWait', () => {
  async function setup(timeout = 1000) {
    const { service } = makeService()
    const agent = service.agents.register('a')
    const answer = deferred<typeof red>()
    service.use(() => answer.promise)
    let result: TimedUserQuestionResult | undefined
    const asking = service.askTimed({ questions: [colour], agent }, 'c', timeout).then((r) => {
      result = r
      return r
    })
    await vi.advanceTimersByTimeAsync(0)
    return { service, agent, answer, asking, result: () => result }
  }

  it('a claim stops the host timer and yields one frame with the remaining time', async () => {
    const { service, agent, result } = await setup()
    await vi.advanceTimersByTimeAsync(300)
    const release = new AbortController()
    const frames: number[] = []
    const stream = (async () => {
      for await (const frame of service.attachWait(agent, 'c', release.signal)) frames.push(frame.remainingMs)
    })()
    await vi.advanceTimersByTimeAsync(0)
    expect(frames).toEqual([700])
    await vi.advanceTimersByTimeAsync(5000)
    expect(result()).toBeUndefined() // held past the deadline while claimed
    release.abort()
    await stream
    // Released after the deadline: it applies at once.
    await vi.advanceTimersByTimeAsync(0)
    await committed()
    expect(result()).toEqual({ pending: true, callId: 'c' })
    expect(frames).toEqual([700])
  })

  it('when the last claim leaves, the original deadline applies again; a claim never extends it', async () => {
    const { service, agent, result } = await setup()
    const one = new AbortController()
    const two = new AbortController()
    const s1 = (async () => {
      for await (const _ of service.attachWait(agent, 'c', one.signal));
    })()
    const s2 = (async () => {
      for await (const _ of service.attachWait(agent, 'c', two.signal));
    })()
    await vi.advanceTimersByTimeAsync(200)
    one.abort()
    await s1
    await vi.advanceTimersByTimeAsync(900)
    expect(result()).toBeUndefined() // still claimed by the second client
    two.abort()
    await s2
    await vi.advanceTimersByTimeAsync(0)
    // 1100 ms have passed; the original 1000 ms deadline applies at once.
    await committed()
    expect(result()).toEqual({ pending: true, callId: 'c' })
  })

  it('released before the deadline, the wait ends at the original deadline, not later', async () => {
    const { service, agent, result } = await setup()
    const release = new AbortController()
    const s = (async () => {
      for await (const _ of service.attachWait(agent, 'c', release.signal));
    })()
    await vi.advanceTimersByTimeAsync(400)
    release.abort()
    await s
    await vi.advanceTimersByTimeAsync(599)
    expect(result()).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await committed()
    expect(result()).toEqual({ pending: true, callId: 'c' })
  })

  it('the stream ends when the wait ends (answered)', async () => {
    const { service, agent, answer, asking } = await setup()
    const frames: unknown[] = []
    const s = (async () => {
      for await (const f of service.attachWait(agent, 'c')) frames.push(f)
    })()
    await vi.advanceTimersByTimeAsync(0)
    answer.resolve(red)
    await expect(asking).resolves.toEqual(red)
    await s
    expect(frames).toHaveLength(1)
  })

  it('no frames for an unknown, expired or finished wait', async () => {
    const { service, agent, answer, asking } = await setup(100)
    const collect = async (callId: string) => {
      const frames: unknown[] = []
      for await (const f of service.attachWait(agent, callId)) frames.push(f)
      return frames
    }
    expect(await collect('unknown')).toEqual([])
    await vi.advanceTimersByTimeAsync(100)
    await asking
    expect(await collect('c')).toEqual([]) // expired
    answer.resolve(red)
    const other = service.askTimed({ questions: [colour], agent }, 'c3', 1000)
    await expect(other).resolves.toEqual(red)
    expect(await collect('c3')).toEqual([]) // finished
  })

  it('no frames for a cancelled wait', async () => {
    const { service, agent, asking } = await setup()
    await service.cancel(await keyFor(service.store, 'c'))
    await expect(asking).rejects.toMatchObject({ code: 'ASK_CANCELLED' })
    const frames: unknown[] = []
    for await (const f of service.attachWait(agent, 'c')) frames.push(f)
    expect(frames).toEqual([])
  })
})

describe('close for a restart', () => {
  it('close({keepCalls}) ends waits with ASK_ABORTED but leaves the calls open in the log', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(() => new Promise(() => {}))
    const timed = service.askTimed({ questions: [colour], agent }, 't', 1000)
    const blocking = service.ask({ questions: [colour], agent, wait: { callId: 'b' } })
    await vi.advanceTimersByTimeAsync(0)
    await service.close({ keepCalls: true })
    await expect(timed).rejects.toMatchObject({
      code: 'ASK_ABORTED',
      message: expect.stringMatching(/re-attach/),
    })
    await expect(blocking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    expect((await service.getCall(await keyFor(service.store, 't')))?.state).toBe('open')
    expect((await service.getCall(await keyFor(service.store, 'b')))?.state).toBe('open')
  })
})
