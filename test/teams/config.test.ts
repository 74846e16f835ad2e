/** A Teams configuration mistake stops `serve` with a message that names the variable. */
import { expect, test } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ConfigError, parseConfig, secretsOf } from '../../src/config/env.js'
import { serve } from '../../src/server/serve.js'

const problems = (env: Record<string, string>): string[] => {
  try {
    parseConfig({ ASKBRIDGE_DB: ':memory:', ...env }, PLATFORMS)
    return []
  } catch (error) {
    return (error as ConfigError).problems
  }
}

const APP = '00000000-0000-4000-8000-00000000a11d'
const TENANT = '00000000-0000-4000-8000-0000000007e4'

test('every Teams variable is checked, and every problem is named at once', () => {
  expect(
    problems({
      TEAMS_APP_ID: 'my-bot',
      TEAMS_TENANT_ID: 'contoso',
      TEAMS_CHANNEL: 'General',
      TEAMS_SERVICE_URL: 'smba.trafficmanager.net',
      SLACK_CHANNEL: 'C1',
    }),
  ).toEqual([
    "TEAMS_APP_ID must be the bot's Microsoft Entra application (client) id, a GUID",
    'TEAMS_TENANT_ID must be the Microsoft Entra tenant id, a GUID',
    'TEAMS_SERVICE_URL must be an http(s) URL for the Bot Framework service of your tenant (https://smba.trafficmanager.net/emea/)',
    'TEAMS_CHANNEL must be a Teams channel conversation id (19:…@thread.tacv2)',
    'SLACK_CHANNEL is set but SLACK_BOT_TOKEN is not',
    'TEAMS_APP_PASSWORD is needed with TEAMS_APP_ID (Microsoft Teams)',
  ])
  expect(problems({ TEAMS_CHANNEL: '19:abc@thread.tacv2' })).toEqual([
    'TEAMS_CHANNEL is set but TEAMS_APP_ID is not',
  ])
})

test('the app password is a secret', () => {
  const config = parseConfig(
    {
      ASKBRIDGE_DB: ':memory:',
      TEAMS_APP_ID: APP,
      TEAMS_APP_PASSWORD: 'teams-secret-value',
      TEAMS_TENANT_ID: TENANT,
      TEAMS_SERVICE_URL: 'https://smba.trafficmanager.net/emea/',
      TEAMS_CHANNEL: '19:abc@thread.tacv2',
    },
    PLATFORMS,
  )
  expect(secretsOf(config, PLATFORMS)).toContain('teams-secret-value')
})

test('serve() stops when Teams is configured but no question would reach it', async () => {
  const config = parseConfig(
    {
      ASKBRIDGE_PORT: '0',
      ASKBRIDGE_DB: ':memory:',
      TEAMS_APP_ID: APP,
      TEAMS_APP_PASSWORD: 'teams-secret-value',
      TEAMS_TENANT_ID: TENANT,
      TEAMS_SERVICE_URL: 'https://smba.trafficmanager.net/emea/',
    },
    PLATFORMS,
  )
  const starting = serve({ config, platforms: PLATFORMS })
  await expect(starting).rejects.toBeInstanceOf(ConfigError)
  await starting.catch((error: ConfigError) => {
    expect(error.problems.join('\n')).toContain('TEAMS_CHANNEL is not set')
  })
})
