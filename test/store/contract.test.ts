import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem, LateReply } from '../../src/protocol/types.js'
import { PostgresStore } from '../../src/store/postgres.js'
import { SqliteStore } from '../../src/store/sqlite.js'
import type { CallKey, CallRecord, Store, StoredEvent, StoreEvent } from '../../src/store/types.js'
import { testSchema } from '../helpers/pg.js'
import { tempDir } from '../helpers/service.js'

/**
 * One contract, two stores: every test here runs against SQLite (a real file) and PostgreSQL
 * (the real server, a schema of its own). Neither store passes by a rule the other lacks.
 * `open()` gives another handle on the same database: a second process, or the same one after
 * a restart.
 */
interface Harness {
  open(options?: { now?: () => number }): Promise<Store>
  cleanup(): Promise<void>
}

const kinds: Array<{ name: string; make: () => Promise<Harness> }> = [
  {
    name: 'sqlite',
    async make() {
      const { dir, cleanup } = tempDir()
      const path = `${dir}/askbridge.db`
      return {
        async open(options = {}) {
          return new SqliteStore(path, options)
        },
        async cleanup() {
          cleanup()
        },
      }
    },
  },
  {
    name: 'postgres',
    async make() {
      const schema = await testSchema()
      return {
        async open(options = {}) {
          return PostgresStore.open(schema.url, { max: 4, ...options })
        },
        cleanup: () => schema.drop(),
      }
    },
  },
]

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}

const asked = (
  key: CallKey,
  timed = true,
  extra: Partial<Extract<StoreEvent, { type: 'asked' }>> = {},
): StoreEvent => ({
  type: 'asked',
  ...key,
  questions: [colour],
  timed,
  ...(timed ? { deadline: 1_000_000 } : {}),
  ...extra,
})

const replyOf = (callId: string): LateReply => ({
  source: 'user-question-reply',
  outcome: 'answered',
  payload: {
    kind: 'answer_to_pending_question',
    tool: 'ask_user_question',
    callId,
    questions: [colour],
    answers: [{ id: 'colour', selected: ['Red'] }],
  },
})

