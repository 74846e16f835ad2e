import { describe, expect, it } from 'vitest'
import { UserQuestionError } from '../../src/protocol/errors.js'
import type { AskUserQuestionItem, AskUserQuestionRequest } from '../../src/protocol/types.js'
import { colour, keyFor, makeService, regions, until } from '../helpers/service.js'

const approval: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy 4f2c1?',
  detail: 'Changes: fix login',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
  intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(UserQuestionError)
    return (error as UserQuestionError).code
  }
  throw new Error('expected a rejection')
}

describe('ask: validation order', () => {
  it('an already aborted signal wins over every other problem', async () => {
    const { service } = makeService()
    const controller = new AbortController()
    controller.abort()
    expect(await codeOf(service.ask({ questions: [], signal: controller.signal }))).toBe('ASK_ABORTED')
  })

  it('an empty batch is EMPTY_QUESTIONS before malformed checks', async () => {
    const { service } = makeService()
    expect(await codeOf(service.ask({ questions: [] }))).toBe('EMPTY_QUESTIONS')
  })

  it.each([
    ['duplicate question ids', [colour, colour]],
    ['empty option label', [{ id: 'a', question: 'Q?', options: [{ label: '' }] }]],
    ['duplicate option labels', [{ id: 'a', question: 'Q?', options: [{ label: 'x' }, { label: 'x' }] }]],
    ['wrong types', [{ id: 'a', question: 42 }]],
    ['not an array', 'which?'],
    ['an empty question text', [{ id: 'a', question: '   ' }]],
  ])('a malformed batch (%s) is BAD_QUESTION', async (_name, questions) => {
    const { service } = makeService()
    const request = { questions } as unknown as AskUserQuestionRequest
    expect(await codeOf(service.ask(request))).toBe('BAD_QUESTION')
  })

  it('BAD_QUESTION comes before CALLER_NOT_LIVE', async () => {
    const { service } = makeService()
    const stale = { id: 'ghost' }
    expect(await codeOf(service.ask({ questions: [colour, colour], agent: stale }))).toBe('BAD_QUESTION')
  })

  it('an agent that is not the live instance is CALLER_NOT_LIVE, also a stale object reusing a live id', async () => {
    const { service } = makeService()
    service.use(async () => ({ answers: [{ id: 'colour', selected: ['Red'] }] }))
    expect(await codeOf(service.ask({ questions: [colour], agent: { id: 'nobody' } }))).toBe(
      'CALLER_NOT_LIVE',
    )
    const old = service.agents.register('a1')
    service.agents.register('a1') // a new live instance replaces the old one
    expect(await codeOf(service.ask({ questions: [colour], agent: old }))).toBe('CALLER_NOT_LIVE')
    expect(await codeOf(service.ask({ questions: [colour], agent: { id: 'a1' } }))).toBe('CALLER_NOT_LIVE')
  })

  it('a delegated agent is DELEGATED_CALLER; a resumed root may ask', async () => {
    const { service } = makeService()
    service.use(async () => ({ answers: [{ id: 'colour', selected: ['Red'] }] }))
    const sub = service.agents.register('sub', { delegated: true })
    expect(await codeOf(service.ask({ questions: [colour], agent: sub }))).toBe('DELEGATED_CALLER')
    // A root resumed from an older session is registered afresh and may ask.
    const resumed = service.agents.register('root-from-yesterday')
    await expect(service.ask({ questions: [colour], agent: resumed })).resolves.toEqual({
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
  })

  it('DELEGATED_CALLER comes before BAD_INTENT', async () => {
    const { service } = makeService()
    const sub = service.agents.register('sub', { delegated: true })
    const badIntent = { ...colour, intent: { kind: 'plan-review' as const, approve: 'Red' } }
    expect(await codeOf(service.ask({ questions: [badIntent], agent: sub }))).toBe('DELEGATED_CALLER')
  })

  it.each<[string, AskUserQuestionItem[]]>([
    ['an intent without detail', [{ ...colour, intent: { kind: 'plan-review', approve: 'Red' } }]],
    [
      'plan-review approve not an option',
      [{ ...colour, detail: 'plan', intent: { kind: 'plan-review', approve: 'Green' } }],
    ],
    ['approval with two questions', [approval, colour]],
    ['approval multi-select', [{ ...approval, multiSelect: true }]],
    [
      'approval labels not distinct',
      [{ ...approval, intent: { kind: 'approval', approve: 'Approve', reject: 'Approve' } }],
    ],
    [
      'approval labels not exactly the options',
      [{ ...approval, options: [{ label: 'Approve' }, { label: 'Reject' }, { label: 'Maybe' }] }],
    ],
  ])('%s is BAD_INTENT', async (_name, questions) => {
    const { service } = makeService()
    expect(await codeOf(service.ask({ questions }))).toBe('BAD_INTENT')
  })

  it('an approval with a timed wait is BAD_INTENT', async () => {
    const { service } = makeService()
    const agent = service.agents.register('a')
    expect(await codeOf(service.askTimed({ questions: [approval], agent }, 'c1', 1000))).toBe('BAD_INTENT')
  })

  it('nobody claiming is NO_PROVIDER', async () => {
    const { service } = makeService()
    service.use((_request, next) => next())
    expect(await codeOf(service.ask({ questions: [colour] }))).toBe('NO_PROVIDER')
  })

  it('a rejected request writes nothing to the store and reaches no answerer', async () => {
    const { service, store } = makeService()
    let seen = 0
    service.use(async (_r, next) => {
      seen++
      return next()
    })
    await codeOf(service.ask({ questions: [colour, colour] }))
    await codeOf(service.ask({ questions: [] }))
    await codeOf(service.ask({ questions: [{ ...colour, intent: { kind: 'plan-review', approve: 'Red' } }] }))
    expect(seen).toBe(0)
    expect(await store.events()).toEqual([])
  })
})

describe('ask: the waterfall', () => {
  it('answerers delegate with next(); the first to answer claims the request', async () => {
    const { service } = makeService()
    const order: string[] = []
    service.use(async (_r, next) => {
      order.push('first')
      return next()
    })
    service.use(async () => {
      order.push('second')
      return { answers: [{ id: 'colour', selected: ['Blue'] }] }
    })
    service.use(async () => {
      order.push('third')
      return { answers: [{ id: 'colour', selected: ['Red'] }] }
    })
    await expect(service.ask({ questions: [colour] })).resolves.toEqual({
      answers: [{ id: 'colour', selected: ['Blue'] }],
    })
    expect(order).toEqual(['first', 'second'])
  })

  it('agent-scoped answerers see only their agent; unregistering removes an answerer', async () => {
    const { service } = makeService()
    const a = service.agents.register('a')
    const b = service.agents.register('b')
    const off = service.use(async () => ({ answers: [{ id: 'colour', selected: ['Red'] }] }), {
      agentId: 'a',
    })
    service.use(async () => ({ answers: [{ id: 'colour', selected: ['Blue'] }] }))
    expect((await service.ask({ questions: [colour], agent: a })).answers[0]?.selected).toEqual(['Red'])
    expect((await service.ask({ questions: [colour], agent: b })).answers[0]?.selected).toEqual(['Blue'])
    off()
    expect((await service.ask({ questions: [colour], agent: a })).answers[0]?.selected).toEqual(['Blue'])
  })

  it('a protocol error from an answerer keeps its code, also one restored from {name, code, message}', async () => {
    const { service } = makeService()
    service.use(async () => {
      throw new UserQuestionError('ASK_CANCELLED', 'a person cancelled')
    })
    expect(await codeOf(service.ask({ questions: [colour] }))).toBe('ASK_CANCELLED')

    const { service: s2 } = makeService()
    const wire = JSON.parse(JSON.stringify(new UserQuestionError('REPLY_QUEUED', 'over the wire')))
    s2.use(async () => {
      throw wire
    })
    const error = await s2.ask({ questions: [colour] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UserQuestionError)
    expect(error).toMatchObject({ code: 'REPLY_QUEUED', message: 'over the wire', cause: wire })
  })

  it('any other failure is PROVIDER_ERROR keeping the message, with the original as cause', async () => {
    const { service } = makeService()
    const boom = new TypeError('socket hang up')
    service.use(async () => {
      throw boom
    })
    const error = await service.ask({ questions: [colour] }).catch((e: unknown) => e)
    expect(error).toMatchObject({
      name: 'UserQuestionError',
      code: 'PROVIDER_ERROR',
      message: 'socket hang up',
    })
    expect((error as Error).cause).toBe(boom)
  })

  it('when the signal has aborted, a failure becomes ASK_ABORTED with the failure as cause', async () => {
    const { service } = makeService()
    const controller = new AbortController()
    const boom = new Error('connection reset')
    let listening = false
    service.use(
      (request) =>
        new Promise((_, reject) => {
          request.signal.addEventListener('abort', () => reject(boom))
          listening = true
        }),
    )
    const asking = service.ask({ questions: [colour], signal: controller.signal }).catch((e: unknown) => e)
    await until(() => listening, 'the answerer is waiting')
    controller.abort()
    const error = await asking
    expect(error).toMatchObject({ code: 'ASK_ABORTED' })
  })

  it('an answer that does not fit the questions is BAD_ANSWER', async () => {
    const { service } = makeService()
    service.use(async () => ({ answers: [{ id: 'colour', selected: ['Green'] }] }))
    expect(await codeOf(service.ask({ questions: [colour] }))).toBe('BAD_ANSWER')
  })

  it('a plain function is an answerer; multi-select answers pass through', async () => {
    const { service } = makeService()
    const plain = async () => ({ answers: [{ id: 'regions', selected: ['eu', 'us'], custom: 'and mars' }] })
    service.use(plain)
    await expect(service.ask({ questions: [regions] })).resolves.toEqual({
      answers: [{ id: 'regions', selected: ['eu', 'us'], custom: 'and mars' }],
    })
  })

  it('blocking asks are recorded (GET /v1/questions/:callId) but stay out of the projection', async () => {
    const { service } = makeService()
    service.use(async () => ({ answers: [{ id: 'colour', selected: ['Red'] }] }))
    await service.ask({ questions: [colour], wait: { callId: 'blocking-1' } })
    expect(await service.getCall(await keyFor(service.store, 'blocking-1'))).toMatchObject({
      state: 'settled',
      timed: false,
    })
    expect(await service.projection()).toEqual({ active: [], settled: [] })
  })
})
