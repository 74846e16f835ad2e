/**
 * Each step is one transaction: the ask, the card's post, the click applied (with its audit and
 * the call's answer). Counted on a real SQLite store by observing which write methods run (each is one commit).
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { CardState, Person } from '../../src/card/types.js'
import { openStore } from '../../src/store/index.js'
import type { Store } from '../../src/store/types.js'
import { MemoryAdapter } from '../fakes/memory-adapter.js'
import { startAnswerer } from '../helpers/answerer.js'
import { colour, refFor, tempDir, until } from '../helpers/service.js'

const WRITES = [
  'append',
  'transact',
  'casCard',
  'addPost',
  'claimPost',
  'renewPostClaims',
  'releasePost',
  'updatePost',
  'audit',
  'pruneCalls',
  'pruneAudit',
] as const

/**
 * The store, with every write it commits listed in `log` (method name, in call order); with
 * `reads`, every method it is asked.
 */
function counted(store: Store, { reads = false } = {}): { store: Store; log: string[] } {
  const log: string[] = []
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function') return value
      if (reads || (WRITES as readonly string[]).includes(String(name)))
        return (...args: unknown[]) => {
          log.push(String(name))
          return value.apply(target, args)
        }
      return value.bind(target)
    },
  })
  return { store: proxy, log }
}

/** The real service and chat answerer on `store`, posting to one Slack channel of a memory adapter. */
async function answererOn(store: Store) {
  const adapter = new MemoryAdapter('slack')
  const { service, chat, close } = await startAnswerer({
    adapters: [adapter],
    destinations: [{ platform: 'slack', channel: 'C1' }],
    store,
  })
  cleanups.push(close)
  const agent = service.agents.ensure('agent')
  /** Ann chooses Red on the card of `callId`. */
  const chooseRed = (callId: string, id: string) =>
    chat.host.handle({
      ...refFor(callId, 'agent'),
      interaction: { id, actor: ann, action: { type: 'choose', questionId: 'colour', label: 'Red' }, at: 1 },
    })
  return { adapter, service, chat, agent, chooseRed }
}

/** {@link answererOn}, a blocking ask `callId` and its card posted and recorded. */
async function askedWithCard(store: Store, log: string[], callId: string) {
  const { adapter, service, chat, agent, chooseRed } = await answererOn(store)
  const asking = service.ask({ questions: [colour], agent, wait: { callId } })
  await until(() => adapter.messagesFor(callId).length === 1, 'card posted')
  await until(() => log.includes('updatePost'), 'post recorded')
  return { service, chat, asking, chooseRed: (id: string) => chooseRed(callId, id), adapter }
}

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const ann: Person = { platform: 'slack', userId: 'U1', name: 'Ann' }