describe.each(kinds)('store contract: $name', ({ make }) => {
  let harness: Harness
  const opened: Store[] = []
  const open = async (options?: { now?: () => number }) => {
    harness ??= await make()
    const store = await harness.open(options)
    opened.push(store)
    return store
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()))
    await harness?.cleanup()
    harness = undefined as unknown as Harness
  })

  const a1 = { agentId: 'alice', callId: 'call-1' }

  it('appends events in order with their time, and filters the log', async () => {
    let t = 1000
    const store = await open({ now: () => t++ })
    const b1 = { agentId: 'bob', callId: 'call-1' }
    await store.append(asked(a1), asked(b1))
    await store.append({ type: 'pending', ...a1 })
    const all = await store.events()
    expect(all.map((e) => [e.type, e.agentId, e.callId])).toEqual([
      ['asked', 'alice', 'call-1'],
      ['asked', 'bob', 'call-1'],
      ['pending', 'alice', 'call-1'],
    ])
    expect(all.map((e) => e.at)).toEqual([1000, 1001, 1002])
    expect(all[0]?.seq).toBeLessThan(all[1]?.seq ?? 0)
    expect((await store.events({ agentId: 'alice' })).map((e) => e.type)).toEqual(['asked', 'pending'])
    expect((await store.events({ callId: 'call-1' })).length).toBe(3)
    expect((await store.events({ agentId: 'bob', callId: 'call-1' })).map((e) => e.type)).toEqual(['asked'])
    expect((await store.events({ sinceSeq: all[1]?.seq ?? 0 })).map((e) => e.type)).toEqual(['pending'])
    expect(await store.append()).toBeUndefined()
  })

  it('folds every event type into the call row', async () => {
    const store = await open()
    await store.append(asked(a1, true, { route: 'oncall' }))
    let call = await store.getCall(a1)
    expect(call).toMatchObject({ ...a1, state: 'open', timed: true, deadline: 1_000_000, route: 'oncall' })
    await store.append({ type: 'pending', ...a1 })
    expect((await store.getCall(a1))?.state).toBe('continued')
    await store.append({ type: 'reply_queued', ...a1, reply: replyOf('call-1') })
    expect((await store.getCall(a1))?.queuedReply).toEqual(replyOf('call-1'))
    await store.append({ type: 'reply_discarded', ...a1 })
    expect((await store.getCall(a1))?.queuedReply).toBeUndefined()
    await store.append({ type: 'reply_queued', ...a1, reply: replyOf('call-1') })
    await store.append({
      type: 'reply_admitted',
      ...a1,
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
    call = await store.getCall(a1)
    expect(call).toMatchObject({ state: 'settled', answers: [{ id: 'colour', selected: ['Red'] }] })
    expect(call?.queuedReply).toBeUndefined()
    expect(call?.settledSeq).toBeGreaterThan(call?.askedSeq ?? Infinity)

    const blocking = { agentId: 'alice', callId: 'blocking' }
    await store.append(asked(blocking, false), { type: 'pending', ...blocking })
    expect((await store.getCall(blocking))?.state).toBe('open') // only timed calls continue
    await store.append(
      { type: 'answered', ...blocking, answers: [] },
      { type: 'dropped', ...blocking, code: 'X' },
    )
    expect((await store.getCall(blocking))?.state).toBe('settled') // the first outcome stays

    const dropped = { agentId: 'alice', callId: 'dropped' }
    await store.append(asked(dropped), { type: 'dropped', ...dropped, code: 'ASK_CANCELLED' })
    expect(await store.getCall(dropped)).toMatchObject({ state: 'dropped', dropCode: 'ASK_CANCELLED' })

    // Events for a call never asked change nothing.
    await store.append({ type: 'answered', agentId: 'alice', callId: 'ghost', answers: [] })
    expect(await store.getCall({ agentId: 'alice', callId: 'ghost' })).toBeUndefined()
  })

  it("keeps two agents' calls with the same callId apart, and a reused key starts over", async () => {
    const store = await open()
    const b1 = { agentId: 'bob', callId: 'call-1' }
    await store.append(asked(a1), { type: 'pending', ...a1 }, asked(b1))
    expect((await store.getCall(a1))?.state).toBe('continued')
    expect((await store.getCall(b1))?.state).toBe('open')
    expect((await store.findCalls('call-1')).map((c) => c.agentId)).toEqual(['alice', 'bob'])
    expect(await store.findCalls('nope')).toEqual([])
    await store.append(asked(a1))
    expect((await store.getCall(a1))?.state).toBe('open')
    // Asked again, alice's call now comes after bob's.
    expect((await store.findCalls('call-1')).map((c) => c.agentId)).toEqual(['bob', 'alice'])
  })

  it('lists calls by agent, state and timing in ask order, and projects timed calls', async () => {
    const store = await open()
    const keys = ['c1', 'c2', 'c3', 'c4'].map((callId) => ({ agentId: 'alice', callId }))
    const [k1, k2, k3, k4] = keys as [CallKey, CallKey, CallKey, CallKey]
    await store.append(
      asked(k1),
      asked(k2),
      asked(k3, false),
      asked(k4),
      asked({ agentId: 'bob', callId: 'c9' }),
    )
    await store.append({ type: 'answered', ...k2, answers: [{ id: 'colour', selected: ['Blue'] }] })
    await store.append({ type: 'pending', ...k4 })
    await store.append({ type: 'answered', ...k1, answers: [] })
    expect((await store.listCalls()).map((c) => c.callId)).toEqual(['c1', 'c2', 'c3', 'c4', 'c9'])
    expect((await store.listCalls({ agentId: 'bob' })).map((c) => c.callId)).toEqual(['c9'])
    expect((await store.listCalls({ states: ['open'] })).map((c) => c.callId)).toEqual(['c3', 'c9'])
    expect((await store.listCalls({ states: [] })).length).toBe(0)
    expect((await store.listCalls({ timed: false })).map((c) => c.callId)).toEqual(['c3'])
    expect((await store.listCalls({ agentId: 'alice', states: ['settled'], timed: true })).length).toBe(2)
    expect(await store.projection('alice')).toEqual({
      active: [{ callId: 'c4', questions: [colour], state: 'continued' }],
      // Settlement order, not ask order.
      settled: [
        { callId: 'c2', answers: [{ id: 'colour', selected: ['Blue'] }] },
        { callId: 'c1', answers: [] },
      ],
    })
    expect((await store.projection()).active.map((c) => c.callId)).toEqual(['c4', 'c9'])
  })

  it('pages the settled list in settlement order with a cursor; active calls come whole', async () => {
    const store = await open()
    const keys = Array.from({ length: 7 }, (_, i) => ({
      agentId: i === 3 ? 'bob' : 'alice',
      callId: `p${i}`,
    }))
    await store.append(...keys.map((k) => asked(k)), asked({ agentId: 'alice', callId: 'live' }))
    await store.append(asked({ agentId: 'alice', callId: 'blocking' }, false))
    // Settle in reverse ask order: pages follow settlement, not asking.
    for (const k of [...keys].reverse()) await store.append({ type: 'answered', ...k, answers: [] })
    await store.append({ type: 'answered', agentId: 'alice', callId: 'blocking', answers: [] })
    const first = await store.projectionPage({ limit: 3 })
    expect(first.view.active.map((c) => c.callId)).toEqual(['live'])
    expect(first.view.settled.map((c) => c.callId)).toEqual(['p6', 'p5', 'p4'])
    expect(first.next).toBeTypeOf('number')
    const second = await store.projectionPage({ limit: 3, afterSeq: first.next as number })
    expect(second.view.settled.map((c) => c.callId)).toEqual(['p3', 'p2', 'p1'])
    const third = await store.projectionPage({ limit: 3, afterSeq: second.next as number })
    expect(third.view.settled.map((c) => c.callId)).toEqual(['p0'])
    expect(third.next).toBeUndefined()
    // Exactly a page left: no cursor to an empty page.
    const exact = await store.projectionPage({ limit: 1, afterSeq: second.next as number })
    expect(exact).toEqual({ view: { active: third.view.active, settled: third.view.settled } })
    const alice = await store.projectionPage({ agentId: 'alice', limit: 10 })
    expect(alice.view.settled.map((c) => c.callId)).toEqual(['p6', 'p5', 'p4', 'p2', 'p1', 'p0'])
    expect(alice.next).toBeUndefined()
    // The same lists as the unpaged projection.
    const all = await store.projection()
    const paged = await store.projectionPage({ limit: 100 })
    expect(paged.view).toEqual(all)
  })

  it('transact decides on one call and appends atomically; a throwing decision appends nothing', async () => {
    const store = await open()
    await store.append(asked(a1))
    const seen = await store.transact(a1, (call) => ({
      events: [{ type: 'answered', ...a1, answers: [] }],
      result: call?.state,
    }))
    expect(seen).toBe('open')
    expect((await store.getCall(a1))?.state).toBe('settled')
    expect(
      await store.transact({ agentId: 'x', callId: 'y' }, (call) => ({ events: [], result: call })),
    ).toBe(undefined)
    const before = (await store.events()).length
    await expect(
      store.transact(a1, () => {
        throw new Error('no')
      }),
    ).rejects.toThrow('no')
    await expect(
      store.transact(a1, () => ({ events: [asked({ agentId: 'alice', callId: 'other' })], result: 0 })),
    ).rejects.toThrow(/another call/)
    expect((await store.events()).length).toBe(before)
    expect(await store.getCall({ agentId: 'alice', callId: 'other' })).toBeUndefined()
  })

  it('decides on calls whose ids hold quotes, backslashes and SQL, each on its own row', async () => {
    const store = await open()
    const odd = [
      { agentId: "o'brien", callId: "c'); DROP TABLE askbridge_calls; --" },
      { agentId: 'back\\slash\\', callId: "\\'" },
      { agentId: '$1', callId: "E'x'" },
    ]
    for (const key of odd) await store.append(asked(key))
    for (const key of odd) {
      const seen = await store.transact(key, (call) => ({
        events: [{ type: 'answered', ...key, answers: [] }],
        result: [call?.agentId, call?.callId],
      }))
      expect(seen).toEqual([key.agentId, key.callId])
      expect(await store.casCard(key, 0, { k: key }, [], (call) => (call ? [] : [asked(key)]))).toBe(1)
    }
    for (const key of odd) expect((await store.getCall(key))?.state).toBe('settled')
    expect((await store.listCalls()).length).toBe(odd.length)
  })

  it('decisions on one call are serialized across processes: 30 racing answers, one wins', async () => {
    const stores = [await open(), await open(), await open()]
    await stores[0]?.append(asked(a1))
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (stores[i % 3] as Store).transact(a1, (call) =>
          call?.state === 'open'
            ? {
                events: [{ type: 'answered', ...a1, answers: [{ id: 'colour', selected: [String(i)] }] }],
                result: true,
              }
            : { events: [], result: false },
        ),
      ),
    )
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(
      (await stores[2]?.events({ agentId: 'alice' }))?.filter((e) => e.type === 'answered'),
    ).toHaveLength(1)
    // A call asked for the first time inside racing decisions is asked once too.
    const fresh = { agentId: 'alice', callId: 'fresh' }
    const created = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (stores[i % 3] as Store).transact(fresh, (call) =>
          call ? { events: [], result: false } : { events: [asked(fresh)], result: true },
        ),
      ),
    )
    expect(created.filter(Boolean)).toHaveLength(1)
  })

  it('card compare-and-set: create once, update by version, 50 racing writers over 3 handles give 1 winner', async () => {
    const stores = [await open(), await open(), await open()]
    const [s0] = stores as [Store]
    expect(await s0.getCard(a1)).toBeUndefined()
    expect(await s0.casCard(a1, 0, { status: 'open', n: 0 })).toBe(1)
    expect(await s0.casCard(a1, 0, { status: 'open', n: 1 })).toBeUndefined()
    expect(await s0.casCard(a1, 1, { status: 'open', n: 2 })).toBe(2)
    expect(await s0.casCard(a1, 1, { status: 'open', n: 3 })).toBeUndefined()
    expect(await s0.getCard(a1)).toEqual({ version: 2, state: { status: 'open', n: 2 } })
    // The same callId for another agent is another card.
    expect(await s0.casCard({ agentId: 'bob', callId: 'call-1' }, 0, { status: 'open' })).toBe(1)
    expect((await s0.findCards('call-1')).map((c) => [c.agentId, c.version])).toEqual([
      ['alice', 2],
      ['bob', 1],
    ])
    expect(await s0.findCards('nope')).toEqual([])
    const wins = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (stores[i % 3] as Store).casCard(a1, 2, { status: 'answered', by: i }),
      ),
    )
    expect(wins.filter((v) => v !== undefined)).toEqual([3])
    const card = await s0.getCard<{ status: string; by: number }>(a1)
    expect(card?.version).toBe(3)
    expect(wins[card?.state.by ?? -1]).toBe(3)
  })

  it('remembers the cards it wrote as written; a decision on one another handle has since written is refused, and the memory dropped', async () => {
    const [here, there] = [await open(), await open()]
    const b1 = { agentId: 'bob', callId: 'call-1' }
    await here.append(asked(a1, false))
    expect(await here.casCard(a1, 0, { status: 'open', n: 0 })).toBe(1)
    expect(await here.casCard(b1, 0, { status: 'open' })).toBe(1)
    expect(here.writtenCards('call-1')).toEqual([
      { ...a1, version: 1, state: { status: 'open', n: 0 }, remembered: true },
      { ...b1, version: 1, state: { status: 'open' }, remembered: true },
    ])
    // Each use parses anew: what a caller does to one does not change the next.
    const [mine] = here.writtenCards<{ n: number }>('call-1')
    if (mine) mine.state.n = 99
    expect(here.writtenCards('call-1')[0]?.state).toEqual({ status: 'open', n: 0 })
    expect(there.writtenCards('call-1')).toEqual([])
    // A write of its own is remembered in place of the one before.
    expect(await here.casCard(a1, 1, { status: 'open', n: 1 })).toBe(2)
    expect(here.writtenCards('call-1')[1]).toEqual({
      ...a1,
      version: 2,
      state: { status: 'open', n: 1 },
      remembered: true,
    })
    // Another handle writes the card; this one, deciding on what it remembers, loses.
    expect(await there.casCard(a1, 2, { status: 'answered', n: 2 })).toBe(3)
    expect(await here.casCard(a1, 2, { status: 'answered', n: 'here' })).toBeUndefined()
    expect(here.writtenCards('call-1')).toEqual([
      { ...b1, version: 1, state: { status: 'open' }, remembered: true },
    ])
    expect(await here.getCard(a1)).toEqual({ version: 3, state: { status: 'answered', n: 2 } })
    // A step that throws writes nothing, and drops what was remembered.
    await expect(
      here.casCard(b1, 1, { status: 'answered' }, [], () => {
        throw new Error('refused')
      }),
    ).rejects.toThrow('refused')
    expect(here.writtenCards('call-1')).toEqual([])
  })

  it('card compare-and-set writes its audit entries in the same commit, and none when it loses', async () => {
    const stores = [await open(), await open()]
    const [s0, s1] = stores as [Store, Store]
    const entry = (kind: string, detail?: unknown) => ({ ...a1, kind, ...(detail ? { detail } : {}) })
    expect(await s0.casCard(a1, 0, { status: 'open' }, [entry('asked')])).toBe(1)
    // A lost create and a lost update leave no trace in the audit.
    expect(await s1.casCard(a1, 0, { status: 'open' }, [entry('asked-again')])).toBeUndefined()
    expect(await s1.casCard(a1, 7, { status: 'answered' }, [entry('stale')])).toBeUndefined()
    // Several entries, in order, the text kept exactly (a NUL and non-ASCII included).
    const detail = { label: 'Ja, gerne \u2713', note: 'a\u0000b' }
    expect(
      await s1.casCard(a1, 1, { status: 'answered' }, [entry('interaction', detail), entry('completed')]),
    ).toBe(2)
    // No entries: just the card.
    expect(await s0.casCard(a1, 2, { status: 'answered', touched: true }, [])).toBe(3)
    const audit = await s0.listAudit({ ...a1 })
    expect(audit.map((e) => e.kind)).toEqual(['asked', 'interaction', 'completed'])
    expect(audit[1]?.detail).toEqual(detail)
    expect(audit[1]?.at).toBe(audit[2]?.at)
    // Racing writers with entries: exactly the winner's entry is kept.
    const wins = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (stores[i % 2] as Store).casCard(a1, 3, { status: 'answered', by: i }, [entry(`won-${i}`)]),
      ),
    )
    const winner = wins.findIndex((v) => v !== undefined)
    expect(wins.filter((v) => v !== undefined)).toEqual([4])
    expect((await s1.listAudit({ ...a1 })).map((e) => e.kind).slice(3)).toEqual([`won-${winner}`])
  })

  it('card compare-and-set with a call step: one commit, or nothing when the step throws', async () => {
    const stores = [await open(), await open()]
    const [s0, s1] = stores as [Store, Store]
    await s0.append(asked(a1), { type: 'pending', ...a1 })
    expect(await s0.casCard(a1, 0, { status: 'continued' })).toBe(1)
    const queue = (reply: LateReply) => (call: CallRecord | undefined) => {
      if (call?.queuedReply) throw new Error('queued already')
      return [{ type: 'reply_queued' as const, ...a1, reply }]
    }
    // A step that throws leaves neither the card, nor its audit, nor an event.
    const before = (await s0.events()).length
    await expect(
      s1.casCard(a1, 1, { status: 'answered' }, [{ ...a1, kind: 'x' }], () => {
        throw new Error('refused')
      }),
    ).rejects.toThrow('refused')
    expect((await s0.getCard(a1))?.version).toBe(1)
    expect(await s0.listAudit({ ...a1 })).toEqual([])
    expect((await s0.events()).length).toBe(before)
    // A lost compare-and-set writes nothing of the step, and is a conflict even when the step
    // would have refused: the caller decides again on the card as it is now.
    expect(await s1.casCard(a1, 7, { status: 'answered' }, [], queue(replyOf('c1')))).toBeUndefined()
    expect((await s0.getCall(a1))?.queuedReply).toBeUndefined()
    expect(
      await s1.casCard(a1, 7, { status: 'answered' }, [], () => {
        throw new Error('refused')
      }),
    ).toBeUndefined()
    expect((await s0.events()).length).toBe(before)
    // Racing steps over two handles (each its own version): one card write, one reply queued.
    const wins = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        (stores[i % 2] as Store).casCard(a1, 1, { status: 'answered', by: i }, [], queue(replyOf('c1'))),
      ),
    )
    expect(wins.filter((w) => w.status === 'fulfilled' && w.value === 2)).toHaveLength(1)
    expect((await s1.getCall(a1))?.queuedReply).toEqual(replyOf('c1'))
    // A reply queued first (through `transact`) refuses the card's step in its commit.
    expect(await s0.transact(a1, () => ({ events: [{ type: 'reply_discarded', ...a1 }], result: 0 }))).toBe(0)
    await s0.transact(a1, (call) => ({ events: queue(replyOf('c1'))(call), result: 0 }))
    await expect(
      s1.casCard(a1, 2, { status: 'answered', again: true }, [], queue(replyOf('c1'))),
    ).rejects.toThrow('queued already')
    expect((await s0.getCard(a1))?.version).toBe(2)
  })

  it('a completing step: the card, its audit, the event and the folded call row in one commit', async () => {
    const [s0, s1] = [await open(), await open()]
    await s0.append(asked(a1))
    expect(await s0.casCard(a1, 0, { status: 'open' })).toBe(1)
    const answers = [{ id: 'q1', selected: ['Yes'] }]
    const answered = (call: CallRecord | undefined) =>
      call?.state === 'open' ? [{ type: 'answered' as const, ...a1, answers }] : []
    expect(await s1.casCard(a1, 1, { status: 'answered' }, [{ ...a1, kind: 'completed' }], answered)).toBe(2)
    const events = await s0.events({ ...a1 })
    expect(events.map((e) => e.type)).toEqual(['asked', 'answered'])
    const last = events.at(-1) as StoredEvent
    expect(last.seq).toBeGreaterThan((events[0] as StoredEvent).seq)
    const call = await s0.getCall(a1)
    expect(call).toMatchObject({ state: 'settled', settledSeq: last.seq, answers })
    expect(await s0.listCalls({ states: ['open'] })).toEqual([])
    expect((await s0.listAudit({ ...a1 })).map((e) => e.kind)).toEqual(['completed'])
    // A later event on the call comes after it in the log.
    await s0.append({ type: 'reply_discarded', ...a1 })
    const seqs = (await s0.events({ ...a1 })).map((e) => e.seq)
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
    expect(new Set(seqs).size).toBe(3)
  })

  it('lists cards oldest update first, filtered by status', async () => {
    let t = 1
    const store = await open({ now: () => t++ })
    const k = (callId: string) => ({ agentId: 'alice', callId })
    await store.casCard(k('a'), 0, { status: 'open' })
    await store.casCard(k('b'), 0, { status: 'answered' })
    await store.casCard(k('c'), 0, { note: 'no status' })
    await store.casCard(k('a'), 1, { status: 'open', touched: true })
    expect((await store.listCards()).map((c) => c.callId)).toEqual(['b', 'c', 'a'])
    expect(
      (await store.listCards({ statuses: ['open'] })).map((c) => [c.agentId, c.callId, c.version]),
    ).toEqual([['alice', 'a', 2]])
    expect(await store.listCards({ statuses: [] })).toEqual([])
  })

  it("lists cards by status, by their call's state, updated since, and the latest ones", async () => {
    let t = 100
    const store = await open({ now: () => t })
    const k = (callId: string) => ({ agentId: 'alice', callId })
    await store.append(asked(k('live')), asked(k('cont')), asked(k('done'), false))
    await store.append({ type: 'pending', ...k('cont') }, { type: 'answered', ...k('done'), answers: [] })
    for (const [callId, status] of [
      ['live', 'open'],
      ['cont', 'answered'],
      ['done', 'answered'],
      ['gone', 'cancelled'],
      ['bare', undefined],
    ] as const) {
      t += 10
      await store.casCard(k(callId), 0, status ? { status } : {})
    }
    const ids = (cards: Array<{ callId: string }>) => cards.map((c) => c.callId)
    expect(ids(await store.listCards({ statuses: ['answered'], callStates: ['continued'] }))).toEqual([
      'cont',
    ])
    expect(ids(await store.listCards({ callStates: ['open', 'settled'] }))).toEqual(['live', 'done'])
    expect(ids(await store.listCards({ updatedSince: 130 }))).toEqual(['done', 'gone', 'bare'])
    expect(ids(await store.listCards({ notStatuses: ['open', 'continued'], updatedSince: 120 }))).toEqual([
      'cont',
      'done',
      'gone',
      'bare',
    ])
    expect(ids(await store.listCards({ notStatuses: ['open', 'continued'], latest: 2 }))).toEqual([
      'bare',
      'gone',
    ])
    expect(ids(await store.listCards({ statuses: ['answered', 'open'], latest: 2 }))).toEqual([
      'done',
      'cont',
    ])
    expect(await store.listCards({ callStates: [] })).toEqual([])
    expect(ids(await store.listCards({ calls: [k('done'), k('live'), k('nothing'), k('cont')] }))).toEqual([
      'live',
      'cont',
      'done',
    ])
    // Keys are matched whole: another agent's call of the same id is not it.
    expect(
      ids(
        await store.listCards({
          calls: [{ agentId: 'bob', callId: 'done' }, k('done')],
          statuses: ['answered'],
        }),
      ),
    ).toEqual(['done'])
    expect(await store.listCards({ calls: [{ agentId: 'bob', callId: 'live' }] })).toEqual([])
    expect(await store.listCards({ calls: [] })).toEqual([])
  })

  it('records one post per call and destination, updates its reference, lists in order', async () => {
    const store = await open()
    const post = (destKey: string, createdAt: number) => ({
      ...a1,
      destKey,
      platform: destKey.split(':')[0] as string,
      ref: { ts: destKey },
      createdAt,
    })
    expect(await store.addPost(post('slack:C1', 5))).toBe(true)
    expect(await store.addPost(post('slack:C1', 6))).toBe(false)
    expect(await store.addPost(post('web', 5))).toBe(true)
    expect(await store.addPost(post('discord:1', 1))).toBe(true)
    expect(await store.addPost({ ...post('web', 7), agentId: 'bob' })).toBe(true)
    await store.updatePost(a1, 'slack:C1', { ts: '123.456', channel: 'C1' })
    await store.updatePost(a1, 'web', undefined)
    const posts = await store.listPosts(a1)
    expect(posts.map((p) => [p.destKey, p.ref, p.createdAt])).toEqual([
      ['discord:1', { ts: 'discord:1' }, 1],
      ['slack:C1', { ts: '123.456', channel: 'C1' }, 5],
      ['web', null, 5],
    ])
    expect((await store.listPosts({ agentId: 'bob', callId: 'call-1' })).map((p) => p.destKey)).toEqual([
      'web',
    ])
  })

  it('reads a card with its copies as listPosts lists them; none without a card', async () => {
    const store = await open()
    const other = await open()
    const post = (destKey: string, createdAt: number, ref: unknown) => ({
      ...a1,
      destKey,
      platform: destKey.split(':')[0] as string,
      ref,
      createdAt,
    })
    expect(await store.addPost(post('slack:C1', 5, { ts: '1.5' }))).toBe(true)
    expect(await store.getCardWithPosts(a1)).toBeUndefined()
    expect(await store.casCard(a1, 0, { status: 'open', text: "quote ' NUL \u0000 ☃" })).toBe(1)
    expect(await store.getCardWithPosts(a1)).toEqual({
      version: 1,
      state: { status: 'open', text: "quote ' NUL \u0000 ☃" },
      posts: await store.listPosts(a1),
    })
    expect(await other.addPost(post('discord:1', 1, { id: '9007199254740993', big: 2 ** 53 }))).toBe(true)
    expect(await other.addPost(post('web', 5, null))).toBe(true)
    expect(await other.addPost({ ...post('web', 2, 'bob'), agentId: 'bob' })).toBe(true)
    expect(await other.casCard(a1, 1, { status: 'answered' })).toBe(2)
    const read = await store.getCardWithPosts(a1)
    expect(read?.version).toBe(2)
    expect(read?.state).toEqual({ status: 'answered' })
    expect(read?.posts).toEqual(await store.listPosts(a1))
    expect(read?.posts.map((p) => [p.destKey, p.ref, p.createdAt])).toEqual([
      ['discord:1', { id: '9007199254740993', big: 2 ** 53 }, 1],
      ['slack:C1', { ts: '1.5' }, 5],
      ['web', null, 5],
    ])
  })

  it('one claim to post each copy: held while renewed, taken over once lapsed, ended by the post', async () => {
    // Two handles on one database: two bridges.
    const [one, two] = [await open(), await open()]
    const intent = { ...a1, destKey: 'slack:C1', platform: 'slack', ref: { pending: true }, createdAt: 10 }
    const claim = (owner: string, now: number) => ({ owner, until: now + 100, now })
    expect(await one.claimPost(intent, claim('A', 10))).toEqual({ createdAt: 10, taken: false })
    // B sees the same ask at the same instant: A is posting it.
    expect(await two.claimPost({ ...intent, createdAt: 11 }, claim('B', 11))).toBeUndefined()
    expect(await two.lapsedPosts(50, 10)).toEqual([])
    // A renews while it posts; past the first deadline the claim still holds.
    await one.renewPostClaims('A', 300)
    expect(await two.claimPost(intent, claim('B', 200))).toBeUndefined()
    // A died: its claim lapses, the intent is listed, and exactly one of two takers gets it.
    expect((await two.lapsedPosts(301, 10)).map((p) => [p.destKey, p.ref, p.createdAt])).toEqual([
      ['slack:C1', { pending: true }, 10],
    ])
    const takers = await Promise.all([
      two.claimPost(intent, claim('B', 301)),
      one.claimPost(intent, claim('C', 301)),
    ])
    expect(takers.filter((t) => t !== undefined)).toEqual([{ createdAt: 10, taken: true }])
    const winner = takers[0] ? 'B' : 'C'
    // The winner posts: the claim ends and nobody claims a posted copy.
    await (takers[0] ? two : one).updatePost(a1, 'slack:C1', { ts: '1.2' })
    expect(await one.lapsedPosts(10_000, 10)).toEqual([])
    expect(await one.claimPost(intent, claim(winner, 10_000))).toBeUndefined()
    await one.renewPostClaims(winner, 20_000)
    expect((await one.listPosts(a1)).map((p) => p.ref)).toEqual([{ ts: '1.2' }])
    // A holder that gives up (the post failed) releases it: a retry takes it over at once.
    const web = { ...intent, destKey: 'web', platform: 'web' }
    expect(await one.claimPost(web, claim('A', 500))).toMatchObject({ taken: false })
    await two.releasePost(a1, 'web', 'B') // not B's: nothing changes
    expect(await two.claimPost(web, claim('B', 501))).toBeUndefined()
    await one.releasePost(a1, 'web', 'A')
    expect(await two.claimPost(web, claim('B', 502))).toEqual({ createdAt: 10, taken: true })
    // An intent stored without a claim (before claims existed) is anyone's to take over.
    expect(await one.addPost({ ...intent, destKey: 'discord:9', platform: 'discord' })).toBe(true)
    expect(await two.claimPost({ ...intent, destKey: 'discord:9' }, claim('B', 0))).toMatchObject({
      taken: true,
    })
  })

  it('audits entries and lists them by call, agent and time', async () => {
    let t = 100
    const store = await open({ now: () => t })
    await store.audit({ ...a1, kind: 'asked', detail: { route: 'r' } })
    t = 200
    await store.audit({
      agentId: 'bob',
      callId: 'call-1',
      kind: 'answered',
      actor: { platform: 'slack', userId: 'U1' },
    })
    await store.audit({ kind: 'startup' })
    await store.audit({ ...a1, kind: 'refused', refused: true, code: 'NOT_ALLOWED', platform: 'discord' })
    const all = await store.listAudit()
    expect(all.map((e) => e.kind)).toEqual(['asked', 'answered', 'startup', 'refused'])
    expect(all[0]).toMatchObject({ ...a1, kind: 'asked', detail: { route: 'r' }, at: 100 })
    expect((await store.listAudit({ callId: 'call-1' })).map((e) => e.kind)).toEqual([
      'asked',
      'answered',
      'refused',
    ])
    expect((await store.listAudit({ ...a1 })).map((e) => e.kind)).toEqual(['asked', 'refused'])
    expect((await store.listAudit({ agentId: 'bob' })).map((e) => e.kind)).toEqual(['answered'])
    expect((await store.listAudit({ since: 150 })).map((e) => e.kind)).toEqual([
      'answered',
      'startup',
      'refused',
    ])
  })

  it('sign-in sessions: kept, seen by another handle, ended by sign-out, gone once expired', async () => {
    const store = await open()
    const other = await open()
    const session = {
      id: 'digest-1',
      email: 'alice@example.com',
      name: 'Alice',
      csrf: 'c'.repeat(32),
      expiresAt: 5000,
    }
    await store.putSession(session, 1000)
    await store.putSession({ ...session, id: 'digest-2', email: 'bob@example.com', expiresAt: 2000 }, 1000)
    expect(await other.getSession('digest-1', 1000)).toEqual(session)
    expect(await other.getSession('digest-2', 1999)).toMatchObject({ email: 'bob@example.com' })
    expect(await other.getSession('digest-2', 2000)).toBeUndefined()
    expect(await other.getSession('no-such', 1000)).toBeUndefined()
    // Signing out on one handle ends the session on the other.
    await other.deleteSession('digest-1')
    expect(await store.getSession('digest-1', 1000)).toBeUndefined()
    // A later sign-in deletes expired sessions on the way.
    await store.putSession({ ...session, id: 'digest-3' }, 3000)
    expect(await other.getSession('digest-2', 0)).toBeUndefined()
    expect(await other.getSession('digest-3', 3000)).toMatchObject({ id: 'digest-3' })
  })

  it('rememberOnce: the first of concurrent handles wins, the key is refused until it expires', async () => {
    const stores = [await open(), await open(), await open()]
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) => (stores[i % 3] as Store).rememberOnce('sig-a', 2000, 1000)),
    )
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await stores[1]?.rememberOnce('sig-b', 2000, 1000)).toBe(true)
    expect(await stores[0]?.rememberOnce('sig-a', 2000, 1999)).toBe(false)
    // Past its time the key is forgotten (a replay that old is refused by its timestamp instead).
    expect(await stores[2]?.rememberOnce('sig-a', 4000, 2000)).toBe(true)
  })

  it('keeps text exactly, NUL and emoji included', async () => {
    const store = await open()
    const odd: AskUserQuestionItem = {
      id: 'q',
      question: 'a\u0000b 🚀 \u202e "quoted" \\',
      options: [{ label: 'é' }],
    }
    await store.append({ ...(asked(a1) as Extract<StoreEvent, { type: 'asked' }>), questions: [odd] })
    expect((await store.getCall(a1))?.questions).toEqual([odd])
    await store.casCard(a1, 0, { text: 'x\u0000y' })
    expect((await store.getCard(a1))?.state).toEqual({ text: 'x\u0000y' })
  })

  it('a restart loses nothing: another handle on the same database sees every call, card, post and audit', async () => {
    const first = await open()
    await first.append(asked(a1), { type: 'pending', ...a1 })
    await first.casCard(a1, 0, { status: 'open' })
    await first.addPost({ ...a1, destKey: 'web', platform: 'web', ref: null, createdAt: 1 })
    await first.audit({ ...a1, kind: 'asked' })
    await first.close()
    await expect(first.getCall(a1)).rejects.toThrow(/closed/)
    await first.close() // idempotent
    const second = await open()
    expect((await second.getCall(a1))?.state).toBe('continued')
    expect((await second.getCard(a1))?.version).toBe(1)
    expect((await second.listPosts(a1)).length).toBe(1)
    expect((await second.listAudit()).length).toBe(1)
    expect((await second.projection()).active.map((c) => c.callId)).toEqual(['call-1'])
    // Sequence numbers keep growing after a restart.
    const before = (await second.events()).at(-1)?.seq ?? 0
    await second.append({ type: 'reply_queued', ...a1, reply: replyOf('call-1') })
    expect((await second.events()).at(-1)?.seq).toBeGreaterThan(before)
  })

  describe('retention', () => {
    const key = (callId: string, agentId = 'alice') => ({ agentId, callId })
    /** A card, a post and an audit entry for each call, as the answerer writes them. */
    const withCopies = async (store: Store, keys: CallKey[]) => {
      for (const k of keys) {
        await store.casCard(k, 0, { status: 'open' })
        await store.addPost({ ...k, destKey: 'web', platform: 'web', ref: null, createdAt: 1 })
        await store.audit({ ...k, kind: 'asked' })
      }
    }

    it('deletes settled and dropped calls that ended before the cutoff with their log, card, posts and replies; never an open or continued one', async () => {
      let t = 1000
      const store = await open({ now: () => t })
      const [settled, dropped, admitted, continued, blocking, recent] = [
        'settled',
        'dropped',
        'admitted',
        'continued',
        'blocking',
        'recent',
      ].map((c) => key(c))
      const all = [settled, dropped, admitted, continued, blocking, recent] as CallKey[]
      await store.append(
        ...[settled, dropped, admitted, continued, recent].map((k) => asked(k as CallKey)),
        asked(blocking as CallKey, false),
      )
      await withCopies(store, all)
      t = 2000
      await store.append(
        { type: 'answered', ...(settled as CallKey), answers: [] },
        { type: 'dropped', ...(dropped as CallKey), code: 'ASK_CANCELLED' },
        { type: 'pending', ...(admitted as CallKey) },
        { type: 'reply_queued', ...(admitted as CallKey), reply: replyOf('admitted') },
        { type: 'reply_admitted', ...(admitted as CallKey), answers: [] },
        { type: 'pending', ...(continued as CallKey) },
        { type: 'reply_queued', ...(continued as CallKey), reply: replyOf('continued') },
      )
      t = 9000
      await store.append({ type: 'answered', ...(recent as CallKey), answers: [] })
      expect((await store.getCall(settled as CallKey))?.endedAt).toBe(2000)
      expect((await store.getCall(dropped as CallKey))?.endedAt).toBe(2000)

      // Far past the cutoff, the continued call with its queued reply and the blocking ask stay.
      expect(await store.pruneCalls(5000, 100)).toBe(3)
      for (const k of [settled, dropped, admitted] as CallKey[]) {
        expect(await store.getCall(k)).toBeUndefined()
        expect(await store.events(k)).toEqual([])
        expect(await store.getCard(k)).toBeUndefined()
        expect(await store.listPosts(k)).toEqual([])
      }
      for (const k of [continued, blocking, recent] as CallKey[]) {
        expect(await store.getCall(k)).toBeDefined()
        expect(await store.getCard(k)).toBeDefined()
        expect(await store.listPosts(k)).toHaveLength(1)
      }
      expect((await store.getCall(continued as CallKey))?.queuedReply).toEqual(replyOf('continued'))
      expect((await store.events(continued as CallKey)).map((e) => e.type)).toEqual([
        'asked',
        'pending',
        'reply_queued',
      ])
      expect((await store.projection()).settled.map((c) => c.callId)).toEqual(['recent'])
      // The audit has its own retention: every entry is still there.
      expect(await store.listAudit()).toHaveLength(6)
      expect(await store.pruneCalls(5000, 100)).toBe(0)
      expect(await store.pruneCalls(Number.MAX_SAFE_INTEGER, 100)).toBe(1) // `recent`

      // A pruned key is a new call when asked again.
      await store.append(asked(settled as CallKey))
      expect((await store.getCall(settled as CallKey))?.state).toBe('open')
      expect((await store.events(settled as CallKey)).map((e) => e.type)).toEqual(['asked'])
    })

    it('deletes in bounded batches, oldest first', async () => {
      let t = 0
      const store = await open({ now: () => t })
      const keys = Array.from({ length: 7 }, (_, i) => key(`c${i}`))
      for (const k of keys) {
        t += 10
        await store.append(asked(k, false), { type: 'answered', ...k, answers: [] })
      }
      expect(await store.pruneCalls(35, 100)).toBe(3) // ended at 10, 20, 30
      expect(await store.getCall(key('c3'))).toBeDefined()
      const batches: number[] = []
      for (let n = -1; n !== 0; ) {
        n = await store.pruneCalls(1000, 3)
        batches.push(n)
      }
      expect(batches).toEqual([3, 1, 0])
      expect(await store.listCalls()).toEqual([])
    })

    it('several processes pruning at once delete each call once, and a key asked again meanwhile is kept whole', async () => {
      let t = 1000
      const stores = [
        await open({ now: () => t }),
        await open({ now: () => t }),
        await open({ now: () => t }),
      ]
      const first = stores[0] as Store
      const ended = Array.from({ length: 60 }, (_, i) => key(`e${i}`, i % 2 ? 'alice' : 'bob'))
      const open1 = Array.from({ length: 5 }, (_, i) => key(`o${i}`))
      await first.append(...ended.map((k) => asked(k, false)), ...open1.map((k) => asked(k)))
      await first.append(...ended.map((k): StoreEvent => ({ type: 'dropped', ...k, code: 'ASK_CANCELLED' })))
      await withCopies(first, ended)
      t = 5000
      const again = ended.slice(0, 10)
      const pruned = await Promise.all([
        ...stores.map(async (store) => {
          let total = 0
          for (let n = -1; n !== 0; total += n) n = await store.pruneCalls(2000, 7)
          return total
        }),
        ...again.map((k, i) => (stores[i % 3] as Store).append(asked(k))),
      ])
      const deleted = pruned.slice(0, 3).reduce((a, b) => (a ?? 0) + (b ?? 0), 0) as number
      // Asked again before its pruning: kept (open). After: a new call. Either way, whole.
      for (const k of again) {
        const call = await first.getCall(k)
        expect(call?.state).toBe('open')
        const log = await first.events(k)
        expect(log.at(-1)?.type).toBe('asked')
        expect(call?.askedSeq).toBe(log.at(-1)?.seq)
      }
      const keptAgain = (await Promise.all(again.map((k) => first.events(k)))).filter((l) => l.length > 1)
      expect(deleted).toBe(60 - keptAgain.length)
      expect(await first.listCalls({ states: ['dropped'] })).toEqual([])
      expect((await first.listCalls({ states: ['open'] })).length).toBe(15)
    })

    it('prunes the audit by age in bounded batches', async () => {
      let t = 1000
      const store = await open({ now: () => t })
      await store.audit({ ...a1, kind: 'asked' })
      await store.audit({ kind: 'startup' })
      t = 2000
      await store.audit({ ...a1, kind: 'answered' })
      t = 9000
      await store.audit({ ...a1, kind: 'recent' })
      expect(await store.pruneAudit(5000, 2)).toBe(2)
      expect(await store.pruneAudit(5000, 2)).toBe(1)
      expect(await store.pruneAudit(5000, 2)).toBe(0)
      expect((await store.listAudit()).map((e) => e.kind)).toEqual(['recent'])
    })
  })
})
