import { afterAll, beforeAll, expect, test } from 'vitest'
import { FakeDiscord } from '../fakes/discord/server.js'
import { act, cardPosted, request, startBridge, type TestBridge, until } from './helpers.js'

let fake: FakeDiscord
let b: TestBridge
beforeAll(async () => {
  fake = await new FakeDiscord().start()
  b = await startBridge({
    DISCORD_BOT_TOKEN: fake.token,
    DISCORD_API_URL: fake.apiUrl,
    DISCORD_CHANNEL_ID: fake.channelId,
  })
})
afterAll(async () => {
  await b?.close()
  await fake?.close()
})

test('serve starts the Discord adapter when its token is set; one question shows in Discord and the inbox', async () => {
  expect(b.bridge.adapters.map((a) => a.platform)).toEqual(['web', 'discord'])
  const asking = request(b.url, 'POST', '/v1/ask', {
    callId: 'both-1',
    questions: [
      { id: 'branch', question: 'Promote which branch?', options: [{ label: 'main' }, { label: 'next' }] },
    ],
  })
  await cardPosted(b.url, 'both-1')
  const message = await until(() =>
    fake.channelMessages().find((m) => JSON.stringify(m).includes('Promote which branch?')),
  )
  expect(message.components.length).toBeGreaterThan(0)
  const view = await request(b.url, 'GET', '/v1/questions/both-1')
  expect((view.body.posts as Array<{ platform: string }>).map((p) => p.platform).sort()).toEqual([
    'discord',
    'web',
  ])

  await act(b.url, 'both-1', { type: 'choose', questionId: 'branch', label: 'next' })
  expect((await asking).body.answers).toEqual([{ id: 'branch', selected: ['next'] }])
  // The Discord copy follows: the answer and who gave it, no live buttons.
  await until(() => {
    const m = fake.messages.get(message.id)
    return m && JSON.stringify(m).includes('Ana') && m.components.length === 0
  }, 'discord copy updated')
})
