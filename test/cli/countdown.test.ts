/** The CLI's live countdown names who holds the wait, read from the bridge while it waits. */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { runAsk } from '../../src/cli/ask.js'
import { act, request, startBridge, type TestBridge, until } from '../server/helpers.js'

let b: TestBridge
beforeAll(async () => {
  b = await startBridge()
})
afterAll(async () => {
  await b.close()
})

test('while someone takes their time, the countdown says who holds the wait instead of time left', async () => {
  let stderr = ''
  const running = runAsk(
    ['--question', 'Roll back the release?', '--option', 'Yes', '--option', 'No', '--timeout', '10m'],
    {
      env: { ASKBRIDGE_URL: b.url },
      stdout: () => {},
      stderr: (text) => {
        stderr += text
      },
      tty: true,
      statusEveryMs: 20,
    },
  )
  const card = await until(async () => {
    const cards = (await request(b.url, 'GET', '/inbox/api/cards')).body.cards ?? []
    return cards.find((c) => c.questions[0]?.question === 'Roll back the release?')
  }, 'card')
  expect(stderr).toMatch(/waiting for an answer… \d+m \d+s left/)
  expect(stderr).not.toContain('held by')
  await act(b.url, card.callId, { type: 'hold' }, 'Grace Hopper')
  await until(() => stderr.includes('held by Grace Hopper while they answer'), 'holder named')
  await act(
    b.url,
    card.callId,
    { type: 'choose', questionId: card.questions[0]?.id, label: 'Yes' },
    'Grace Hopper',
  )
  expect(await running).toBe(0)
})
