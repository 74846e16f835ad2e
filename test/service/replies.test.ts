import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { UserQuestionService } from '../../src/service/service.js'
import { foldAll, projectionOf } from '../../src/store/fold.js'
import { openStore } from '../../src/store/index.js'
import type { StoredEvent } from '../../src/store/types.js'
import { colour, keyFor, makeService, regions, tempDir, until } from '../helpers/service.js'

const red = { answers: [{ id: 'colour', selected: ['Red'] }] }

/** Ask a timed question nobody answers in 1 ms: it ends continued. */
async function continued(service: UserQuestionService, callId: string, questions = [colour], agentId = 'a') {
  const agent = service.agents.get(agentId) ?? service.agents.register(agentId)
  const result = await service.askTimed({ questions, agent }, callId, 1)
  expect(result).toEqual({ pending: true, callId })
}

describe('answer (late replies)', () => {
  it('false for an open or unknown call', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    let release!: () => void
    service.use(() => new Promise((resolve) => (release = () => resolve(red))))
    const open = service.askTimed({ questions: [colour], agent }, 'open-1', 60_000)
    await until(() => release, 'the answerer holds the call')
    expect(await service.answer(agent, 'open-1', red)).toBe(false)
    expect(await service.answer(agent, 'unknown', red)).toBe(false)
    release()
    await open
  })

  it('queues the reply with the documented shape, emits it, and admitting settles the call', async () => {
    const { service } = makeService()
    await continued(service, 'c1')
    const events: unknown[] = []
    service.on('reply', (r) => events.push(r))
    expect(await service.answer('a', 'c1', red)).toBe(true)
    const reply = {
      source: 'user-question-reply',
      outcome: 'answered',
      payload: {
        kind: 'answer_to_pending_question',
        tool: 'ask_user_question',
        callId: 'c1',
        questions: [colour],
        answers: red.answers,
      },
    }
    expect(events).toEqual([{ agentId: 'a', callId: 'c1', reply }])
    expect(await service.replies('a')).toEqual([{ agentId: 'a', callId: 'c1', reply }])
    // Still answerable-but-queued until admitted.
    expect((await service.projection()).active).toEqual([
      { callId: 'c1', questions: [colour], state: 'continued' },
    ])
    expect(await service.admitReply('a', 'c1')).toBe(true)
    expect(await service.projection()).toEqual({
      active: [],
      settled: [{ callId: 'c1', answers: red.answers }],
    })
    expect(await service.replies('a')).toEqual([])
  })

  it.each([
    ['a missing question', { answers: [] }],
    ['a question twice', { answers: [red.answers[0], red.answers[0]] }],
    ['an unknown question', { answers: [...red.answers, { id: 'x', selected: [] }] }],
    ['a label the question does not offer', { answers: [{ id: 'colour', selected: ['Green'] }] }],
    ['two labels on a single-select', { answers: [{ id: 'colour', selected: ['Red', 'Blue'] }] }],
    [
      'a label beside custom on a single-select',
      { answers: [{ id: 'colour', selected: ['Red'], custom: 'x' }] },
    ],
    ['not an answer at all', 'red'],
  ])('BAD_ANSWER for %s', async (_name, answer) => {
    const { service } = makeService()
    await continued(service, 'c1')
    await expect(service.answer('a', 'c1', answer)).rejects.toMatchObject({ code: 'BAD_ANSWER' })
    expect(await service.replies('a')).toEqual([])
  })

  it('a skipped question and multi-select custom beside labels are valid batches', async () => {
    const { service } = makeService()
    await continued(service, 'c1', [colour, regions])
    const batch = {
      answers: [
        { id: 'colour', selected: [] },
        { id: 'regions', selected: ['eu'], custom: 'mars' },
      ],
    }
    expect(await service.answer('a', 'c1', batch)).toBe(true)
  })

  it('REPLY_QUEUED while a reply waits; discarding makes the call answerable again', async () => {
    const { service } = makeService()
    await continued(service, 'c1')
    await service.answer('a', 'c1', red)
    await expect(service.answer('a', 'c1', red)).rejects.toMatchObject({ code: 'REPLY_QUEUED' })
    expect(await service.discardReply('a', 'c1')).toBe(true)
    expect(await service.replies('a')).toEqual([])
    const blue = { answers: [{ id: 'colour', selected: ['Blue'] }] }
    expect(await service.answer('a', 'c1', blue)).toBe(true)
    expect((await service.replies('a'))[0]?.reply.payload.answers).toEqual(blue.answers)
  })

  it('a continued call can be cancelled, but not while an answer waits for the agent', async () => {
    const { service } = makeService()
    await continued(service, 'c1')
    await continued(service, 'c2')
    expect(await service.cancel(await keyFor(service.store, 'c1'))).toBe(true)
    expect(await service.answer('a', 'c1', red)).toBe(false)
    await service.answer('a', 'c2', red)
    await expect(service.cancel(await keyFor(service.store, 'c2'))).rejects.toMatchObject({
      code: 'REPLY_QUEUED',
    })
    expect((await service.replies('a')).map((r) => r.callId)).toEqual(['c2'])
    await service.discardReply('a', 'c2')
    expect(await service.cancel(await keyFor(service.store, 'c2'))).toBe(true)
  })

  it('replies to different continued calls do not block each other', async () => {
    const { service } = makeService()
    await continued(service, 'c1')
    await continued(service, 'c2')
    expect(await service.answer('a', 'c1', red)).toBe(true)
    expect(await service.answer('a', 'c2', red)).toBe(true)
    expect((await service.replies('a')).map((r) => r.callId)).toEqual(['c1', 'c2'])
  })

  it('another agent cannot answer or admit a call it does not own', async () => {
    const { service } = makeService()
    await continued(service, 'c1')
    expect(await service.answer('b', 'c1', red)).toBe(false)
    await service.answer('a', 'c1', red)
    expect(await service.admitReply('b', 'c1')).toBe(false)
    expect(await service.discardReply('b', 'c1')).toBe(false)
  })

  it('two concurrent answers: exactly one is queued', async () => {
    const { service } = makeService()
    await continued(service, 'c1')
    const results = await Promise.allSettled([service.answer('a', 'c1', red), service.answer('a', 'c1', red)])
    expect(results.filter((r) => r.status === 'fulfilled' && r.value === true)).toHaveLength(1)
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1)
  })
})

