/**
 * Slack as a platform module: its variables, id rules, mentions and responders, and how its
 * adapter is built. The SDK loads only when SLACK_BOT_TOKEN is set (build imports the adapter).
 */
import { envOf, type IdRule, optionalText, type PlatformModule, urlVariable } from '../../src/adapter-kit.js'

/** Slack conversation ids (C…, G…, D…), user ids (U…, W…) and user group ids (S…). */
const CHANNEL: IdRule = { pattern: /^[CGD][A-Z0-9]{2,}$/, what: 'Slack channel id (C…)' }
const USER: IdRule = { pattern: /^[UW][A-Z0-9]{2,}$/, what: 'Slack user id (U…)', short: 'U…' }
const GROUP: IdRule = { pattern: /^S[A-Z0-9]{2,}$/, what: 'Slack user group id (S…)', short: 'S…' }

const env = {
  SLACK_BOT_TOKEN: optionalText
    .refine((v) => v === undefined || v.startsWith('xoxb-'), {
      message: 'must be a bot token starting with "xoxb-"',
    })
    .meta({ description: 'Slack bot token (`xoxb-...`); enables the Slack adapter.' }),
  SLACK_APP_TOKEN: optionalText
    .refine((v) => v === undefined || v.startsWith('xapp-'), {
      message: 'must be an app-level token starting with "xapp-"',
    })
    .meta({
      description:
        'Slack app-level token (`xapp-...`, `connections:write`): Socket Mode, no public URL needed.',
    }),
  SLACK_SIGNING_SECRET: optionalText.meta({
    description:
      'Slack signing secret: HTTP mode instead, interactivity at `POST /slack/events` on the askbridge port.',
  }),
  SLACK_CHANNEL: optionalText.meta({ description: 'Default Slack channel id for questions.' }),
  SLACK_API_URL: urlVariable('the Slack Web API').meta({
    description: 'Slack Web API base (tests, proxies, GovSlack).',
    unset: '`https://slack.com/api/`',
  }),
}

export const slack: PlatformModule = {
  id: 'slack',
  name: 'Slack',
  env,
  secrets: ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET'],
  enabledBy: 'SLACK_BOT_TOKEN',
  setUp: 'set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (or SLACK_SIGNING_SECRET)',
  defaultChannel: { variable: 'SLACK_CHANNEL', example: 'C0123456789' },
  crossProblems(get) {
    if (get('SLACK_BOT_TOKEN') !== undefined) {
      if (get('SLACK_APP_TOKEN') === undefined && get('SLACK_SIGNING_SECRET') === undefined) {
        return [
          'SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is needed with SLACK_BOT_TOKEN (Socket Mode or HTTP mode)',
        ]
      }
      return []
    }
    return ['SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_CHANNEL']
      .filter((key) => get(key) !== undefined)
      .map((key) => `${key} is set but SLACK_BOT_TOKEN is not`)
  },
  ids: { channel: CHANNEL, user: USER },
  mentions: { group: { word: 'subteam', id: GROUP }, user: { word: 'user', id: USER } },
  responders: { users: { ...USER, what: 'Slack user id' }, groups: GROUP },
  async build({ config, logger }) {
    const c = envOf(config, env)
    const { SlackAdapter } = await import('./index.js')
    const adapter = new SlackAdapter({
      ...(c.SLACK_BOT_TOKEN ? { botToken: c.SLACK_BOT_TOKEN } : {}),
      ...(c.SLACK_APP_TOKEN ? { appToken: c.SLACK_APP_TOKEN } : {}),
      ...(c.SLACK_SIGNING_SECRET ? { signingSecret: c.SLACK_SIGNING_SECRET } : {}),
      ...(c.SLACK_API_URL ? { apiUrl: c.SLACK_API_URL } : {}),
      logger,
    })
    return {
      adapter,
      ...(c.SLACK_CHANNEL ? { destination: { platform: 'slack', channel: c.SLACK_CHANNEL } } : {}),
      ...(c.SLACK_SIGNING_SECRET
        ? {
            webhooks: [
              { method: 'POST', path: '/slack/events', handle: (req, res) => adapter.handleHttp(req, res) },
            ],
          }
        : {}),
    }
  },
}
