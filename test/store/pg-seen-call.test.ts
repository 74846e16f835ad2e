import pg from 'pg'
import { afterEach, expect, it, vi } from 'vitest'
import { cardOfRef } from '../../src/answerer/open.js'
import { agentTag } from '../../src/card/codec.js'
import type { PostgresStore } from '../../src/store/postgres.js'
import type { CallKey, CallRecord, CallStep } from '../../src/store/types.js'
import { askAndAnswer, storesOnOneSchema, watchWire } from '../helpers/pg-store.js'
import { until } from '../helpers/service.js'

// A completing click decides on the call row read beside its card, and commits in one round trip
// when that row is unchanged under the call's lock; otherwise it decides again under the lock.

const key: CallKey = { agentId: 'alice', callId: "call-'1'" }
const { asked, answered } = askAndAnswer(key)

const stores = storesOnOneSchema()
const open = stores.open
afterEach(async () => {
  vi.restoreAllMocks()
  await stores.end()
})

/** An asked call with its card at version 1. */
async function askedWithCard(store: PostgresStore): Promise<void> {
  await store.append(asked)
  expect(await store.casCard(key, 0, { n: 0 })).toBe(1)
}

/** The step of a completing click: answer an open call; anything else, no event. */
function answering(seen: Array<string | undefined>, answer = answered): CallStep {
  return (call: CallRecord | undefined) => {
    seen.push(call?.state)
    return call?.state === 'open' ? [answer] : []
  }
}

