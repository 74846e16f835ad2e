/**
 * No duplicate card across a crash at any instant. The intent to post is stored before the
 * post, with a marker Slack keeps (message metadata); after a restart a card whose intent has
 * no reference is looked for in the channel's history before it is posted again, and a copy
 * posted twice anyway is retired.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DiscordAdapter } from '../../adapters/discord/index.js'
import { isPostPending, POST_PENDING } from '../../src/answerer/adapter.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import type { Store } from '../../src/store/types.js'
import { FakeDiscord } from '../fakes/discord/server.js'
import { until } from '../helpers/service.js'
import { type SlackRig, startSlackRig } from '../slack/rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}
const destination = { platform: 'slack' as const, channel: 'C0QUESTIONS' }
const destKey = 'slack:C0QUESTIONS:'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A store file and a timed call whose card exists, as a process left them when it died. */
async function leftBehind(callId: string, detail?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'askbridge-dup-'))
  const path = join(dir, 'bridge.db')
  const store = openStore(`sqlite:${path}`)
  const question = detail ? { ...colour, detail } : colour
  await store.append({
    type: 'asked',
    callId,
    agentId: 'agent-1',
    questions: [question],
    timed: true,
    deadline: Date.now() + 60_000,
  })
  const card = newCard({
    callId,
    agentId: 'agent-1',
    questions: [question],
    now: Date.now(),
    deadline: Date.now() + 60_000,
    quorum: 1,
    route: 'default',
  })
  card.destinations = [destination]
  await store.casCard({ agentId: 'agent-1', callId }, 0, card)
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  return { store, card, path }
}

/** "Restart": a new service and answerer on the store, with the rig's adapter. */
async function restart(store: Store, rig: SlackRig) {
  const service = new UserQuestionService({ store })
  await service.recover()
  const chat = new ChatAnswerer({
    service,
    adapters: [rig.adapter],
    destinations: [destination],
    escalationIntervalMs: 0,
  })
  service.use(chat.answerer)
  await chat.start()
  cleanups.push(async () => {
    await service.close()
    await chat.stop()
    await store.close()
  })
  return { service, chat }
}

/** Copies of a call's card in the fake Slack: first messages that still carry buttons. */
function liveCopies(rig: SlackRig, callId: string): number {
  return rig.fake.messagesOf(callId).filter((m) => m.blocks.some((b) => b.type === 'actions')).length
}

async function rigUp() {
  const rig = await startSlackRig('socket')
  cleanups.push(() => rig.close())
  return rig
}

describe('a crash between posting and storing the reference', () => {
  it('the copy Slack accepted is found by its metadata and adopted, not posted again', async () => {
    const rig = await rigUp()
    const { store, card } = await leftBehind('dup-adopt')
    // The dead process stored its intent, Slack took the post, the reference never got stored.
    await store.addPost({
      agentId: 'agent-1',
      callId: card.callId,
      destKey,
      platform: 'slack',
      ref: POST_PENDING,
      createdAt: Date.now(),
    })
    await rig.adapter.post(card, destination, `agent-1|${card.callId}|${destKey}`)
    expect(liveCopies(rig, 'dup-adopt')).toBe(1)

    const { service } = await restart(store, rig)
    const [post] = await store.listPosts({ agentId: 'agent-1', callId: 'dup-adopt' })
    expect(isPostPending(post?.ref)).toBe(false)
    expect(rig.fake.calls.some((c) => c.method === 'conversations.history')).toBe(true)
    expect(liveCopies(rig, 'dup-adopt')).toBe(1)
    // The adopted copy is the live one: a click on it answers, and it is updated.
    await rig.connected()
    await rig.use('dup-adopt', (r) => r.verb === 'choose' && r.o === 1, rig.people.ann)
    await until(async () => (await service.replies('agent-1')).length === 1, 'late reply queued')
    await until(() => liveCopies(rig, 'dup-adopt') === 0, 'the copy shows the answer')
  })

  it('an intent with nothing posted is posted once after the restart', async () => {
    const rig = await rigUp()
    const { store, card } = await leftBehind('dup-none')
    await store.addPost({
      agentId: 'agent-1',
      callId: card.callId,
      destKey,
      platform: 'slack',
      ref: POST_PENDING,
      createdAt: Date.now(),
    })
    await restart(store, rig)
    expect(liveCopies(rig, 'dup-none')).toBe(1)
    const [post] = await store.listPosts({ agentId: 'agent-1', callId: 'dup-none' })
    expect(isPostPending(post?.ref)).toBe(false)
  })

  it('a card never posted at all (a crash before the intent) is posted once after the restart', async () => {
    const rig = await rigUp()
    const { store } = await leftBehind('dup-never')
    await restart(store, rig)
    expect(liveCopies(rig, 'dup-never')).toBe(1)
  })

  it('a copy that exists twice anyway is retired: one live copy stays', async () => {
    const rig = await rigUp()
    const { store, card } = await leftBehind('dup-twice')
    await store.addPost({
      agentId: 'agent-1',
      callId: card.callId,
      destKey,
      platform: 'slack',
      ref: POST_PENDING,
      createdAt: Date.now(),
    })
    await rig.adapter.post(card, destination, `agent-1|${card.callId}|${destKey}`)
    await rig.adapter.post(card, destination, `agent-1|${card.callId}|${destKey}`)
    expect(liveCopies(rig, 'dup-twice')).toBe(2)
    await restart(store, rig)
    expect(liveCopies(rig, 'dup-twice')).toBe(1)
    expect(rig.fake.calls.filter((c) => c.method === 'chat.delete' && c.ok)).toHaveLength(1)
  })

  it('a multi-message card cut short mid-post is taken down and posted whole, once', async () => {
    const rig = await rigUp()
    const plan = Array.from({ length: 120 }, (_, i) => `## Step ${i}\n\n${'detail '.repeat(40)}`).join('\n\n')
    const { store, card } = await leftBehind('dup-parts', plan)
    await store.addPost({
      agentId: 'agent-1',
      callId: card.callId,
      destKey,
      platform: 'slack',
      ref: POST_PENDING,
      createdAt: Date.now(),
    })
    // The process died after the first part: Slack has part 0 of several, nothing else.
    await rig.adapter.post(card, destination, `agent-1|${card.callId}|${destKey}`)
    const [first, ...rest] = rig.fake.messagesOf('dup-parts')
    expect(rest.length).toBeGreaterThan(0)
    for (const m of rest) rig.fake.messages.delete(`${m.channel}:${m.ts}`)
    await restart(store, rig)
    // The stray first part is gone (it would be a second, broken copy); a whole copy is posted.
    expect(rig.fake.messages.has(`${first?.channel}:${first?.ts}`)).toBe(false)
    expect(liveCopies(rig, 'dup-parts')).toBe(1)
    const [post] = await store.listPosts({ agentId: 'agent-1', callId: 'dup-parts' })
    const ts = (post?.ref as { ts?: string[] } | undefined)?.ts ?? []
    expect(ts.length).toBeGreaterThan(1)
    expect(rig.fake.messagesOf('dup-parts')).toHaveLength(ts.length)
  })
})

