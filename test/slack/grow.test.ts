/**
 * A copy that grows a message on update hands its new reference back, so the answerer stores it
 * and an update after a restart edits that message instead of posting yet another one.
 */
import { afterEach, expect, it } from 'vitest'
import { SlackAdapter, type SlackRef } from '../../adapters/slack/index.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import { FakeSlack } from '../fakes/slack/server.js'

let fake: FakeSlack | undefined
const adapters: SlackAdapter[] = []
afterEach(async () => {
  for (const a of adapters.splice(0)) await a.stop()
  await fake?.close()
  fake = undefined
})

function adapter(f: FakeSlack): SlackAdapter {
  const a = new SlackAdapter({
    botToken: f.options.botToken,
    signingSecret: f.options.signingSecret,
    apiUrl: f.apiUrl,
    rateLimit: { perChannelIntervalMs: 0, pace: false },
  })
  adapters.push(a)
  return a
}

const posts = (f: FakeSlack) => f.calls.filter((c) => c.method === 'chat.postMessage' && c.ok).length

it('an update that adds a message returns the grown reference; after a restart it is edited, not re-posted', async () => {
  fake = await FakeSlack.start({ rateLimits: false })
  const before = adapter(fake)
  const card = newCard({ callId: 'grow', agentId: 'a', questions: [{ id: 'why', question: 'Why?' }], now: 0 })
  const ref = await before.post(card, { platform: 'slack', channel: 'C0GROW' })
  expect(ref.ts).toHaveLength(1)

  const custom = Array.from({ length: 2500 }, (_, i) => `word${i}`).join(' ')
  const answered: CardState = {
    ...card,
    status: 'answered',
    result: { answers: [{ id: 'why', selected: [], custom }] },
    answeredBy: { platform: 'slack', userId: 'U0ANN' },
    answeredAt: 1000,
  }
  const grown = (await before.update(answered, ref)) as SlackRef | undefined
  expect(grown?.ts.length).toBeGreaterThan(1)
  expect(grown?.ts.slice(0, 1)).toEqual(ref.ts)
  const messages = fake.messagesOf('grow').length
  expect(messages).toBe(grown?.ts.length)
  const postedBefore = posts(fake)

  // The same process, handed the stored (grown) reference: nothing counted twice.
  expect(await before.update({ ...answered, closedReason: 'x' }, grown)).toBeUndefined()

  // A restarted process knows only what the answerer stored.
  const after = adapter(fake)
  const renamed: CardState = { ...answered, answeredBy: { platform: 'slack', userId: 'U0BOB' } }
  expect(await after.update(renamed, grown)).toBeUndefined()
  expect(posts(fake)).toBe(postedBefore)
  expect(fake.messagesOf('grow')).toHaveLength(messages)
  expect(JSON.stringify(fake.messagesOf('grow').map((m) => m.blocks))).toContain('U0BOB')
})
