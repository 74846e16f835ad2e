import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SqliteStore } from '../../src/store/sqlite.js'
import type { StoreEvent } from '../../src/store/types.js'
import { colour, tempDir } from '../helpers/service.js'

const { dir, cleanup } = tempDir()
afterAll(cleanup)
let n = 0
const file = () => join(dir, `store-${++n}.db`)
const asked = (agentId: string, callId: string): StoreEvent => ({
  type: 'asked',
  agentId,
  callId,
  questions: [colour],
  timed: true,
})

describe('SqliteStore keyed by agent and call', () => {
  it('two agents with the same callId have two calls, cards, posts and audit trails', async () => {
    const store = new SqliteStore(file())
    await store.append(asked('alice', 'toolu_1'), { type: 'pending', agentId: 'alice', callId: 'toolu_1' })
    await store.append(asked('bob', 'toolu_1'))
    expect((await store.getCall({ agentId: 'alice', callId: 'toolu_1' }))?.state).toBe('continued')
    expect((await store.getCall({ agentId: 'bob', callId: 'toolu_1' }))?.state).toBe('open')
    expect((await store.findCalls('toolu_1')).map((c) => c.agentId)).toEqual(['alice', 'bob'])
    expect((await store.projection('alice')).active).toEqual([
      { callId: 'toolu_1', questions: [colour], state: 'continued' },
    ])
    expect(await store.casCard({ agentId: 'alice', callId: 'toolu_1' }, 0, { status: 'open' })).toBe(1)
    expect(await store.casCard({ agentId: 'bob', callId: 'toolu_1' }, 0, { status: 'open' })).toBe(1)
    expect((await store.findCards('toolu_1')).map((c) => c.agentId)).toEqual(['alice', 'bob'])
    const post = { callId: 'toolu_1', destKey: 'web::', platform: 'web', ref: null, createdAt: 1 }
    expect(await store.addPost({ ...post, agentId: 'alice' })).toBe(true)
    expect(await store.addPost({ ...post, agentId: 'bob' })).toBe(true)
    expect(await store.addPost({ ...post, agentId: 'bob' })).toBe(false)
    await store.audit({ agentId: 'bob', callId: 'toolu_1', kind: 'asked' })
    expect(await store.listAudit({ agentId: 'alice', callId: 'toolu_1' })).toEqual([])
    expect(await store.listAudit({ callId: 'toolu_1' })).toHaveLength(1)
    await store.close()
  })

  it('transact decides on one call and cannot append for another', async () => {
    const store = new SqliteStore(file())
    await store.append(asked('alice', 'c'))
    const seen = await store.transact({ agentId: 'alice', callId: 'c' }, (call) => ({
      events: [],
      result: call?.state,
    }))
    expect(seen).toBe('open')
    expect(
      await store.transact({ agentId: 'bob', callId: 'c' }, (call) => ({ events: [], result: call })),
    ).toBe(undefined)
    await expect(
      store.transact({ agentId: 'alice', callId: 'c' }, () => ({
        events: [{ type: 'pending', agentId: 'bob', callId: 'c' }],
        result: undefined,
      })),
    ).rejects.toThrow(/another call/)
    // The refused decision appended nothing.
    expect(await store.events({ callId: 'c' })).toHaveLength(1)
    await store.close()
  })

  it('live calls are listed by agent and state from the calls table, and another process sees each write at once', async () => {
    const path = file()
    const one = new SqliteStore(path)
    const two = new SqliteStore(path)
    await one.append(asked('a', 'x'), asked('a', 'y'), asked('b', 'z'))
    await two.transact({ agentId: 'a', callId: 'x' }, () => ({
      events: [{ type: 'dropped', agentId: 'a', callId: 'x', code: 'ASK_CANCELLED' }],
      result: undefined,
    }))
    const live = await one.listCalls({ agentId: 'a', states: ['open', 'continued'] })
    expect(live.map((c) => c.callId)).toEqual(['y'])
    expect((await one.listCalls({ states: ['open'], timed: true })).map((c) => c.callId)).toEqual(['y', 'z'])
    expect(await one.listCards({ statuses: [] })).toEqual([])
    await one.close()
    await two.close()
  })
})