it('after a read, a completing decision is one round trip, and the call row carries the seq of its event', async () => {
  // One connection: what it has prepared, it keeps.
  const store = await open({ max: 1 })
  await askedWithCard(store)
  const [card] = await store.findCards(key.callId)
  expect(card?.version).toBe(1)
  const sent = watchWire()
  const seen: Array<string | undefined> = []
  const audit = [{ ...key, kind: 'completed' as const, detail: { colour: 'Red' } }]
  expect(await store.casCard(key, 1, { n: 1 }, audit, answering(seen))).toBe(2)
  vi.restoreAllMocks()
  expect(seen).toEqual(['open'])
  // The connection prepares the decision's statement once; the transaction runs it by name.
  expect(sent).toHaveLength(2)
  expect(sent[0]).toMatch(/^PREPARE (askbridge_x_[0-9a-f]{24}) AS WITH guard AS/)
  const name = /^PREPARE (\S+)/.exec(sent[0] ?? '')?.[1]
  expect(sent[1]).toMatch(
    /^BEGIN; SELECT pg_advisory_xact_lock\(.*; EXECUTE (\S+)\(.*; COMMIT; SELECT pg_notify\(.*\)/s,
  )
  expect(sent[1]).toContain(`EXECUTE ${name}(`)

  const event = (await store.events({ callId: key.callId })).find((e) => e.type === 'answered')
  const call = await store.getCall(key)
  expect(call).toMatchObject({ state: 'settled', answers: answered.answers, settledSeq: event?.seq })
  const [row] = await stores.query<{ settled_seq: string; state: string }>(
    'SELECT settled_seq, state FROM askbridge_calls',
  )
  expect(row).toEqual({ settled_seq: String(event?.seq), state: 'settled' })
  expect((await store.getCard(key))?.state).toEqual({ n: 1 })
  expect((await store.listAudit({ callId: key.callId })).map((e) => e.kind)).toEqual(['completed'])
  // The next asks draw later seqs: the one drawn in the statement came from the same sequence.
  await store.append({ ...asked, callId: 'call-2' })
  const later = (await store.events({ callId: 'call-2' }))[0]
  expect(later?.seq).toBeGreaterThan(event?.seq ?? Number.POSITIVE_INFINITY)

  // The next decision on that connection is one round trip: prepared once, run by name.
  const second = { ...key, callId: 'call-2' }
  expect(await store.casCard(second, 0, { n: 0 })).toBe(1)
  await store.findCards(second.callId)
  const again = watchWire()
  expect(await store.casCard(second, 1, { n: 1 }, [], answering([], askAndAnswer(second).answered))).toBe(2)
  vi.restoreAllMocks()
  expect(again).toHaveLength(1)
  expect(again[0]).toContain(`EXECUTE ${name}(`)
  expect((await store.getCall(second))?.state).toBe('settled')
})

it('when the call changed after the read, the decision is taken again on the row as it is under the lock', async () => {
  const store = await open()
  const other = await open()
  await askedWithCard(store)
  await store.findCards(key.callId)
  // Another bridge closes the wait meanwhile: the call is continued, not open.
  await other.append({ type: 'pending', ...key })
  const seen: Array<string | undefined> = []
  expect(await store.casCard(key, 1, { n: 1 }, [], answering(seen))).toBe(2)
  expect(seen).toEqual(['open', 'continued'])
  expect((await store.getCall(key))?.state).toBe('continued')
  expect((await store.events({ callId: key.callId })).map((e) => e.type)).toEqual(['asked', 'pending'])
})

it('when the card moved after the read, nothing is written: not the card, the audit, the event or the call', async () => {
  const store = await open()
  const other = await open()
  await askedWithCard(store)
  await store.findCards(key.callId)
  expect(await other.casCard(key, 1, { n: 'other' })).toBe(2)
  const audit = [{ ...key, kind: 'completed' as const }]
  expect(await store.casCard(key, 1, { n: 1 }, audit, answering([]))).toBeUndefined()
  expect((await store.getCard(key))?.state).toEqual({ n: 'other' })
  expect(await store.listAudit({ callId: key.callId })).toEqual([])
  expect((await store.events({ callId: key.callId })).map((e) => e.type)).toEqual(['asked'])
  expect((await store.getCall(key))?.state).toBe('open')
})

it('a refusal decided on the row as read is decided again under the lock', async () => {
  const store = await open()
  await askedWithCard(store)
  await store.findCards(key.callId)
  let calls = 0
  const refuseOnce: CallStep = (call) => {
    calls++
    if (calls === 1) throw new Error('refused on the row as read')
    return call?.state === 'open' ? [answered] : []
  }
  expect(await store.casCard(key, 1, { n: 1 }, [], refuseOnce)).toBe(2)
  expect(calls).toBe(2)
  expect((await store.getCall(key))?.state).toBe('settled')
})

it('a connection lost after it prepared the decision: its replacement prepares it again, and the decision commits', async () => {
  const app = `askbridge-prepared-${process.pid}-${Date.now()}`
  const store = await open({ max: 1, applicationName: app })
  await askedWithCard(store)
  await store.findCards(key.callId)
  expect(await store.casCard(key, 1, { n: 1 }, [], answering([]))).toBe(2)
  // The server ends the pool's connection (not the listening one): the pool drops it.
  await stores.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query NOT LIKE 'LISTEN%'",
    [app],
  )
  const second = { ...key, callId: 'call-2' }
  await until(
    () =>
      store.append({ ...asked, callId: second.callId }).then(
        () => true,
        () => false,
      ),
    'a new connection',
  )
  expect(await store.casCard(second, 0, { n: 0 })).toBe(1)
  await store.findCards(second.callId)
  const sent = watchWire()
  expect(await store.casCard(second, 1, { n: 1 }, [], answering([], askAndAnswer(second).answered))).toBe(2)
  vi.restoreAllMocks()
  expect(sent[0]).toMatch(/^PREPARE askbridge_x_[0-9a-f]{24} AS /)
  expect(sent[1]).toMatch(/EXECUTE askbridge_x_[0-9a-f]{24}\(/)
  expect((await store.getCall(second))?.state).toBe('settled')
})

it("the store's parameterized reads go as named statements, and a column added to a table later leaves them working", async () => {
  const store = await open({ max: 1 })
  await askedWithCard(store)
  await store.addPost({ ...key, destKey: 'slack:C1', platform: 'slack', ref: { ts: '1' }, createdAt: 5 })
  const names: Array<string | undefined> = []
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const config = args[0]
    if (typeof config === 'object' && config !== null) names.push((config as { name?: string }).name)
    return query.apply(this, args) as never
  } as never)
  expect((await store.getCard(key))?.version).toBe(1)
  expect(await store.listPosts(key)).toHaveLength(1)
  expect((await store.getCard(key))?.version).toBe(1)
  vi.restoreAllMocks()
  expect(names).toHaveLength(3)
  expect(names[0]).toMatch(/^askbridge_[0-9a-f]{24}$/)
  expect(names[2]).toBe(names[0])
  expect(names[1]).not.toBe(names[0])
  // A later release adds a column (another replica migrates): the prepared reads name their columns.
  await stores.query('ALTER TABLE askbridge_posts ADD COLUMN later TEXT')
  await stores.query('ALTER TABLE askbridge_cards ADD COLUMN later TEXT')
  expect(await store.listPosts(key)).toEqual([
    { ...key, destKey: 'slack:C1', platform: 'slack', ref: { ts: '1' }, createdAt: 5 },
  ])
  expect((await store.getCard(key))?.state).toEqual({ n: 0 })
})

