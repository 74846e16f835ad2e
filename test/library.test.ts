import { describe, expect, it } from 'vitest'
import {
  type Answerer,
  type AnswererRequest,
  type AskUserQuestionAnswer,
  ChatAnswerer,
  openStore,
  UserQuestionService,
} from '../src/index.js'
import { MemoryAdapter } from './fakes/memory-adapter.js'
import { colour, until } from './helpers/service.js'

/** What a harness does with the public entry point: a store, the service, the chat answerer. */
async function embed() {
  const store = openStore('memory')
  const service = new UserQuestionService({ store })
  const adapter = new MemoryAdapter('slack')
  const chat = new ChatAnswerer({
    service,
    adapters: [adapter],
    destinations: [{ platform: 'slack', channel: 'C1' }],
    escalationIntervalMs: 0,
  })
  await chat.start()
  return { store, adapter, chat }
}

describe('the library entry point (scenario 3: a harness embeds the answerer)', () => {
  it("registers askbridge's answerer as a plain function in the harness's own waterfall", async () => {
    const { store, adapter, chat } = await embed()

    // The harness's own chain: a terminal UI that delegates, then askbridge.
    const terminalUi: Answerer = async (_request, next) => next()
    const chain: Answerer[] = [terminalUi, chat.answerer]
    const run = (request: AnswererRequest, i = 0): Promise<AskUserQuestionAnswer> => {
      const answerer = chain[i]
      if (!answerer) return Promise.reject(new Error('nobody answered'))
      return answerer(request, () => run(request, i + 1))
    }
    const asking = run({ questions: [colour], callId: 'harness-1', signal: new AbortController().signal })
    await until(() => adapter.messagesFor('harness-1').length === 1, 'card posted')
    const message = adapter.messagesFor('harness-1')[0]
    await adapter.use(message?.id ?? '', (ref) => ref.verb === 'choose' && ref.o === 1, {
      platform: 'slack',
      userId: 'U1',
      name: 'Ann',
    })
    expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
    await chat.stop()
    await store.close()
  })

  it('a host whose own UI answered first tells the cards, which then say so', async () => {
    const { store, adapter, chat } = await embed()
    const controller = new AbortController()
    // The harness races askbridge against its terminal UI.
    const remote = chat.answerer({ questions: [colour], callId: 'race-1', signal: controller.signal }, () =>
      Promise.reject(new Error('unused')),
    )
    remote.catch(() => {})
    await until(() => adapter.messagesFor('race-1').length === 1, 'card posted')
    // The terminal UI answered: the harness tells askbridge, then stops waiting for it.
    expect(await chat.answeredElsewhere('race-1')).toBe(true)
    controller.abort()
    await until(
      () => /answered elsewhere/i.test(adapter.messagesFor('race-1')[0]?.text ?? ''),
      'elsewhere shown',
    )
    expect(adapter.messagesFor('race-1')[0]?.components).toEqual([])
    expect(await chat.answeredElsewhere('race-1')).toBe(false)
    await chat.stop()
    await store.close()
  })
})