describe('an acknowledged in-window answer after a crash', () => {
  it('reaches the agent as a late reply when the process died before recording it', async () => {
    const rig = await rigUp()
    const { store, card } = await leftBehind('in-window')
    // The click was stored on the card (and acknowledged); the ask's 'answered' never was.
    const key = { agentId: 'agent-1', callId: 'in-window' }
    const answered: CardState = {
      ...card,
      status: 'answered',
      result: { answers: [{ id: 'colour', selected: ['Blue'] }] },
      answeredAt: Date.now(),
    }
    const current = await store.getCard(key)
    await store.casCard(key, current?.version ?? 0, answered)
    const { service } = await restart(store, rig)
    const replies = await until(async () => {
      const r = await service.replies('agent-1')
      return r.length > 0 ? r : undefined
    }, 'late reply')
    expect(replies[0]?.reply.payload.answers).toEqual([{ id: 'colour', selected: ['Blue'] }])
  })
})

describe('Discord: a crash between posting and storing the reference', () => {
  async function discordUp() {
    const fake = await new FakeDiscord().start()
    const adapter = new DiscordAdapter({ token: fake.token, apiUrl: fake.apiUrl })
    cleanups.push(async () => {
      await fake.close()
    })
    const dest = { platform: 'discord' as const, channel: fake.channelId }
    const key = (callId: string) => `agent-1|${callId}|discord:${fake.channelId}:`
    const live = (callId: string) =>
      fake
        .channelMessages()
        .filter((m) => m.components.length > 0 && JSON.stringify(m.components).includes(callId)).length
    /** Restart on the store with a fresh adapter (the old process is gone). */
    const restartOn = async (store: Store) => {
      const service = new UserQuestionService({ store })
      await service.recover()
      const fresh = new DiscordAdapter({ token: fake.token, apiUrl: fake.apiUrl })
      const chat = new ChatAnswerer({
        service,
        adapters: [fresh],
        destinations: [dest],
        escalationIntervalMs: 0,
      })
      service.use(chat.answerer)
      await chat.start()
      cleanups.push(async () => {
        await service.close()
        await chat.stop()
        await store.close()
      })
    }
    return { fake, adapter, dest, key, live, restartOn }
  }

  async function discordLeftBehind(callId: string, channel: string) {
    const left = await leftBehind(callId)
    left.card.destinations = [{ platform: 'discord', channel }]
    const key = { agentId: 'agent-1', callId }
    const current = await left.store.getCard(key)
    await left.store.casCard(key, current?.version ?? 0, left.card)
    return left
  }

  it('the posted copy is found by its components and adopted; a nonce keeps a quick repost from doubling it', async () => {
    const d = await discordUp()
    const { store, card } = await discordLeftBehind('ddup-adopt', d.fake.channelId)
    const destKey = `discord:${d.fake.channelId}:`
    await store.addPost({
      agentId: 'agent-1',
      callId: card.callId,
      destKey,
      platform: 'discord',
      ref: POST_PENDING,
      createdAt: Date.now(),
    })
    await d.adapter.post(card, d.dest, d.key(card.callId))
    // The same part posted again with the same nonce comes back as the same message.
    await d.adapter.post(card, d.dest, d.key(card.callId))
    expect(d.live('ddup-adopt')).toBe(1)
    await d.restartOn(store)
    expect(d.live('ddup-adopt')).toBe(1)
    const [post] = await store.listPosts({ agentId: 'agent-1', callId: 'ddup-adopt' })
    expect(isPostPending(post?.ref)).toBe(false)
    expect(d.fake.requests.some((r) => r.method === 'GET' && /\/channels\/\d+\/messages$/.test(r.path))).toBe(
      true,
    )
  })

  it('a copy that exists twice anyway (no nonce) is retired to one', async () => {
    const d = await discordUp()
    const { store, card } = await discordLeftBehind('ddup-twice', d.fake.channelId)
    const destKey = `discord:${d.fake.channelId}:`
    await store.addPost({
      agentId: 'agent-1',
      callId: card.callId,
      destKey,
      platform: 'discord',
      ref: POST_PENDING,
      createdAt: Date.now(),
    })
    await d.adapter.post(card, d.dest)
    await d.adapter.post(card, d.dest)
    expect(d.live('ddup-twice')).toBe(2)
    await d.restartOn(store)
    expect(d.live('ddup-twice')).toBe(1)
  })
})