describe('projection', () => {
  it('active in ask order, settled in settlement order; only timed calls', async () => {
    const { service } = makeService()
    service.use(async (request, next) => (request.callId === 'fast' ? red : next()))
    await continued(service, 'first')
    await continued(service, 'second')
    const agent = service.agents.get('a')!
    expect(await service.askTimed({ questions: [colour], agent }, 'fast', 1000)).toEqual(red)
    await service.ask({ questions: [colour], agent, wait: { callId: 'fast-blocking' } }).catch(() => {})
    await service.answer('a', 'second', red)
    await service.admitReply('a', 'second')
    expect(await service.projection()).toEqual({
      active: [{ callId: 'first', questions: [colour], state: 'continued' }],
      settled: [
        { callId: 'fast', answers: red.answers },
        { callId: 'second', answers: red.answers },
      ],
    })
    expect(await service.projection('someone-else')).toEqual({ active: [], settled: [] })
  })

  it('an open timed call is open; other failures drop it', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    let fail!: (e: Error) => void
    service.use(() => new Promise((_, reject) => (fail = reject)))
    const asking = service.askTimed({ questions: [colour], agent }, 'c', 60_000).catch((e: unknown) => e)
    await until(() => fail, 'the answerer holds the call')
    expect((await service.projection()).active).toEqual([{ callId: 'c', questions: [colour], state: 'open' }])
    fail(new Error('adapter down'))
    expect(await asking).toMatchObject({ code: 'PROVIDER_ERROR' })
    expect(await service.projection()).toEqual({ active: [], settled: [] })
  })

  it('re-asking under a reused callId replaces the row and puts it last as open', async () => {
    const { service } = makeService()
    await continued(service, 'reused')
    await continued(service, 'other')
    const agent = service.agents.get('a')!
    let release!: () => void
    service.use(
      () =>
        new Promise((resolve) => (release = () => resolve({ answers: [{ id: 'regions', selected: [] }] }))),
    )
    const again = service.askTimed({ questions: [regions], agent }, 'reused', 60_000)
    await until(() => release, 'the answerer holds the call')
    expect((await service.projection()).active).toEqual([
      { callId: 'other', questions: [colour], state: 'continued' },
      { callId: 'reused', questions: [regions], state: 'open' },
    ])
    release()
    await again.catch(() => {})
  })

  it('a reply with no readable batch settles with zero answers; a reply for a call no longer answerable changes nothing', async () => {
    const { service } = makeService()
    await continued(service, 'c1')
    expect(await service.admitReply('a', 'c1', { payload: { answers: 'garbled' } })).toBe(true)
    expect((await service.projection()).settled).toEqual([{ callId: 'c1', answers: [] }])
    // Settled now: a second reply changes nothing.
    expect(await service.admitReply('a', 'c1', { payload: { answers: red.answers } })).toBe(false)
    expect((await service.projection()).settled).toEqual([{ callId: 'c1', answers: [] }])
  })

  it('the fold ignores a reply for a call that is not continued', () => {
    const at = 1
    const events: StoredEvent[] = [
      { seq: 1, at, type: 'asked', callId: 'x', agentId: 'a', questions: [colour], timed: true },
      { seq: 2, at, type: 'reply_admitted', callId: 'x', agentId: 'a', answers: red.answers },
      { seq: 3, at, type: 'reply_admitted', callId: 'nope', agentId: 'a', answers: red.answers },
    ]
    const calls = foldAll(events)
    expect(projectionOf(calls.values())).toEqual({
      active: [{ callId: 'x', questions: [colour], state: 'open' }],
      settled: [],
    })
  })
})

