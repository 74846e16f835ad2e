import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { destinationKey, isPostPending, POST_PENDING } from '../../src/answerer/adapter.js'
import { cardRef } from '../../src/card/codec.js'
import type { CardState, Person } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { openStore } from '../../src/store/index.js'
import type { Store } from '../../src/store/types.js'
import { MemoryAdapter } from '../fakes/memory-adapter.js'
import { startAnswerer } from '../helpers/answerer.js'
import { colour, keyFor, refFor, regions, tempDir, until } from '../helpers/service.js'

const ann: Person = { platform: 'slack', userId: 'U1', name: 'Ann' }
const bob: Person = { platform: 'slack', userId: 'U2', name: 'Bob' }

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(options: { store?: Store; destinations?: number; holdMaxMs?: number } = {}) {
  const adapter = new MemoryAdapter('slack')
  const destinations = Array.from({ length: options.destinations ?? 1 }, (_, i) => ({
    platform: 'slack' as const,
    channel: `C${i}`,
  }))
  const { store, service, chat, close } = await startAnswerer({
    adapters: [adapter],
    destinations,
    ...(options.store ? { store: options.store } : {}),
    ...(options.holdMaxMs ? { holdMaxMs: options.holdMaxMs } : {}),
  })
  cleanups.push(close)
  const agent = service.agents.ensure('agent')
  const click = (callId: string, label: string, person: Person, id?: string) =>
    chat.host.handle({
      ...refFor(callId, 'agent'),
      interaction: {
        id: id ?? `${person.userId}-${label}-${Math.random()}`,
        actor: person,
        action: { type: 'choose', questionId: 'colour', label },
        at: Date.now(),
      },
    })
  return { store, service, adapter, chat, agent, click, close }
}

