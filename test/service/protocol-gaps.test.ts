import { describe, expect, it } from 'vitest'
import type { Logger } from '../../src/log.js'
import { UserQuestionError } from '../../src/protocol/errors.js'
import { projectionViewSchema } from '../../src/protocol/schemas.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import { colour, deferred, makeService } from '../helpers/service.js'

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