describe('restart on a real SQLite file', () => {
  const dirs: Array<() => void> = []
  afterEach(() => {
    for (const cleanup of dirs.splice(0)) cleanup()
  })

  it('restores the projection, keeps REPLY_QUEUED, and discard then re-answer works', async () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const file = join(dir, 'askbridge.db')
    const first = new UserQuestionService({ store: openStore(`sqlite:${file}`) })
    await continued(first, 'queued')
    await continued(first, 'waiting')
    await first.answer('a', 'queued', red)
    const before = await first.projection()
    await first.close()
    await first.store.close()

    const second = new UserQuestionService({ store: openStore(file) })
    expect(await second.projection()).toEqual(before)
    expect((await second.replies('a')).map((r) => r.callId)).toEqual(['queued'])
    await expect(second.answer('a', 'queued', red)).rejects.toMatchObject({ code: 'REPLY_QUEUED' })
    expect(await second.discardReply('a', 'queued')).toBe(true)
    const blue = { answers: [{ id: 'colour', selected: ['Blue'] }] }
    expect(await second.answer('a', 'queued', blue)).toBe(true)
    expect(await second.answer('a', 'waiting', red)).toBe(true)
    expect(await second.admitReply('a', 'queued')).toBe(true)
    expect(await second.projection()).toEqual({
      active: [{ callId: 'waiting', questions: [colour], state: 'continued' }],
      settled: [{ callId: 'queued', answers: blue.answers }],
    })
    await second.store.close()
  })

  it('recover(): a timed call left open by a dead process becomes continued', async () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const file = join(dir, 'askbridge.db')
    const store = openStore(file)
    // What a crashed process leaves behind: an open timed call.
    await store.append({
      type: 'asked',
      callId: 'orphan',
      agentId: 'a',
      questions: [colour],
      timed: true,
      deadline: 1,
    })
    await store.close()
    const service = new UserQuestionService({ store: openStore(file) })
    expect((await service.projection()).active[0]?.state).toBe('open')
    expect(await service.recover()).toEqual([{ agentId: 'a', callId: 'orphan' }])
    expect((await service.projection()).active).toEqual([
      { callId: 'orphan', questions: [colour], state: 'continued' },
    ])
    expect(await service.answer('a', 'orphan', red)).toBe(true)
    await service.store.close()
  })

  it('two stores on one file see each other (the interface is ready for several processes)', async () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const file = join(dir, 'shared.db')
    const one = new UserQuestionService({ store: openStore(file) })
    const two = new UserQuestionService({ store: openStore(file) })
    await continued(one, 'c1')
    expect(await two.answer('a', 'c1', red)).toBe(true)
    await expect(one.answer('a', 'c1', red)).rejects.toMatchObject({ code: 'REPLY_QUEUED' })
    await one.store.close()
    await two.store.close()
  })
})