describe('chat answerer', () => {
  it('mirrors the card to every destination; the first answer wins and every copy is updated', async () => {
    const { service, adapter, agent, click } = await setup({ destinations: 3 })
    const asking = service.ask({ questions: [colour], agent, wait: { callId: 'm' } })
    await until(() => adapter.messagesFor('m').length === 3, 'three copies')
    expect(new Set(adapter.messagesFor('m').map((m) => m.destination.channel))).toEqual(
      new Set(['C0', 'C1', 'C2']),
    )
    const [first, second] = await Promise.all([click('m', 'Red', ann), click('m', 'Blue', bob)])
    expect([first.ok, second.ok].sort()).toEqual([false, true])
    const answer = await asking
    const loser = first.ok ? second : first
    expect(loser.message).toMatch(/already answered by (Ann|Bob)/)
    await until(() => adapter.messagesFor('m').every((m) => m.components.length === 0), 'copies finished')
    for (const m of adapter.messagesFor('m')) expect(m.text).toContain(answer.answers[0]?.selected[0])
  })

  it('two agents using one callId: each reference finds only its own agent’s card, and a click answers only it', async () => {
    const { service, adapter, agent, chat, click } = await setup()
    const other = service.agents.ensure('other')
    const mine = service.ask({ questions: [colour], agent, wait: { callId: 'same' } })
    const theirs = service.ask({ questions: [colour], agent: other, wait: { callId: 'same' } })
    await until(() => adapter.messagesFor('same').length === 2, 'both cards posted')
    expect((await chat.host.getCard(refFor('same', 'agent')))?.agentId).toBe('agent')
    expect((await chat.host.getCard(refFor('same', 'other')))?.agentId).toBe('other')
    expect(await chat.host.getCard(refFor('same', 'nobody'))).toBeUndefined()
    expect((await click('same', 'Red', ann)).ok).toBe(true)
    expect(await mine).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    expect((await chat.host.getCard(refFor('same', 'other')))?.status).toBe('open')
    const outcome = await chat.host.handle({
      ...refFor('same', 'other'),
      interaction: {
        id: 'b-1',
        actor: bob,
        action: { type: 'choose', questionId: 'colour', label: 'Blue' },
        at: Date.now(),
      },
    })
    expect(outcome.ok).toBe(true)
    expect(await theirs).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
  })

  it('a change that lands while a copy is being posted still reaches that copy', async () => {
    const { service, adapter, agent, chat } = await setup()
    // The platform is slow to answer the post; a click lands on the card meanwhile.
    const post = adapter.post.bind(adapter)
    adapter.post = async (card, destination) => {
      await chat.host.handle({
        ...cardRef(card),
        interaction: { id: 'early', actor: ann, action: { type: 'hold' }, at: 1 },
      })
      return post(card, destination)
    }
    void service.askTimed({ questions: [colour], agent }, 'slow-post', 60_000).catch(() => {})
    await until(() => adapter.messagesFor('slow-post')[0]?.updates === 1, 'copy updated after the post')
    await service.cancel(await keyFor(service.store, 'slow-post'))
  })

  it('a click on the first copy while later copies are still being posted answers the ask', async () => {
    const { service, adapter, agent, click, chat } = await setup({ destinations: 2 })
    const post = adapter.post.bind(adapter)
    let posts = 0
    adapter.post = async (card, destination) => {
      const ref = await post(card, destination)
      // Someone answers the first copy before the second one is out.
      if (++posts === 1) {
        void click(card.callId, 'Red', ann)
        await until(async () => (await chat.host.getCard(cardRef(card)))?.status === 'answered', 'answered')
      }
      return ref
    }
    await expect(service.ask({ questions: [colour], agent, wait: { callId: 'quick' } })).resolves.toEqual({
      answers: [{ id: 'colour', selected: ['Red'] }],
    })
  })

  it('one failing destination does not stop the others; none at all is PROVIDER_ERROR', async () => {
    const { service, adapter, agent, click } = await setup({ destinations: 2 })
    adapter.failPosts = 1
    const asking = service.ask({ questions: [colour], agent, wait: { callId: 'partial' } })
    await until(() => adapter.messagesFor('partial').length === 1, 'one copy')
    await click('partial', 'Red', ann)
    await expect(asking).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    adapter.failPosts = 2
    await expect(service.ask({ questions: [colour], agent, wait: { callId: 'none' } })).rejects.toMatchObject(
      {
        code: 'PROVIDER_ERROR',
      },
    )
  })

  it('a click decoded on the card the adapter read is applied from that read, and a stale read still counts every click', async () => {
    const { service, agent, chat, store } = await setup()
    void service.ask({ questions: [regions], agent, wait: { callId: 'read' } }).catch(() => {})
    await until(async () => store.getCard(await keyFor(store, 'read')), 'card')
    const toggle = (id: string, label: string) => ({
      ...refFor('read', 'agent'),
      interaction: {
        id,
        actor: ann,
        action: { type: 'toggle' as const, questionId: 'regions', label },
        at: 1,
      },
    })
    const reads = vi.spyOn(store, 'findCards')
    const remembered = vi.spyOn(store, 'writtenCards')
    const lookups = () => reads.mock.calls.length + remembered.mock.calls.length
    const seen = await chat.host.getCard(refFor('read', 'agent'))
    expect(seen).toBeDefined()
    // The card as this process wrote it: found without reading it back.
    expect(reads).not.toHaveBeenCalled()
    await chat.host.handle(toggle('t1', 'eu'), seen)
    // The adapter's lookup is the only one: the click was not looked up again before it was written.
    expect(lookups()).toBe(1)
    // `seen` is now stale (the card moved on): the second click, decoded on it, loses the
    // compare-and-set, reads the card again and is applied to what is stored, not to `seen`.
    await chat.host.handle(toggle('t2', 'us'), seen)
    expect((await chat.host.getCard(refFor('read', 'agent')))?.drafts.regions?.selected.sort()).toEqual([
      'eu',
      'us',
    ])
    // A card the host did not hand out is no shortcut: it is looked up again.
    reads.mockClear()
    remembered.mockClear()
    const copy = structuredClone(seen as CardState)
    await chat.host.handle(toggle('t3', 'eu'), copy)
    expect(lookups()).toBe(1)
    expect((await chat.host.getCard(refFor('read', 'agent')))?.drafts.regions?.selected).toEqual(['us'])
  })

  it('the same interaction delivered twice is applied once', async () => {
    const { service, agent, chat, store } = await setup()
    void service.ask({ questions: [regions], agent, wait: { callId: 'dup' } }).catch(() => {})
    await until(async () => store.getCard(await keyFor(store, 'dup')), 'card')
    const toggle = {
      ...refFor('dup', 'agent'),
      interaction: {
        id: 'slack-retry-1',
        actor: ann,
        action: { type: 'toggle' as const, questionId: 'regions', label: 'eu' },
        at: 1,
      },
    }
    await chat.host.handle(toggle)
    await chat.host.handle(toggle)
    expect((await chat.host.getCard(refFor('dup', 'agent')))?.drafts.regions?.selected).toEqual(['eu'])
    expect((await store.listAudit({ callId: 'dup' })).filter((e) => e.kind === 'interaction')).toHaveLength(1)
  })

  /** Fake clock and timers that still move on their own (so polling works), and can jump ahead. */
  function fakeTime() {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true })
    // Cleanups run in reverse: real timers come back last.
    cleanups.unshift(() => {
      vi.useRealTimers()
    })
  }

  it('take my time holds a timed wait past its deadline, and releasing it lets it time out', async () => {
    fakeTime()
    const { service, agent, chat, store } = await setup()
    let result: unknown
    const asking = service.askTimed({ questions: [colour], agent }, 'hold', 60_000).then((r) => (result = r))
    await until(async () => store.getCard(await keyFor(store, 'hold')), 'card')
    const held = await chat.host.handle({
      ...refFor('hold', 'agent'),
      interaction: { id: 'h1', actor: ann, action: { type: 'hold' }, at: 1 },
    })
    expect(held.ok).toBe(true)
    expect(held.card?.holders).toEqual([ann])
    // Two minutes past the one-minute deadline (every due timer has run): still open, Ann holds it.
    await vi.advanceTimersByTimeAsync(180_000)
    expect(result).toBeUndefined()
    expect((await chat.host.getCard(refFor('hold', 'agent')))?.status).toBe('open')
    await chat.host.handle({
      ...refFor('hold', 'agent'),
      interaction: { id: 'h2', actor: ann, action: { type: 'release' }, at: 2 },
    })
    await asking
    expect(result).toEqual({ pending: true, callId: 'hold' })
    await until(
      async () => (await chat.host.getCard(refFor('hold', 'agent')))?.status === 'continued',
      'continued',
    )
  })

  it('take my time then answering inside the window returns the answer', async () => {
    fakeTime()
    const { service, agent, chat, store, click } = await setup()
    const asking = service.askTimed({ questions: [colour], agent }, 'hold2', 60_000)
    await until(async () => store.getCard(await keyFor(store, 'hold2')), 'card')
    await chat.host.handle({
      ...refFor('hold2', 'agent'),
      interaction: { id: 'h1', actor: ann, action: { type: 'hold' }, at: 1 },
    })
    await vi.advanceTimersByTimeAsync(180_000)
    await click('hold2', 'Blue', ann)
    await expect(asking).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
  })

  it('a hold ends by itself after holdMaxMs (a person who walked away)', async () => {
    const { service, agent, chat, store } = await setup({ holdMaxMs: 400 })
    const asking = service.askTimed({ questions: [colour], agent }, 'walk', 200)
    await until(async () => store.getCard(await keyFor(store, 'walk')), 'card')
    await chat.host.handle({
      ...refFor('walk', 'agent'),
      interaction: { id: 'h1', actor: ann, action: { type: 'hold' }, at: 1 },
    })
    await expect(asking).resolves.toEqual({ pending: true, callId: 'walk' })
    await until(
      async () => (await chat.host.getCard(refFor('walk', 'agent')))?.holders.length === 0,
      'holder dropped',
    )
  })

  it('a question answered through another answerer says so on every copy', async () => {
    const { service, adapter, agent } = await setup()
    // A local terminal UI, first in a host's own chain, answers after the chat card is posted.
    const cards = service.ask({ questions: [colour], agent, wait: { callId: 'elsewhere' } })
    await until(() => adapter.messagesFor('elsewhere').length === 1, 'posted')
    service.emit('answered', { agentId: 'agent', callId: 'elsewhere' }, [{ id: 'colour', selected: ['Red'] }])
    await until(
      () => /answered elsewhere/i.test(adapter.messagesFor('elsewhere')[0]?.text ?? ''),
      'elsewhere shown',
    )
    await service.cancel(await keyFor(service.store, 'elsewhere'))
    await cards.catch(() => {})
  })

  it('agent text with markup, emoji and 10,000-character labels does not break a card; the full label is the answer', async () => {
    const { service, adapter, agent, chat } = await setup()
    const long = 'L'.repeat(10_000)
    const weird: AskUserQuestionItem = {
      id: 'colour',
      question: '<!channel> **Pick** 🎉 @everyone',
      options: [{ label: long }, { label: '<@U999>' }],
    }
    const asking = service.ask({ questions: [weird], agent, wait: { callId: 'weird' } })
    await until(() => adapter.messagesFor('weird').length === 1, 'posted')
    await chat.host.handle({
      ...refFor('weird', 'agent'),
      interaction: {
        id: 'w1',
        actor: ann,
        action: { type: 'choose', questionId: 'colour', label: long },
        at: 1,
      },
    })
    expect((await asking).answers[0]?.selected[0]).toBe(long)
  })
})

