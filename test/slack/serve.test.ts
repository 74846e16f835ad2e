/**
 * `askbridge serve` with Slack configured only through the environment, against the fake Slack:
 * the composition root builds the adapter, the bridge mounts `POST /slack/events` (HTTP mode) or
 * the adapter connects by Socket Mode, and an ask over the HTTP API is answered by a click.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { FakeSlack } from '../fakes/slack/server.js'
import { keyFor, until } from '../helpers/service.js'
import { startBridge, type TestBridge } from '../server/helpers.js'
import { fakeUser } from './rig.js'

let bridge: TestBridge | undefined
let fake: FakeSlack | undefined
afterEach(async () => {
  await bridge?.close()
  await fake?.close()
  bridge = undefined
  fake = undefined
})

describe.each(['http', 'socket'] as const)('askbridge serve with Slack (%s)', (mode) => {
  it('an ask over the API is posted to SLACK_CHANNEL and answered by a click', async () => {
    fake = await FakeSlack.start({ pingIntervalMs: 1000 })
    bridge = await startBridge({
      SLACK_BOT_TOKEN: fake.options.botToken,
      ...(mode === 'socket'
        ? { SLACK_APP_TOKEN: fake.options.appToken }
        : { SLACK_SIGNING_SECRET: fake.options.signingSecret }),
      SLACK_CHANNEL: 'C0SERVE',
      SLACK_API_URL: fake.apiUrl,
    })
    if (mode === 'http') fake.interactivityUrl = `${bridge.url}/slack/events`
    else await fake.waitForSocket()

    const asking = fetch(`${bridge.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        callId: 'serve-1',
        questions: [{ id: 'go', question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }],
      }),
    })
    const message = await until(() => fake?.messagesOf('serve-1')[0], 'card posted')
    expect(message.channel).toBe('C0SERVE')
    await until(async () =>
      (await bridge?.bridge.store.listPosts(await keyFor(bridge?.bridge.store, 'serve-1')))?.some(
        (p) => p.platform === 'slack',
      ),
    )
    const yes = fake.liveActionIds('serve-1').find((id) => id.endsWith('|c|0|0'))
    if (!yes) throw new Error('no Yes button')
    const delivery = await fake.deliver(
      fake.actionPayload(fakeUser({ userId: 'U0ANN', name: 'Ann' }), message, yes),
    )
    expect(delivery.timedOut).toBe(false)
    const res = await asking
    expect(await res.json()).toMatchObject({ answers: [{ id: 'go', selected: ['Yes'] }], callId: 'serve-1' })
    await until(() => fake?.liveActionIds('serve-1').length === 0, 'card finished')

    if (mode === 'http') {
      // The bridge's own port refuses unsigned Slack requests.
      const forged = await fake.sendHttp({ type: 'block_actions', actions: [] }, { signature: null })
      expect(forged.status).toBe(401)
      // A body over 1 MiB is refused with 413, signed or not, and the bridge goes on serving.
      const huge = await fake.sendHttp({ type: 'block_actions', actions: [], pad: 'x'.repeat(1 << 20) })
      expect(huge.status).toBe(413)
      expect((await fetch(`${bridge.url}/healthz`)).status).toBe(200)
    }
  })
})
