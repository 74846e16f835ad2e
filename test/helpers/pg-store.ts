import pg from 'pg'
import { vi } from 'vitest'
import { PostgresStore, type PostgresStoreOptions } from '../../src/store/postgres.js'
import type { CallKey, StoreEvent } from '../../src/store/types.js'
import { type TestSchema, testSchema } from './pg.js'

/**
 * PostgreSQL stores on one fresh schema, each as another process would open it; `end()` closes
 * them all and drops the schema. `query` runs SQL in the schema, outside any store.
 */
export function storesOnOneSchema(): {
  open: (options?: PostgresStoreOptions) => Promise<PostgresStore>
  query: TestSchema['query']
  end: () => Promise<void>
} {
  let schema: TestSchema | undefined
  const stores: PostgresStore[] = []
  return {
    async open(options: PostgresStoreOptions = {}) {
      schema ??= await testSchema()
      const store = await PostgresStore.open(schema.url, { max: 4, ...options })
      stores.push(store)
      return store
    },
    async query(sql, params) {
      if (!schema) throw new Error('storesOnOneSchema: query before any store was opened')
      return schema.query(sql, params)
    },
    async end() {
      await Promise.all(stores.splice(0).map((s) => s.close()))
      await schema?.drop()
      schema = undefined
    },
  }
}

/** A timed one-question call for `key` and the answer that completes it. */
export function askAndAnswer(key: CallKey): {
  asked: Extract<StoreEvent, { type: 'asked' }>
  answered: Extract<StoreEvent, { type: 'answered' }>
} {
  return {
    asked: {
      type: 'asked',
      ...key,
      questions: [
        { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] },
      ],
      timed: true,
      deadline: 1_000_000,
    },
    answered: { type: 'answered', ...key, answers: [{ id: 'colour', selected: ['Red'] }] },
  }
}

/** Every statement string sent on any connection from now on, until `vi.restoreAllMocks()`. */
export function watchWire(): string[] {
  const sent: string[] = []
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const text = args[0]
    sent.push(typeof text === 'string' ? text : String((text as { text?: string }).text))
    return query.apply(this, args) as never
  } as never)
  return sent
}