describe('late replies and the cards', () => {
  it('a late answer given through the API marks the cards answered elsewhere', async () => {
    const { service, adapter, agent } = await setup()
    // Long enough for the card to be posted: a window that closed first would post none.
    expect(await service.askTimed({ questions: [colour], agent }, 'api-late', 1000)).toMatchObject({
      pending: true,
    })
    await until(() => /continued/.test(adapter.messagesFor('api-late')[0]?.text ?? ''), 'continued')
    expect(
      await service.answer('agent', 'api-late', { answers: [{ id: 'colour', selected: ['Red'] }] }),
    ).toBe(true)
    await until(() => /answered elsewhere/i.test(adapter.messagesFor('api-late')[0]?.text ?? ''), 'elsewhere')
    expect(adapter.messagesFor('api-late')[0]?.components).toEqual([])
  })

  it('a discarded reply makes the card answerable again; the next answer is a new reply', async () => {
    const { service, adapter, agent, click, chat } = await setup()
    expect(await service.askTimed({ questions: [colour], agent }, 'again', 1000)).toMatchObject({
      pending: true,
    })
    await until(
      async () => (await chat.host.getCard(refFor('again', 'agent')))?.status === 'continued',
      'continued',
    )
    await click('again', 'Red', ann)
    await until(async () => (await service.replies('agent')).length === 1, 'first reply')
    expect(await service.discardReply('agent', 'again')).toBe(true)
    await until(
      async () => (await chat.host.getCard(refFor('again', 'agent')))?.status === 'continued',
      'reopened',
    )
    await until(() => (adapter.messagesFor('again')[0]?.components.length ?? 0) > 0, 'live again')
    await click('again', 'Blue', bob)
    const replies = await until(async () => {
      const r = await service.replies('agent')
      return r.length === 1 ? r : undefined
    }, 'second reply')
    expect(replies[0]?.reply.payload.answers).toEqual([{ id: 'colour', selected: ['Blue'] }])
  })
})

