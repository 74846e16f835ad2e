import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, expect, test } from 'vitest'
import { PostgresStore } from '../../src/store/postgres.js'
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../../src/store/sqlite.js'
import type { Store, StoreEvent } from '../../src/store/types.js'
import { testSchema } from '../helpers/pg.js'
import { tempDir } from '../helpers/service.js'

// Databases written before retention had no `ended_at`: the upgrade backfills it from each
// call's record (settled) or its last event (dropped), so old history is pruned like new.
const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const { dir, cleanup } = tempDir()
afterAll(cleanup)

async function writeHistory(store: Store, clock: { t: number }): Promise<void> {
  const ask = (callId: string): StoreEvent => ({
    type: 'asked',
    agentId: 'a',
    callId,
    questions: [colour],
    timed: true,
    deadline: 1,
  })
  clock.t = 1000
  await store.append(ask('settled'), ask('dropped'), ask('open'))
  clock.t = 2000
  await store.append(
    { type: 'answered', agentId: 'a', callId: 'settled', answers: [] },
    { type: 'dropped', agentId: 'a', callId: 'dropped', code: 'ASK_CANCELLED' },
  )
}

async function expectBackfilled(store: Store): Promise<void> {
  expect(await store.pruneCalls(1500, 10)).toBe(0)
  expect(await store.pruneCalls(2001, 10)).toBe(2)
  expect((await store.listCalls()).map((c) => c.callId)).toEqual(['open'])
}

test('SQLite: a schema 3 database gains ended_at, backfilled, and its old calls are pruned', async () => {
  const path = join(dir, 'v2.db')
  const clock = { t: 0 }
  const store = new SqliteStore(path, { now: () => clock.t })
  await writeHistory(store, clock)
  await store.close()
  // Back to schema 3: no ended_at, no retention indexes, no endedAt in the records.
  const db = new Database(path)
  db.exec(`DROP INDEX calls_ended; DROP INDEX audit_at; ALTER TABLE calls DROP COLUMN ended_at;
    UPDATE calls SET data = json_remove(data, '$.endedAt'); PRAGMA user_version = 3;`)
  db.close()
  const upgraded = new SqliteStore(path)
  try {
    await expectBackfilled(upgraded)
  } finally {
    await upgraded.close()
  }
  const raw = new Database(path, { readonly: true })
  expect(raw.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION)
  raw.close()
})

test('PostgreSQL: migration 4 backfills ended_at on a database written before it', async () => {
  const schema = await testSchema()
  const clock = { t: 0 }
  try {
    const store = await PostgresStore.open(schema.url, { max: 2, now: () => clock.t })
    await writeHistory(store, clock)
    await store.close()
    await schema.query(`DROP INDEX askbridge_calls_ended; ALTER TABLE askbridge_calls DROP COLUMN ended_at;
      DELETE FROM askbridge_migrations WHERE version = 4`)
    const upgraded = await PostgresStore.open(schema.url, { max: 2 })
    try {
      await expectBackfilled(upgraded)
    } finally {
      await upgraded.close()
    }
  } finally {
    await schema.drop()
  }
})
