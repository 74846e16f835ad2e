import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ChatAdapter } from '../../src/answerer/adapter.js'
import { answerClaudeCodeHook } from '../../src/hooks/run.js'
import type { Logger } from '../../src/log.js'
import { UserQuestionError } from '../../src/protocol/errors.js'
import { projectionViewSchema } from '../../src/protocol/schemas.js'
import type { AnswererRequest, AskUserQuestionAnswer } from '../../src/protocol/types.js'
import type { Router } from '../../src/routing/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import { MemoryAdapter } from '../fakes/memory-adapter.js'
import { startAnswerer } from '../helpers/answerer.js'
import { colour, committed, deferred, makeService, refFor, until } from '../helpers/service.js'

const red = { answers: [{ id: 'colour', selected: ['Red'] }] }

describe('the last protocol gaps (#16)', () => {
  it("an answerer that aborts the caller's signal and rejects with its own ASK_CANCELLED keeps that code", async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    const caller = new AbortController()
    service.use(async () => {
      caller.abort()
      throw new UserQuestionError('ASK_CANCELLED', 'the person cancelled the question')
    })
    const asking = service.ask({ questions: [colour], agent, signal: caller.signal, wait: { callId: 'c' } })
    await expect(asking).rejects.toMatchObject({
      code: 'ASK_CANCELLED',
      message: 'the person cancelled the question',
    })
    expect((await service.getCall({ agentId: 'a', callId: 'c' }))?.dropCode).toBe('ASK_CANCELLED')
  })

  it('a caller that aborts while the answerer keeps waiting still gets ASK_ABORTED', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    const caller = new AbortController()
    const started = deferred<void>()
    service.use(() => {
      started.resolve()
      return new Promise(() => {})
    })
    const asking = service.ask({ questions: [colour], agent, signal: caller.signal, wait: { callId: 'c' } })
    await started.promise
    caller.abort()
    await expect(asking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
  })

  it('an expired wait whose timer has not fired yet expires on attach and yields nothing', async () => {
    let clock = 1_000
    const service = new UserQuestionService({ store: openStore('memory'), now: () => clock })
    const agent = service.agents.register('a')
    service.use(() => new Promise(() => {}))
    const asking = service.askTimed({ questions: [colour], agent }, 'c', 60_000)
    await new Promise((r) => setImmediate(r))
    clock += 60_000 // the deadline has passed; the 60 s timer has not fired
    const frames: number[] = []
    for await (const frame of service.attachWait(agent, 'c')) frames.push(frame.remainingMs)
    expect(frames).toEqual([])
    await expect(asking).resolves.toEqual({ pending: true, callId: 'c' })
    expect((await service.getCall({ agentId: 'a', callId: 'c' }))?.state).toBe('continued')
  })

  it("a reply listener's failure neither fails answer() nor blocks a retry: the reply stays queued and it is logged", async () => {
    const errors: unknown[] = []
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (_m, fields) => errors.push(fields) }
    const service = new UserQuestionService({ store: openStore('memory'), logger })
    const agent = service.agents.register('a')
    service.use(() => new Promise(() => {}))
    const asking = service.askTimed({ questions: [colour], agent }, 'c', 20)
    await expect(asking).resolves.toEqual({ pending: true, callId: 'c' })
    service.on('reply', () => {
      throw new Error('listener broke')
    })
    await expect(service.answer('a', 'c', red)).resolves.toBe(true)
    expect((await service.replies('a')).map((r) => r.callId)).toEqual(['c'])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ event: 'reply' })
  })

  it('the projection view schema refuses empty and duplicate callIds and active rows without questions', () => {
    const ok = { active: [{ callId: 'a', questions: [colour], state: 'open' }], settled: [] }
    expect(projectionViewSchema.safeParse(ok).success).toBe(true)
    const bad = [
      { active: [{ callId: '', questions: [colour], state: 'open' }], settled: [] },
      { active: [], settled: [{ callId: '', answers: [] }] },
      { active: [{ callId: 'a', questions: [], state: 'open' }], settled: [] },
      {
        active: [
          { callId: 'a', questions: [colour], state: 'open' },
          { callId: 'a', questions: [colour], state: 'continued' },
        ],
        settled: [],
      },
      {
        active: [{ callId: 'a', questions: [colour], state: 'open' }],
        settled: [{ callId: 'a', answers: [] }],
      },
    ]
    for (const view of bad) expect(projectionViewSchema.safeParse(view).success).toBe(false)
  })

  it('DELEGATED_CALLER tells the model to put the open question in its final result', async () => {
    const { service } = makeService()
    const sub = service.agents.register('sub', { delegated: true })
    const error = await service.ask({ questions: [colour], agent: sub }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'DELEGATED_CALLER' })
    expect((error as Error).message).toMatch(/final result/)
    expect((error as Error).message).toMatch(/delegated to you can ask it/)
  })
})