describe('restart', () => {
  it('card state, who answered and continued cards survive a new process; a re-attached blocking ask posts no second card', async () => {
    const { dir, cleanup } = tempDir()
    cleanups.push(cleanup)
    const file = join(dir, 'askbridge.db')

    // First process: a blocking ask with a partial batch, a continued timed ask, and an answered one.
    const one = await setup({ store: openStore(file) })
    void one.service
      .ask({ questions: [colour, regions], agent: one.agent, wait: { callId: 'blocking' } })
      .catch(() => {})
    await until(() => one.adapter.messagesFor('blocking').length === 1, 'posted')
    await one.chat.host.handle({
      ...refFor('blocking', 'agent'),
      interaction: {
        id: 'p1',
        actor: ann,
        action: { type: 'choose', questionId: 'colour', label: 'Red' },
        at: 1,
      },
    })
    expect(await one.service.askTimed({ questions: [colour], agent: one.agent }, 'timed', 1000)).toEqual({
      pending: true,
      callId: 'timed',
    })
    const answered = one.service.ask({ questions: [colour], agent: one.agent, wait: { callId: 'done' } })
    await until(() => one.adapter.messagesFor('done').length === 1, 'posted')
    await one.click('done', 'Blue', bob)
    await answered
    // The process dies: its in-memory platform goes with it; the store stays.
    await one.chat.stop()
    await one.store.close()

    // Second process on the same file, its adapter seeded with the messages posted before.
    const adapter = new MemoryAdapter('slack')
    for (const [id, m] of one.adapter.messages) adapter.messages.set(id, { ...m })
    const { service, chat, close } = await startAnswerer({
      store: openStore(file),
      adapters: [adapter],
      destinations: [{ platform: 'slack', channel: 'C0' }],
    })
    cleanups.push(close)
    await service.recover()

    expect((await chat.host.getCard(refFor('done', 'agent')))?.answeredBy).toEqual(bob)
    expect((await chat.host.getCard(refFor('blocking', 'agent')))?.drafts.colour?.selected).toEqual(['Red'])
    expect((await chat.host.getCard(refFor('timed', 'agent')))?.status).toBe('continued')

    // The blocking ask re-attaches with the same agent and call: same card, no new message.
    const agent = service.agents.ensure('agent')
    const before = adapter.messages.size
    const again = service.ask({ questions: [colour, regions], agent, wait: { callId: 'blocking' } })
    await until(() => service.inflight('agent', 'blocking') !== undefined, 're-attached')
    await chat.host.handle({
      ...refFor('blocking', 'agent'),
      interaction: {
        id: 'p2',
        actor: bob,
        action: { type: 'set', questionId: 'regions', labels: ['us'] },
        at: 2,
      },
    })
    await chat.host.handle({
      ...refFor('blocking', 'agent'),
      interaction: { id: 'p3', actor: bob, action: { type: 'submit' }, at: 3 },
    })
    expect(await again).toEqual({
      answers: [
        { id: 'colour', selected: ['Red'] },
        { id: 'regions', selected: ['us'] },
      ],
    })
    // The answer came through the re-attached ask, which found the card and its copies: no new message.
    expect(adapter.messages.size).toBe(before)

    // The continued card still works: a click becomes a late reply.
    const late = await chat.host.handle({
      ...refFor('timed', 'agent'),
      interaction: {
        id: 't1',
        actor: ann,
        action: { type: 'choose', questionId: 'colour', label: 'Red' },
        at: 4,
      },
    })
    expect(late.ok).toBe(true)
    // Handed over once the click is answered (the answer is in the card already).
    await until(async () => (await service.replies('agent')).length > 0, 'late reply')
    expect((await service.replies('agent')).map((r) => r.callId)).toEqual(['timed'])
    const card = (await chat.host.getCard(refFor('timed', 'agent'))) as CardState
    expect(card.status).toBe('answered')
  })
})

