/**
 * Microsoft Teams as a platform module: its variables, id rules, mentions and responders, and how
 * its adapter is built. The Agents SDK loads only when TEAMS_APP_ID is set.
 */
import { envOf, type IdRule, optionalText, type PlatformModule, urlVariable } from '../../src/adapter-kit.js'

/** A Microsoft Entra id (application, tenant, object). */
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A Teams channel conversation id (`19:…@thread.tacv2`). */
const CHANNEL_ID = /^19:[^\s/;]{1,200}@thread\.(tacv2|skype)$/
const CHANNEL: IdRule = { pattern: CHANNEL_ID, what: 'Teams channel conversation id (19:…@thread.tacv2)' }
/** Teams users are named by their Microsoft Entra object id. */
const USER: IdRule = { pattern: GUID, what: 'Microsoft Entra object id', short: 'ENTRA-OBJECT-ID' }

const env = {
  TEAMS_APP_ID: optionalText
    .refine((v) => v === undefined || GUID.test(v), {
      message: "must be the bot's Microsoft Entra application (client) id, a GUID",
    })
    .meta({
      description: "Enables the Microsoft Teams adapter: the bot's Microsoft Entra application (client) id.",
    }),
  TEAMS_APP_PASSWORD: optionalText.meta({ description: 'The client secret of that app registration.' }),
  TEAMS_TENANT_ID: optionalText
    .refine((v) => v === undefined || GUID.test(v), {
      message: 'must be the Microsoft Entra tenant id, a GUID',
    })
    .meta({ description: 'The Microsoft Entra tenant (directory) id the bot is registered in.' }),
  TEAMS_SERVICE_URL: urlVariable(
    'the Bot Framework service of your tenant (https://smba.trafficmanager.net/emea/)',
  ).meta({
    description: 'The Bot Framework service URL of your tenant, where posts and updates go.',
  }),
  TEAMS_CHANNEL: optionalText
    .refine((v) => v === undefined || CHANNEL_ID.test(v), {
      message: 'must be a Teams channel conversation id (19:…@thread.tacv2)',
    })
    .meta({ description: 'Default Teams channel: its conversation id (`19:…@thread.tacv2`).' }),
  /** Microsoft Entra's token and signing-key endpoints (tests point it at a fake). */
  TEAMS_AUTHORITY_URL: urlVariable('Microsoft Entra (https://login.microsoftonline.com)').meta({
    description: 'Microsoft Entra, where tokens and signing keys come from (tests point it at a fake).',
    unset: 'https://login.microsoftonline.com',
  }),
}

const REQUIRED = ['TEAMS_APP_ID', 'TEAMS_APP_PASSWORD', 'TEAMS_TENANT_ID', 'TEAMS_SERVICE_URL']

export const teams: PlatformModule = {
  id: 'teams',
  name: 'Microsoft Teams',
  env,
  secrets: ['TEAMS_APP_PASSWORD'],
  enabledBy: 'TEAMS_APP_ID',
  setUp: 'set TEAMS_APP_ID, TEAMS_APP_PASSWORD, TEAMS_TENANT_ID and TEAMS_SERVICE_URL',
  defaultChannel: { variable: 'TEAMS_CHANNEL', example: '19:abc123@thread.tacv2' },
  crossProblems(get) {
    if (get('TEAMS_APP_ID') !== undefined) {
      const missing = REQUIRED.filter((key) => get(key) === undefined)
      return missing.length > 0
        ? [
            `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} needed with TEAMS_APP_ID (Microsoft Teams)`,
          ]
        : []
    }
    return [...REQUIRED.slice(1), 'TEAMS_CHANNEL', 'TEAMS_AUTHORITY_URL']
      .filter((key) => get(key) !== undefined)
      .map((key) => `${key} is set but TEAMS_APP_ID is not`)
  },
  ids: { channel: CHANNEL, user: USER },
  mentions: { user: { word: 'user', id: USER } },
  responders: { users: USER },
  async build({ config, logger, publicUrl }) {
    const c = envOf(config, env)
    const { TeamsAdapter } = await import('./index.js')
    // The adapter refuses to start without its app id, password and tenant (crossProblems names them first).
    const adapter = new TeamsAdapter({
      appId: c.TEAMS_APP_ID ?? '',
      appPassword: c.TEAMS_APP_PASSWORD ?? '',
      tenantId: c.TEAMS_TENANT_ID ?? '',
      serviceUrl: c.TEAMS_SERVICE_URL ?? '',
      ...(c.TEAMS_AUTHORITY_URL ? { authorityUrl: c.TEAMS_AUTHORITY_URL } : {}),
      ...(publicUrl ? { publicUrl } : {}),
      ...(c.TEAMS_CHANNEL ? { channels: [c.TEAMS_CHANNEL] } : {}),
      logger,
    })
    return {
      adapter,
      ...(c.TEAMS_CHANNEL ? { destination: { platform: 'teams', channel: c.TEAMS_CHANNEL } } : {}),
      webhooks: [
        { method: 'POST', path: '/teams/messages', handle: (req, res) => adapter.handleHttp(req, res) },
      ],
    }
  },
}
