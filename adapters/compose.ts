/**
 * The adapters side of the composition root: `askbridge serve` (through bin/askbridge.js) hands
 * this to `serve()`, so nothing under src/ imports an adapter. It lives at the top of the
 * adapters folder beside every platform. Slack, Discord and Teams load only when their credentials are set, so a
 * bridge without them never loads their SDKs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ChatAdapter } from '../src/answerer/adapter.js'
import type { Destination } from '../src/card/types.js'
import { publicUrlOf } from '../src/config/env.js'
import type { WebhookMount } from '../src/server/http.js'
import type { BuildAdapters, BuiltAdapters } from '../src/server/serve.js'
import type { LeaderHandlers } from '../src/store/pg-leader.js'
import { PostgresStore } from '../src/store/postgres.js'
import { WebAdapter } from './web/adapter.js'

/** An adapter that may also take signed webhooks on the bridge's port. */
type WithHttp = ChatAdapter & { handleHttp?: (req: IncomingMessage, res: ServerResponse) => Promise<void> }

/** Build the web inbox and every adapter whose credentials are configured. */
export const buildAdapters: BuildAdapters = async ({
  config,
  store,
  logger,
  heartbeatMs,
}): Promise<BuiltAdapters> => {
  const web = new WebAdapter({ store, logger, ...(heartbeatMs === undefined ? {} : { heartbeatMs }) })
  const adapters: ChatAdapter[] = [web]
  const destinations: Destination[] = [{ platform: 'web' }]
  const webhooks: WebhookMount[] = []

  if (config.SLACK_BOT_TOKEN) {
    const { SlackAdapter } = await import('./slack/index.js')
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
    const { DiscordAdapter } = await import('./discord/index.js')
    const discord = new DiscordAdapter({
      token: config.DISCORD_BOT_TOKEN,
      ...(config.DISCORD_API_URL ? { apiUrl: config.DISCORD_API_URL } : {}),
      ...(config.DISCORD_PUBLIC_KEY ? { publicKey: config.DISCORD_PUBLIC_KEY } : {}),
      // Several bridges on one PostgreSQL database: one of them handles gateway interactions.
      // …and an HTTP interaction one of them took is a replay to the others.
      ...(store instanceof PostgresStore
        ? {
            gatewayLeader: (handlers: LeaderHandlers) => store.lead('discord-gateway', handlers),
            seenOnce: store,
          }
        : {}),
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
  if (
    config.TEAMS_APP_ID &&
    config.TEAMS_APP_PASSWORD &&
    config.TEAMS_TENANT_ID &&
    config.TEAMS_SERVICE_URL
  ) {
    const { TeamsAdapter } = await import('./teams/index.js')
    const publicUrl = publicUrlOf(config)
    const teams = new TeamsAdapter({
      appId: config.TEAMS_APP_ID,
      appPassword: config.TEAMS_APP_PASSWORD,
      tenantId: config.TEAMS_TENANT_ID,
      serviceUrl: config.TEAMS_SERVICE_URL,
      ...(config.TEAMS_AUTHORITY_URL ? { authorityUrl: config.TEAMS_AUTHORITY_URL } : {}),
      ...(publicUrl ? { publicUrl } : {}),
      logger,
    })
    adapters.push(teams)
    if (config.TEAMS_CHANNEL) destinations.push({ platform: 'teams', channel: config.TEAMS_CHANNEL })
    webhooks.push({
      method: 'POST',
      path: '/teams/messages',
      handle: (req, res) => teams.handleHttp(req, res),
    })
  }
  return { web, adapters, destinations, webhooks }
}
