import { ChatAnswerer, type ChatAnswererOptions } from '../../src/answerer/chat.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import type { Store } from '../../src/store/types.js'

export interface StartAnswererOptions extends Omit<ChatAnswererOptions, 'service'> {
  /** @default a fresh in-memory SQLite store */
  store?: Store
  /** Register the chat answerer in the service's waterfall. @default true */
  register?: boolean
}

/**
 * The real service and chat answerer on a real store, started, with escalation timers off (tests
 * call `tick()`). `close()` ends waits, stops adapters and closes the store, in that order.
 */
export async function startAnswerer(options: StartAnswererOptions) {
  const { store = openStore('memory'), register = true, ...rest } = options
  const service = new UserQuestionService({ store, ...(rest.now ? { now: rest.now } : {}) })
  const chat = new ChatAnswerer({ escalationIntervalMs: 0, ...rest, service })
  const unregister = register ? service.use(chat.answerer) : () => {}
  await chat.start()
  const close = async () => {
    await service.close()
    await chat.stop()
    await store.close()
  }
  return { store, service, chat, unregister, close }
}
