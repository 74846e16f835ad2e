import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { pruneOnce } from '../../src/service/retention.js'
import { SqliteStore } from '../../src/store/sqlite.js'
import type { CallKey, Store } from '../../src/store/types.js'
import { colour, tempDir } from '../helpers/service.js'
import { request, startBridge, until } from '../server/helpers.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)
const DAY = 86_400_000

async function seed(store: Store, keys: CallKey[], end: 'answered' | 'pending'): Promise<void> {
  for (const k of keys) {
    await store.append({ type: 'asked', ...k, questions: [colour], timed: true, deadline: 1 })
    await store.append(
      end === 'answered' ? { type: 'answered', ...k, answers: [] } : { type: 'pending', ...k },
    )
    await store.audit({ ...k, kind: 'asked' })
  }
}

test('pruneOnce drains everything past the retention in batches; 0 keeps', async () => {
  let t = 1000
  const store = new SqliteStore(join(dir, 'once.db'), { now: () => t })
  try {
    await seed(
      store,
      Array.from({ length: 5 }, (_, i) => ({ agentId: 'a', callId: `old${i}` })),
      'answered',
    )
    t = 10 * DAY
    await seed(store, [{ agentId: 'a', callId: 'new' }], 'answered')
    const now = () => 10 * DAY + 1
    expect(await pruneOnce(store, { callsMs: 0, auditMs: 0, now })).toEqual({ calls: 0, audit: 0 })
    expect(await pruneOnce(store, { callsMs: DAY, auditMs: 0, batch: 2, now })).toEqual({
      calls: 5,
      audit: 0,
    })
    expect((await store.listCalls()).map((c) => c.callId)).toEqual(['new'])
    expect(await pruneOnce(store, { callsMs: DAY, auditMs: DAY, batch: 2, now })).toEqual({
      calls: 0,
      audit: 5,
    })
    expect((await store.listAudit()).map((e) => e.callId)).toEqual(['new'])
  } finally {
    await store.close()
  }
})

test('serve prunes history older than ASKBRIDGE_RETENTION and keeps continued questions', async () => {
  const home = join(dir, 'bridge')
  const { mkdirSync } = await import('node:fs')
  mkdirSync(home)
  // Written 40 days ago: a settled question and a continued one.
  const past = Date.now() - 40 * DAY
  const store = new SqliteStore(join(home, 'bridge.db'), { now: () => past })
  await seed(store, [{ agentId: 'alice', callId: 'old-settled' }], 'answered')
  await seed(store, [{ agentId: 'alice', callId: 'old-continued' }], 'pending')
  await store.close()
  const b = await startBridge({ ASKBRIDGE_RETENTION: '30d' }, home)
  try {
    await until(
      async () => (await b.bridge.store.getCall({ agentId: 'alice', callId: 'old-settled' })) === undefined,
      'the old settled question pruned',
    )
    const view = await request(b.url, 'GET', '/v1/questions?agentId=alice')
    expect(view.body.settled).toEqual([])
    expect(view.body.active?.map((c) => [c.callId, c.state])).toEqual([['old-continued', 'continued']])
    // The audit is kept by default.
    const audit = await b.bridge.store.listAudit({ agentId: 'alice', callId: 'old-settled' })
    expect(audit.map((e) => e.kind)).toEqual(['asked'])
  } finally {
    await b.close()
  }
})
