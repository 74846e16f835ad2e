/**
 * A burst of cards to one channel through the real Bolt app against the fake Slack with its
 * documented rate limits on (run 10 times faster on both sides, so the test takes seconds): every
 * card is posted once, in order, and a card answered during the burst goes dead while most of the
 * burst is still queued, because updates are paced apart from posts.
 */
import { afterEach, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { FakeSlack } from '../fakes/slack/server.js'
import { refFor, until } from '../helpers/service.js'
import { type Bridge, type SlackRig, startBridge, startSlackRig } from './rig.js'

const SPEED = 10
const CARDS = 40
const CHANNEL = 'C0BURST'

let bridge: Bridge | undefined
afterEach(async () => {
  await bridge?.close()
  bridge = undefined
})

const question = (i: number): AskUserQuestionItem => ({
  id: 'q',
  question: `Burst question ${i}?`,
  options: [{ label: 'Yes' }, { label: 'No' }],
})

it(`${CARDS} cards to one channel against the rate-limited fake: none lost, in order, an answer goes dead mid-burst`, async () => {
  const fake = await FakeSlack.start({ pingIntervalMs: 1000, limitSpeed: SPEED })
  const rig: SlackRig = await startSlackRig('http', { fake, rateLimit: { speed: SPEED } })
  bridge = await startBridge(rig, { destinations: [{ platform: 'slack', channel: CHANNEL }] })
  const b = bridge
  const agent = await b.agent()
  const asks: Promise<unknown>[] = []
  for (let i = 0; i < CARDS; i++) {
    const asking = b.service.ask({ questions: [question(i)], agent, wait: { callId: `burst-${i}` } })
    asking.catch(() => {}) // the unanswered ones end when the bridge closes
    asks.push(asking)
    // Each ask reaches the adapter before the next (so the order of posts is known).
    await until(() => b.chat.host.getCard(refFor(`burst-${i}`, 'agent-1')), `ask ${i} stored`)
  }
  // Answer card 3 as soon as it is up.
  await until(() => rig.element('burst-3', (r) => r.verb === 'choose' && r.o === 0), 'card 3 posted')
  const posts = () => fake.calls.filter((c) => c.method === 'chat.postMessage' && c.ok).length
  const postedWhenClicked = posts()
  await rig.use('burst-3', (r) => r.verb === 'choose' && r.o === 0, rig.people.ann)
  await expect(asks[3]).resolves.toEqual({ answers: [{ id: 'q', selected: ['Yes'] }] })
  await until(() => fake.liveActionIds('burst-3').length === 0, 'card 3 dead')
  // The update did not wait for the posts queued in the channel (in one lane with them, it
  // would have come after all of them).
  expect(CARDS - postedWhenClicked).toBeGreaterThan(10)
  expect(posts()).toBeLessThan(CARDS)

  await until(
    () => [...fake.messages.values()].filter((m) => m.channel === CHANNEL).length >= CARDS,
    'every card posted',
    6000,
  )
  const inChannel = [...fake.messages.values()].filter((m) => m.channel === CHANNEL)
  // None lost, none twice, in the order asked.
  expect(inChannel.map((m) => m.callId)).toEqual(Array.from({ length: CARDS }, (_, i) => `burst-${i}`))
  // Every 429 the fake sent was waited out and retried, none dropped.
  expect(rig.adapter.rateLimited).toBe(fake.limited)
}, 90_000)
