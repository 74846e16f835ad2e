/**
 * A burst of cards to one channel through the real discord.js Client against the fake Discord with
 * its rate limits on (windows 10 times shorter, so the test takes seconds; discord.js learns them
 * from the headers): every card is posted once, in order, and a card settled during the burst is
 * edited while most of the burst still waits, because edits do not queue behind posts.
 */
import { afterEach, expect, it } from 'vitest'
import type { DiscordRef } from '../../adapters/discord/index.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { keyFor, refFor, until } from '../helpers/service.js'
import { type DiscordRig, discordRig } from './rig.js'

const CARDS = 40

let rig: DiscordRig | undefined
afterEach(async () => {
  await rig?.close()
  rig = undefined
})

const question = (i: number): AskUserQuestionItem => ({
  id: 'q',
  question: `Burst question ${i}?`,
  options: [{ label: 'Yes' }, { label: 'No' }],
})

it(`${CARDS} cards to one channel against the rate-limited fake: none lost, in order, a settled card changes mid-burst`, async () => {
  rig = await discordRig({ rateLimits: true, limitSpeed: 10 })
  const r = rig
  const agent = await r.service.agents.ensure('agent-1')
  const asks: Promise<unknown>[] = []
  for (let i = 0; i < CARDS; i++) {
    const asking = r.service.ask({ questions: [question(i)], agent, wait: { callId: `burst-${i}` } })
    asking.catch(() => {}) // the unanswered ones end when the rig closes
    asks.push(asking)
    await until(() => r.chat.host.getCard(refFor(`burst-${i}`, 'agent-1')), `ask ${i} stored`)
  }
  const ref = async (i: number) =>
    (await r.store.listPosts(await keyFor(r.store, `burst-${i}`)))[0]?.ref as DiscordRef | undefined
  await until(async () => (await ref(3))?.messageIds?.length, 'card 3 posted')
  const posts = () =>
    r.fake.requests.filter((q) => q.method === 'POST' && q.status === 200 && /\/messages$/.test(q.path))
      .length
  const postedWhenCancelled = posts()
  await r.service.cancel(await keyFor(r.store, 'burst-3'))
  await until(async () => !(await r.hasLiveComponents('burst-3')), 'card 3 edited')
  // The edit did not wait for the posts queued in the channel (in one queue with them, it would
  // have come after all of them).
  expect(CARDS - postedWhenCancelled).toBeGreaterThan(10)
  expect(posts()).toBeLessThan(CARDS)

  await until(() => r.fake.channelMessages().length >= CARDS, 'every card posted', 6000)
  // The fake has the last message a moment before the bridge has stored its reference.
  const firsts = () =>
    Promise.all(Array.from({ length: CARDS }, async (_, i) => (await ref(i))?.messageIds?.[0]))
  await until(async () => (await firsts()).every(Boolean), 'every post recorded', 6000)
  const first = await firsts()
  // None lost, none twice, in the order asked (snowflakes grow with time).
  expect(r.fake.channelMessages()).toHaveLength(CARDS)
  expect(new Set(first).size).toBe(CARDS)
  const order = first.map((id) => BigInt(id ?? '0'))
  expect(order.every((id, i) => i === 0 || id > (order[i - 1] as bigint))).toBe(true)
  // discord.js read the headers and waited: any 429 it met was retried, none lost.
  expect(r.fake.channelMessages()).toHaveLength(CARDS)
}, 90_000)

it('a newer edit of a message replaces one still waiting: only the newest is sent', async () => {
  rig = await discordRig()
  const r = rig
  const message = (content: string) => ({
    content,
    embeds: [],
    components: [],
    allowed_mentions: { parse: [] },
  })
  const sent = await r.adapter.transport.send(r.fake.channelId, message('v0'))
  // v1 goes at once; v2 waits for it and is replaced by v3; every caller settles.
  await Promise.all(
    ['v1', 'v2', 'v3'].map((v) => r.adapter.transport.edit(r.fake.channelId, sent.id, message(v))),
  )
  const patches = r.fake.requests
    .filter((q) => q.method === 'PATCH')
    .map((q) => (q.body as { content: string }).content)
  expect(patches).toEqual(['v1', 'v3'])
  expect(r.adapter.transport.superseded).toBe(1)
  expect(r.fake.channelMessages().find((m) => m.id === sent.id)?.content).toBe('v3')
})
