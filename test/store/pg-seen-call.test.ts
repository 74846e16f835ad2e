import { afterEach, expect, it, vi } from 'vitest'
import type { PostgresStore } from '../../src/store/postgres.js'
import type { CallKey, CallRecord, CallStep } from '../../src/store/types.js'
import { askAndAnswer, storesOnOneSchema, watchWire } from '../helpers/pg-store.js'

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
function answering(seen: Array<string | undefined>): CallStep {
  return (call: CallRecord | undefined) => {
    seen.push(call?.state)
    return call?.state === 'open' ? [answered] : []
  }
}

it('after a read, a completing decision is one round trip, and the call row carries the seq of its event', async () => {
  const store = await open()
  await askedWithCard(store)
  const [card] = await store.findCards(key.callId)
  expect(card?.version).toBe(1)
  const sent = watchWire()
  const seen: Array<string | undefined> = []
  const audit = [{ ...key, kind: 'completed' as const, detail: { colour: 'Red' } }]
  expect(await store.casCard(key, 1, { n: 1 }, audit, answering(seen))).toBe(2)
  vi.restoreAllMocks()
  expect(seen).toEqual(['open'])
  expect(sent).toHaveLength(1)
  expect(sent[0]).toMatch(/^BEGIN; SELECT pg_advisory_xact_lock\(.*; COMMIT; SELECT pg_notify\(.*\)/s)

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
