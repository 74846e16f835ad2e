/**
 * Discord as a platform module: its variables, id rules, mentions and responders, and how its
 * adapter is built. discord.js loads only when DISCORD_BOT_TOKEN is set.
 */
import { envOf, type IdRule, optionalText, type PlatformModule, urlVariable } from '../../src/adapter-kit.js'

/** A Discord snowflake: the one rule for every Discord id, in variables and in the routes file. */
const SNOWFLAKE = /^\d{15,21}$/
const CHANNEL: IdRule = { pattern: SNOWFLAKE, what: 'Discord channel id (a snowflake)' }
const USER: IdRule = { pattern: SNOWFLAKE, what: 'Discord user id (a snowflake)' }
const ANY_ID: IdRule = { pattern: SNOWFLAKE, what: 'Discord id' }

const env = {
  DISCORD_BOT_TOKEN: optionalText.meta({
    description: 'Discord bot token; enables the Discord adapter (gateway connection).',
  }),
  DISCORD_CHANNEL_ID: optionalText
    .refine((v) => v === undefined || SNOWFLAKE.test(v), {
      message: 'must be a Discord channel id (a snowflake, digits only)',
    })
    .meta({ description: 'Default Discord channel id (a snowflake) for questions.' }),
  DISCORD_API_URL: urlVariable('the Discord REST API').meta({
    description: 'Discord REST base; the gateway URL comes from `GET /gateway/bot`.',
    unset: '`https://discord.com/api`',
  }),
  DISCORD_PUBLIC_KEY: optionalText
    .refine((v) => v === undefined || /^[0-9a-fA-F]{64}$/.test(v), {
      message: 'must be the application public key (64 hex characters)',
    })
    .meta({
      description:
        'Discord application public key (64 hex characters): HTTP interactions at `POST /discord/interactions`.',
    }),
}

export const discord: PlatformModule = {
  id: 'discord',
  name: 'Discord',
  env,
  secrets: ['DISCORD_BOT_TOKEN'],
  enabledBy: 'DISCORD_BOT_TOKEN',
  setUp: 'set DISCORD_BOT_TOKEN',
  defaultChannel: { variable: 'DISCORD_CHANNEL_ID', example: '123456789012345678' },
  crossProblems(get) {
    if (get('DISCORD_BOT_TOKEN') !== undefined) return []
    return ['DISCORD_CHANNEL_ID', 'DISCORD_PUBLIC_KEY']
      .filter((key) => get(key) !== undefined)
      .map((key) => `${key} is set but DISCORD_BOT_TOKEN is not`)
  },
  ids: { channel: CHANNEL, user: USER },
  mentions: { role: { word: 'role', id: ANY_ID }, user: { word: 'user', id: ANY_ID } },
  responders: { users: ANY_ID, roles: ANY_ID },
  async build({ config, logger, capabilities }) {
    const c = envOf(config, env)
    const { DiscordAdapter } = await import('./index.js')
    const { leader, seenOnce } = capabilities
    const adapter = new DiscordAdapter({
      token: c.DISCORD_BOT_TOKEN ?? '',
      ...(c.DISCORD_API_URL ? { apiUrl: c.DISCORD_API_URL } : {}),
      ...(c.DISCORD_PUBLIC_KEY ? { publicKey: c.DISCORD_PUBLIC_KEY } : {}),
      // Several bridges on one store: one of them handles gateway interactions, and an HTTP
      // interaction one of them took is a replay to the others.
      ...(leader ? { gatewayLeader: (handlers) => leader('discord-gateway', handlers) } : {}),
      ...(seenOnce ? { seenOnce } : {}),
      logger,
    })
    return {
      adapter,
      ...(c.DISCORD_CHANNEL_ID
        ? { destination: { platform: 'discord', channel: c.DISCORD_CHANNEL_ID } }
        : {}),
      ...(c.DISCORD_PUBLIC_KEY
        ? {
            webhooks: [
              {
                method: 'POST',
                path: '/discord/interactions',
                handle: (req, res) => adapter.handleHttp(req, res),
              },
            ],
          }
        : {}),
    }
  },
}