it('a click on a card this process just wrote is decided without reading it back: one round trip in all', async () => {
  const store = await open({ max: 1 })
  // Prepared on this connection already (a decision before), so the wire shows only the click.
  const warm = { ...key, callId: 'warm' }
  await store.append(askAndAnswer(warm).asked)
  expect(await store.casCard(warm, 0, { n: 0 })).toBe(1)
  expect(store.writtenCards(warm.callId)).toHaveLength(1)
  expect(await store.casCard(warm, 1, { n: 1 }, [], answering([], askAndAnswer(warm).answered))).toBe(2)

  await askedWithCard(store)
  const sent = watchWire()
  // The click's card, as an adapter finds it from the component's reference.
  const card = await cardOfRef(store, { callId: key.callId, agent: agentTag(key.agentId) })
  expect(card).toEqual({ ...key, version: 1, state: { n: 0 }, remembered: true })
  expect(await cardOfRef(store, { callId: key.callId, agent: agentTag('bob') })).toBeUndefined()
  expect(sent).toHaveLength(1)
  expect(sent[0]).toMatch(/FROM askbridge_cards c WHERE c.call_id = \$1/)
  sent.length = 0
  const seen: Array<string | undefined> = []
  expect(await store.casCard(key, 1, { n: 1 }, [], answering(seen))).toBe(2)
  vi.restoreAllMocks()
  expect(seen).toEqual(['open'])
  expect(sent).toHaveLength(1)
  expect(sent[0]).toMatch(/^BEGIN; SELECT pg_advisory_xact_lock\(.*; EXECUTE askbridge_x_/s)
  expect((await store.getCall(key))?.state).toBe('settled')
  // What it wrote is the hint now; a card of another call is not.
  expect(store.writtenCards(key.callId)).toEqual([{ ...key, version: 2, state: { n: 1 }, remembered: true }])
  expect(store.writtenCards('call-never-written')).toEqual([])
})

it("a hint another process's write made stale decides nothing: the click is decided again on the card read", async () => {
  const here = await open()
  const there = await open()
  await askedWithCard(here)
  // The other process answers first, on the card it read.
  const [read] = await there.findCards(key.callId)
  expect(read?.version).toBe(1)
  expect(await there.casCard(key, 1, { n: 'there' }, [], answering([]))).toBe(2)
  // This one still remembers its own write, and decides on it: the compare-and-set refuses it.
  const [hint] = here.writtenCards(key.callId)
  expect(hint?.version).toBe(1)
  expect(await here.casCard(key, 1, { n: 'here' }, [], answering([]))).toBeUndefined()
  expect(here.writtenCards(key.callId)).toEqual([])
  // The card and the call are the other process's; one answer, one event for it.
  expect((await here.findCards(key.callId)).map((c) => c.state)).toEqual([{ n: 'there' }])
  expect((await here.events({ callId: key.callId })).map((e) => e.type)).toEqual(['asked', 'answered'])
})

it('a card deleted and made again under the same key at the same version: a decision on the one remembered writes nothing', async () => {
  const here = await open()
  const there = await open()
  // Each way a decision is written: the card alone; a completing click on the call row remembered
  // with it, or decided under the lock; a step of no event (the card, then the call's rows).
  const ways: Array<{ name: string; step?: CallStep; hinted?: boolean }> = [
    { name: 'card' },
    { name: 'hinted', step: answering([]), hinted: true },
    { name: 'locked', step: answering([]) },
    { name: 'none', step: () => [] },
  ]
  for (const { name, step, hinted } of ways) {
    const call = { ...key, callId: `again-${name}` }
    const { asked: askedAgain, answered: answeredAgain } = askAndAnswer(call)
    await here.append(askedAgain)
    expect(await here.casCard(call, 0, { n: 0 })).toBe(1)
    // Retention on another replica deletes the card, and a card is made again under its key (the
    // notifications of both lost to this process): version 1 again, another card.
    await stores.query('DELETE FROM askbridge_cards WHERE call_id = $1', [call.callId])
    expect(await there.casCard(call, 0, { n: 'new' })).toBe(1)
    if (hinted) expect(here.writtenCards(call.callId)).toHaveLength(1)
    const decided = step === undefined ? undefined : name === 'none' ? step : answering([], answeredAgain)
    expect(await here.casCard(call, 1, { n: 'here' }, [], decided), name).toBeUndefined()
    expect(here.writtenCards(call.callId), name).toEqual([])
    expect((await here.getCard(call))?.state, name).toEqual({ n: 'new' })
    expect(
      (await here.events({ callId: call.callId })).map((e) => e.type),
      name,
    ).toEqual(['asked'])
    // Decided again on the card as read, it is written.
    expect(await here.casCard(call, 1, { n: 'here' }, [], decided), name).toBe(2)
  }
})

it("another process's write, once notified, drops this one's hint of that call", async () => {
  const here = await open()
  const there = await open()
  here.watch(() => {})
  await here.watching()
  await askedWithCard(here)
  const other = { ...key, callId: 'other' }
  await here.append(askAndAnswer(other).asked)
  expect(await here.casCard(other, 0, { n: 0 })).toBe(1)
  expect(here.writtenCards(key.callId)).toHaveLength(1)
  await there.findCards(key.callId)
  expect(await there.casCard(key, 1, { n: 'there' })).toBe(2)
  await until(() => here.writtenCards(key.callId).length === 0)
  // The other call's hint stays: nothing was written to it.
  expect(here.writtenCards(other.callId)).toEqual([
    { ...other, version: 1, state: { n: 0 }, remembered: true },
  ])
})
