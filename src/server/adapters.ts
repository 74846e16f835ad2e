/**
 * The one place `src/` reaches into `adapters/`: the composition root builds the configured
 * adapters. Imports are dynamic so a bridge without Slack or Discord never loads their SDKs,
 * and the boundary rule "src/ imports no adapter statically" holds everywhere else.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ChatAdapter } from '../answerer/adapter.js'
import type { Destination } from '../card/types.js'
import type { Config } from '../config/env.js'
import type { Logger } from '../log.js'
import type { Store } from '../store/types.js'
import type { HttpMount, WebhookMount } from './http.js'

/** The web inbox as the server sees it. */
export interface WebInbox extends ChatAdapter, HttpMount {
  readonly connections: number
}

/** An adapter that may also take signed webhooks on the bridge's port. */
type WithHttp = ChatAdapter & { handleHttp?: (req: IncomingMessage, res: ServerResponse) => Promise<void> }

export interface BuiltAdapters {
  web: WebInbox
  adapters: ChatAdapter[]
  destinations: Destination[]
  webhooks: WebhookMount[]
}

/** Build the web inbox and every adapter whose credentials are configured. */
export async function buildAdapters(
  config: Config,
  store: Store,
  logger: Logger,
  heartbeatMs?: number,
): Promise<BuiltAdapters> {
  const { WebAdapter } = await import('../../adapters/web/index.js')
  const web = new WebAdapter({ store, ...(heartbeatMs === undefined ? {} : { heartbeatMs }) })
  const adapters: ChatAdapter[] = [web]
  const destinations: Destination[] = [{ platform: 'web' }]
  const webhooks: WebhookMount[] = []

  if (config.SLACK_BOT_TOKEN) {
    const { SlackAdapter } = await import('../../adapters/slack/index.js')
    const slack: WithHttp = new SlackAdapter({
      token: config.SLACK_BOT_TOKEN,
      ...(config.SLACK_APP_TOKEN ? { appToken: config.SLACK_APP_TOKEN } : {}),
      ...(config.SLACK_SIGNING_SECRET ? { signingSecret: config.SLACK_SIGNING_SECRET } : {}),
      ...(config.SLACK_API_URL ? { apiUrl: config.SLACK_API_URL } : {}),
      logger,
    })
    adapters.push(slack)
    if (config.SLACK_CHANNEL) destinations.push({ platform: 'slack', channel: config.SLACK_CHANNEL })
    const handle = slack.handleHttp
    if (config.SLACK_SIGNING_SECRET && handle) {
      webhooks.push({
        method: 'POST',
        path: '/slack/events',
        handle: (req, res) => handle.call(slack, req, res),
      })
    }
  }

  if (config.DISCORD_BOT_TOKEN) {
    const { DiscordAdapter } = await import('../../adapters/discord/index.js')
    const discord = new DiscordAdapter({
      token: config.DISCORD_BOT_TOKEN,
      ...(config.DISCORD_API_URL ? { apiUrl: config.DISCORD_API_URL } : {}),
      ...(config.DISCORD_PUBLIC_KEY ? { publicKey: config.DISCORD_PUBLIC_KEY } : {}),
      logger,
    })
    adapters.push(discord)
    if (config.DISCORD_CHANNEL_ID)
      destinations.push({ platform: 'discord', channel: config.DISCORD_CHANNEL_ID })
    if (config.DISCORD_PUBLIC_KEY) {
      webhooks.push({
        method: 'POST',
        path: '/discord/interactions',
        handle: (req, res) => discord.handleHttp(req, res),
      })
    }
  }
  return { web, adapters, destinations, webhooks }
}