describe('timed asks with nobody to answer, and answerers after the caller left (#32)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Whether a promise has settled yet (it is left to settle on its own). */
  function settledFlag(promise: Promise<unknown>): () => boolean {
    let settled = false
    promise.then(
      () => {
        settled = true
      },
      () => {
        settled = true
      },
    )
    return () => settled
  }

  it('askTimed whose answerer rejects with NO_PROVIDER holds until the deadline (a client may attach), then returns pending', async () => {
    vi.useFakeTimers()
    const { service } = makeService()
    const agent = service.agents.register('a')
    let calls = 0
    service.use(async () => {
      calls++
      throw new UserQuestionError('NO_PROVIDER', 'nobody here takes it')
    })
    const asking = service.askTimed({ questions: [colour], agent }, 'c', 1000)
    const settled = settledFlag(asking)
    await vi.advanceTimersByTimeAsync(400)
    await committed()
    expect(calls).toBe(1)
    expect(settled()).toBe(false)
    // A client still attaches to the held request and gets the host's remaining time.
    const release = new AbortController()
    const frames: number[] = []
    const attached = (async () => {
      for await (const frame of service.attachWait(agent, 'c', release.signal)) frames.push(frame.remainingMs)
    })()
    await vi.advanceTimersByTimeAsync(0)
    expect(frames).toEqual([600])
    release.abort()
    await attached
    await vi.advanceTimersByTimeAsync(599)
    expect(settled()).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    await expect(asking).resolves.toEqual({ pending: true, callId: 'c' })
    expect((await service.getCall({ agentId: 'a', callId: 'c' }))?.state).toBe('continued')
  })

  it('ask whose answerer rejects with NO_PROVIDER still fails at once with NO_PROVIDER', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    service.use(async () => {
      throw new UserQuestionError('NO_PROVIDER', 'nobody here takes it')
    })
    await expect(service.ask({ questions: [colour], agent, wait: { callId: 'c' } })).rejects.toMatchObject({
      code: 'NO_PROVIDER',
    })
  })

  /** An answerer that rejects with `code` in the very turn its signal aborts. */
  const rejectsOnAbort =
    (code: 'NO_PROVIDER' | 'ASK_CANCELLED', started: () => void) => (request: AnswererRequest) =>
      new Promise<never>((_, reject) => {
        started()
        request.signal.addEventListener(
          'abort',
          () => reject(new UserQuestionError(code, `the answerer says ${code}`)),
          {
            once: true,
          },
        )
      })

  it.each(['NO_PROVIDER', 'ASK_CANCELLED'] as const)(
    "askTimed: the caller's abort wins over an answerer rejecting with %s in the same turn (ASK_ABORTED)",
    async (code) => {
      const { service } = makeService()
      const agent = service.agents.register('a')
      const caller = new AbortController()
      const started = deferred<void>()
      service.use(rejectsOnAbort(code, () => started.resolve()))
      const asking = service.askTimed({ questions: [colour], agent, signal: caller.signal }, 'c', 60_000)
      await started.promise
      caller.abort()
      await expect(asking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
      expect((await service.getCall({ agentId: 'a', callId: 'c' }))?.dropCode).toBe('ASK_ABORTED')
    },
  )

  it.each(['NO_PROVIDER', 'ASK_CANCELLED'] as const)(
    "ask: an answerer rejecting with %s in the same turn as the caller's abort keeps its own code",
    async (code) => {
      const { service } = makeService()
      const agent = service.agents.register('a')
      const caller = new AbortController()
      const started = deferred<void>()
      service.use(rejectsOnAbort(code, () => started.resolve()))
      const asking = service.ask({ questions: [colour], agent, signal: caller.signal, wait: { callId: 'c' } })
      await started.promise
      caller.abort()
      await expect(asking).rejects.toMatchObject({ code })
    },
  )

  it('askTimed: an answerer that aborts the caller and rejects with ASK_CANCELLED gives ASK_ABORTED', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    const caller = new AbortController()
    service.use(async () => {
      caller.abort()
      throw new UserQuestionError('ASK_CANCELLED', 'the person cancelled the question')
    })
    const asking = service.askTimed({ questions: [colour], agent, signal: caller.signal }, 'c', 60_000)
    await expect(asking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
  })

  it('ask: no answerer is called when the caller aborts right after asking', async () => {
    const { service, store } = makeService()
    const agent = service.agents.register('a')
    const seen: AnswererRequest[] = []
    service.use((request) => {
      seen.push(request)
      return new Promise(() => {})
    })
    const caller = new AbortController()
    const asking = service.ask({ questions: [colour], agent, signal: caller.signal, wait: { callId: 'c' } })
    caller.abort()
    await expect(asking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    // The asked record is written before the waterfall would start: once both records are in,
    // the waterfall has had its chance.
    await committed()
    expect((await store.events()).map((e) => e.type)).toEqual(['asked', 'dropped'])
    expect(seen).toEqual([])
  })

  it('askTimed: no answerer is called when the caller aborts right after asking', async () => {
    const { service, store } = makeService()
    const agent = service.agents.register('a')
    const seen: AnswererRequest[] = []
    service.use((request) => {
      seen.push(request)
      return new Promise(() => {})
    })
    const caller = new AbortController()
    const asking = service.askTimed({ questions: [colour], agent, signal: caller.signal }, 'c', 60_000)
    caller.abort()
    await expect(asking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    await committed()
    expect((await store.events()).map((e) => e.type)).toEqual(['asked', 'dropped'])
    expect(seen).toEqual([])
  })

  it('askTimed: no answerer is called when the wait expires before the waterfall starts; the call is pending', async () => {
    vi.useFakeTimers()
    const { service, store } = makeService()
    const agent = service.agents.register('a')
    const seen: AnswererRequest[] = []
    service.use((request) => {
      seen.push(request)
      return new Promise(() => {})
    })
    const asking = service.askTimed({ questions: [colour], agent }, 'c', 5)
    vi.advanceTimersByTime(5) // the deadline passes before the asked record is written
    await expect(asking).resolves.toEqual({ pending: true, callId: 'c' })
    await committed()
    expect((await store.events()).map((e) => e.type)).toEqual(['asked', 'pending'])
    expect(seen).toEqual([])
  })
})

describe('a cancelled or expired ask posts no card; a card already posted says so (#32)', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  /**
   * The chat answerer on a memory platform, behind a route whose responder is looked up by
   * e-mail, so the ask waits in staffing until `lookup` is released. `finished` settles when
   * the chat answerer's own call has.
   */
  async function setup(options: { slowStaffing?: boolean } = {}) {
    const adapter = new MemoryAdapter('slack')
    const lookup = deferred<void>()
    const looking = deferred<void>()
    if (options.slowStaffing) {
      ;(adapter as ChatAdapter).lookupByEmail = async () => {
        looking.resolve()
        await lookup.promise
        return undefined
      }
    }
    const destination = { platform: 'slack' as const, channel: 'C1' }
    const router: Router = {
      resolve: () => ({
        name: 'staffed',
        destinations: [destination],
        quorum: 1,
        excludeRequester: false,
        escalation: [],
        ...(options.slowStaffing ? { responders: { emails: ['ann@example.com'] } } : {}),
      }),
    }
    const { service, chat, close } = await startAnswerer({ adapters: [adapter], router, register: false })
    cleanups.push(close)
    const finished: Array<Promise<unknown>> = []
    service.use((request, next) => {
      const answering: Promise<AskUserQuestionAnswer> = chat.answerer(request, next)
      finished.push(answering.catch(() => undefined))
      return answering
    })
    return { service, chat, adapter, lookup, looking, finished, agent: service.agents.ensure('agent') }
  }

  it('ask: a caller that leaves while the route is being staffed gets ASK_ABORTED and no card is posted', async () => {
    const { service, chat, adapter, lookup, looking, finished, agent } = await setup({ slowStaffing: true })
    const caller = new AbortController()
    const asking = service.ask({
      questions: [colour],
      agent,
      signal: caller.signal,
      wait: { callId: 'gone' },
    })
    await looking.promise
    caller.abort()
    await expect(asking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
    lookup.resolve()
    await Promise.all(finished)
    expect(finished).toHaveLength(1)
    expect(adapter.messagesFor('gone')).toEqual([])
    expect(await chat.host.getCard(refFor('gone', 'agent'))).toBeUndefined()
  })

  it('askTimed: a window that closes while the route is being staffed gives pending and no card is posted', async () => {
    const { service, chat, adapter, lookup, looking, finished, agent } = await setup({ slowStaffing: true })
    const asking = service.askTimed({ questions: [colour], agent }, 'late', 20)
    await looking.promise
    await expect(asking).resolves.toEqual({ pending: true, callId: 'late' })
    lookup.resolve()
    await Promise.all(finished)
    expect(finished).toHaveLength(1)
    expect(adapter.messagesFor('late')).toEqual([])
    expect(await chat.host.getCard(refFor('late', 'agent'))).toBeUndefined()
  })

  it('hook: Claude Code gone just as the waterfall would start gets no decision (a PreToolUse fails closed to ask) and posts no card', async () => {
    const { service, adapter, finished } = await setup()
    const payload: unknown = JSON.parse(
      readFileSync(join(import.meta.dirname, '../fixtures/claude-code/pre-tool-use-bash.json'), 'utf8'),
    )
    const gone = new AbortController()
    // The asked record is written: Claude Code closes the request before any answerer runs.
    service.once('asked', () => gone.abort())
    const output = await answerClaudeCodeHook({ service }, payload, {
      timeoutMs: 60_000,
      signal: gone.signal,
    })
    // Nobody decided: a PreToolUse hands the call back to Claude Code's own prompt, never allows.
    expect(output).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: expect.any(String),
      },
    })
    await Promise.all(finished)
    expect(finished).toEqual([])
    expect(adapter.messages.size).toBe(0)
  })

  it.each(['ask', 'askTimed'] as const)(
    '%s: a card already posted says the question was withdrawn when the caller leaves',
    async (how) => {
      const { service, adapter, agent } = await setup()
      const caller = new AbortController()
      const asking =
        how === 'ask'
          ? service.ask({ questions: [colour], agent, signal: caller.signal, wait: { callId: 'left' } })
          : service.askTimed({ questions: [colour], agent, signal: caller.signal }, 'left', 60_000)
      await until(() => adapter.messagesFor('left')[0], 'card posted')
      caller.abort()
      await expect(asking).rejects.toMatchObject({ code: 'ASK_ABORTED' })
      const [message] = await until(() => {
        const messages = adapter.messagesFor('left')
        return messages[0]?.components.length === 0 ? messages : undefined
      }, 'card finished')
      expect(adapter.messagesFor('left')).toHaveLength(1)
      expect(message?.text).toMatch(/Cancelled: withdrawn/)
    },
  )
})