describe('a copy another process is posting', () => {
  it('is posted once when that process dies before posting: asked while its claim holds, taken over once it lapses', async () => {
    const { store, service, adapter, agent, click } = await setup()
    // Another bridge claimed this copy and died before posting it; its claim runs out shortly.
    const key = { agentId: agent.id, callId: 'held' }
    const destKey = destinationKey({ platform: 'slack', channel: 'C0' })
    const now = Date.now()
    const claimed = await store.claimPost(
      { ...key, destKey, platform: 'slack', ref: POST_PENDING, createdAt: now },
      { owner: 'a-bridge-that-died', until: now + 300, now },
    )
    expect(claimed).toEqual({ createdAt: now, taken: false })
    const asking = service.ask({ questions: [colour], agent, wait: { callId: 'held' } })
    // While the claim holds nothing is posted here; once it lapses this bridge posts the copy.
    const [message] = await until(() => {
      const m = adapter.messagesFor('held')
      return m.length > 0 ? m : undefined
    }, 'the copy posted after the claim lapsed')
    // The copy's record follows its post (a commit of its own): once written, it is the only one.
    const posts = await until(async () => {
      const listed = await store.listPosts(key)
      return listed.every((p) => !isPostPending(p.ref)) ? listed : undefined
    }, 'the copy recorded as posted')
    expect(posts.map((p) => isPostPending(p.ref))).toEqual([false])
    expect((await click('held', 'Red', ann)).ok).toBe(true)
    await expect(asking).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    expect(adapter.messagesFor('held')).toEqual([message])
  })
})
