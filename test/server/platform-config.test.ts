/** A host embedding the bridge gets the same stop as `askbridge serve` for platforms no question reaches. */
import { expect, test } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ConfigError, parseConfig } from '../../src/config/env.js'
import { serve } from '../../src/server/serve.js'

test('serve() refuses a route to an unconfigured platform and a configured platform nothing reaches', async () => {
  const config = parseConfig(
    {
      ASKBRIDGE_PORT: '0',
      ASKBRIDGE_DB: ':memory:',
      DISCORD_BOT_TOKEN: 'discord-test-token',
    },
    PLATFORMS,
  )
  const starting = serve({
    config,
    platforms: PLATFORMS,
    routes: { routes: [{ name: 'oncall', destinations: [{ platform: 'slack', channel: 'C0ONCALL' }] }] },
  })
  await expect(starting).rejects.toBeInstanceOf(ConfigError)
  await starting.catch((error: ConfigError) => {
    expect(error.problems).toEqual([
      'ASKBRIDGE_ROUTES: route "oncall" sends to slack, but Slack is not configured: set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (or SLACK_SIGNING_SECRET), or take slack out of the route',
      'DISCORD_CHANNEL_ID is not set and no route in ASKBRIDGE_ROUTES sends to discord, so Discord would get no questions: set DISCORD_CHANNEL_ID to a channel id (for example 123456789012345678), or add a discord destination to a route',
    ])
  })
})