describe('commits per step', () => {
  it('an ask, its card and a click that answers it: the click is one commit before it returns', async () => {
    const dir = tempDir()
    cleanups.push(dir.cleanup)
    const { store, log } = counted(openStore(join(dir.dir, 'commits.db')))
    const { asking, chooseRed } = await askedWithCard(store, log, 'one')
    // The ask: its event, the card with its `asked` audit entry; the copy: its claim and its ref.
    expect(log).toEqual(['append', 'casCard', 'claimPost', 'updatePost'])
    log.length = 0
    const outcome = await chooseRed('c1')
    expect(outcome.ok).toBe(true)
    // Applied, audited, completed and the call answered in one commit before the click is answered.
    expect(log).toEqual(['casCard'])
    expect(await store.getCall({ agentId: 'agent', callId: 'one' })).toMatchObject({
      state: 'settled',
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
    expect((await asking).answers[0]?.selected).toEqual(['Red'])
    // The ask returns the answer that commit stored: no second commit on the agent's path.
    expect(log).toEqual(['casCard'])
    const events = (await store.events({ agentId: 'agent', callId: 'one' })).map((e) => e.type)
    expect(events).toEqual(['asked', 'answered'])
    const kinds = (await store.listAudit({ callId: 'one' })).map((e) => e.kind)
    expect(kinds).toEqual(['asked', 'interaction', 'completed'])
  })

  it("a completing click: the waiting ask returns the commit's answers without reading the call or the card back", async () => {
    const real = openStore('memory')
    // Every store method called, reads included, in call order.
    const { store, log: calls } = counted(real, { reads: true })
    const { service, asking, chooseRed } = await askedWithCard(store, calls, 'two')
    const answered: unknown[][] = []
    service.on('answered', (...args) => answered.push(args))
    calls.length = 0
    let returned: string[] | undefined
    const result = asking.then((r) => {
      // What the store was asked between the click and the ask's return.
      returned = [...calls]
      return r
    })
    const outcome = await chooseRed('c2')
    expect(outcome.ok).toBe(true)
    expect((await result).answers).toEqual([{ id: 'colour', selected: ['Red'] }])
    // The click's card as this process wrote it (no read) and its commit; the call is not read back.
    expect(returned).toEqual(['writtenCards', 'casCard'])
    // The card itself answered it: nothing tells the card it was answered elsewhere.
    expect(answered).toEqual([
      [{ agentId: 'agent', callId: 'two' }, [{ id: 'colour', selected: ['Red'] }], 'card'],
    ])
    expect(await real.getCall({ agentId: 'agent', callId: 'two' })).toMatchObject({ state: 'settled' })
    expect((await real.getCard<{ status: string }>({ agentId: 'agent', callId: 'two' }))?.state.status).toBe(
      'answered',
    )
  })
  it('an ask makes its card and posts its copy reading neither first; the copy is brought up to date with one read', async () => {
    const real = openStore('memory')
    const { store, log: calls } = counted(real, { reads: true })
    const { asking, chooseRed, adapter } = await askedWithCard(store, calls, 'four')
    // No card was stored under the call: made at once (no read), and so no copy to look up first.
    // After posting, one read catches up with a change made meanwhile.
    await until(() => calls.filter((c) => c === 'getCard').length === 1, 'the catch-up read')
    // (What the answerer read when it started comes before the ask.)
    expect(calls.slice(calls.indexOf('append'))).toEqual([
      'append',
      'casCard',
      'claimPost',
      'updatePost',
      'getCard',
    ])
    calls.length = 0
    expect((await chooseRed('c4')).ok).toBe(true)
    expect((await asking).answers).toEqual([{ id: 'colour', selected: ['Red'] }])
    await until(() => adapter.messagesFor('four')[0]?.updates === 1, 'the copy updated')
    // The click's commit, then the copy's update: the card and its copies in one read.
    expect(calls).toEqual(['writtenCards', 'casCard', 'getCardWithPosts'])
  })

  it('an ask whose card is already stored (asked again after its window closed) decides on the card as stored', async () => {
    const real = openStore('memory')
    const { store, log: calls } = counted(real, { reads: true })
    const { adapter, service, chat, agent, chooseRed } = await answererOn(store)
    expect(await service.askTimed({ questions: [colour], agent }, 'five', 50)).toMatchObject({
      pending: true,
    })
    await until(
      async () => (await chat.host.getCard(refFor('five', 'agent')))?.status === 'continued',
      'the card continued',
    )
    calls.length = 0
    // Asked again: the first write, made as if no card were stored, fails its compare-and-set; the
    // card is read, opened again, and its copy looked up rather than posted anew.
    const again = service.ask({ questions: [colour], agent, wait: { callId: 'five' } })
    await until(() => calls.includes('listPosts'), 'the copy looked up')
    expect(calls.slice(0, 5)).toEqual(['append', 'casCard', 'getCard', 'casCard', 'listPosts'])
    await until(
      async () => (await chat.host.getCard(refFor('five', 'agent')))?.status === 'open',
      'open again',
    )
    expect(adapter.messagesFor('five')).toHaveLength(1)
    expect((await chooseRed('five', 'c5')).ok).toBe(true)
    expect((await again).answers).toEqual([{ id: 'colour', selected: ['Red'] }])
    expect(adapter.messagesFor('five')).toHaveLength(1)
  })

  it('a refusal is never decided on the card as this process wrote it: decided again on the card as stored, and only that audited', async () => {
    const dir = tempDir()
    cleanups.push(dir.cleanup)
    const path = join(dir.dir, 'remembered.db')
    const { store, log } = counted(openStore(path), { reads: true })
    const { chat, asking, chooseRed } = await askedWithCard(store, log, 'three')
    const key = { agentId: 'agent', callId: 'three' }
    const open = await store.getCard<CardState>(key)
    if (!open) throw new Error('no card')
    // This process writes the card closed (and remembers it so); another handle on the same file,
    // as another replica would, opens it again unseen by this one.
    expect(await store.casCard(key, open.version, { ...open.state, status: 'cancelled' })).toBe(
      open.version + 1,
    )
    const other = openStore(path)
    cleanups.push(() => other.close())
    expect(await other.casCard(key, open.version + 1, open.state)).toBe(open.version + 2)
    // Whether Ann may open a form is not checked by any compare-and-set: decided on the card as stored.
    expect(await chat.host.mayAnswer?.(refFor('three', 'agent'), ann)).toEqual({ ok: true })
    log.length = 0
    const outcome = await chooseRed('c3')
    // Not refused on what it remembered: read, decided again, and written.
    expect(outcome.ok).toBe(true)
    expect(log).toEqual(['writtenCards', 'getCard', 'casCard'])
    expect((await asking).answers).toEqual([{ id: 'colour', selected: ['Red'] }])
    const clicks = (await store.listAudit({ callId: 'three' })).filter((e) => e.kind === 'interaction')
    expect(clicks.map((e) => e.refused ?? false)).toEqual([false])
  })
})
