/**
 * Starting against Slack with a wrong token fails at once, saying which token Slack refused (and
 * never echoing it), in both transports.
 */
import { afterEach, expect, it } from 'vitest'
import { SlackAdapter } from '../../adapters/slack/index.js'
import type { CardHost } from '../../src/answerer/adapter.js'
import { FakeSlack } from '../fakes/slack/server.js'

const host: CardHost = {
  handle: async () => ({ ok: false, message: 'unused' }),
  getCard: async () => undefined,
}

let fake: FakeSlack | undefined
afterEach(async () => {
  await fake?.close()
  fake = undefined
})

it.each([
  [
    'socket',
    { botToken: 'xoxb-wrong', appToken: 'xapp-test-token' },
    /bot token \(SLACK_BOT_TOKEN\): invalid_auth/,
  ],
  [
    'socket',
    { botToken: 'xoxb-fake', appToken: 'xapp-not-the-token' },
    /app-level token \(SLACK_APP_TOKEN\): invalid_auth/,
  ],
  ['http', { botToken: 'xoxb-wrong', signingSecret: 's' }, /bot token \(SLACK_BOT_TOKEN\): invalid_auth/],
] as const)('%s mode: a refused token is named at start', async (_mode, tokens, message) => {
  fake = await FakeSlack.start()
  const adapter = new SlackAdapter({ ...tokens, apiUrl: fake.apiUrl })
  const started = adapter.start(host)
  await expect(started).rejects.toThrow(message)
  await started.catch((error: Error) => {
    expect(error.message).not.toContain('not-the-token')
  })
  await adapter.stop()
})

it('a correct pair of tokens starts', async () => {
  fake = await FakeSlack.start()
  const adapter = new SlackAdapter({
    botToken: fake.options.botToken,
    appToken: fake.options.appToken,
    apiUrl: fake.apiUrl,
  })
  await adapter.start(host)
  await fake.waitForSocket()
  await adapter.stop()
})

it('a Web API that cannot be reached (wrong SLACK_API_URL) fails start at once, naming the variable', async () => {
  // A port that was just free: nothing listens there.
  const probe = await FakeSlack.start()
  const deadUrl = probe.apiUrl
  await probe.close()
  const adapter = new SlackAdapter({
    botToken: 'xoxb-fake',
    appToken: 'xapp-test-token',
    apiUrl: deadUrl,
  })
  await expect(adapter.start(host)).rejects.toThrow(/cannot reach the Slack Web API at .* \(SLACK_API_URL\)/)
})

it('the bot token is `botToken` only: the old `token` name is not read', () => {
  const old = { token: 'xoxb-fake', appToken: 'xapp-test-token' } as ConstructorParameters<
    typeof SlackAdapter
  >[0]
  expect(() => new SlackAdapter(old)).toThrow(/needs a bot token \(SLACK_BOT_TOKEN\)/)
  expect(() => new SlackAdapter({ botToken: 'xoxb-fake', appToken: 'xapp-test-token' })).not.toThrow()
})
