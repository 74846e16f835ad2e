import type { RoutesFile } from '../routing/routes.js'
import type { Config } from './env.js'

/**
 * The chat platforms `serve` can post to and the variables that set each up. The composition root
 * (adapters/compose.ts) starts an adapter exactly when `enabledBy` is set; the checks below read
 * the same table, so a platform added later is checked by adding a row.
 */
export const PLATFORMS = [
  {
    platform: 'slack',
    name: 'Slack',
    enabledBy: 'SLACK_BOT_TOKEN',
    channel: 'SLACK_CHANNEL',
    channelExample: 'C0123456789',
    setUp: 'set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (or SLACK_SIGNING_SECRET)',
  },
  {
    platform: 'discord',
    name: 'Discord',
    enabledBy: 'DISCORD_BOT_TOKEN',
    channel: 'DISCORD_CHANNEL_ID',
    channelExample: '123456789012345678',
    setUp: 'set DISCORD_BOT_TOKEN',
  },
  {
    platform: 'teams',
    name: 'Microsoft Teams',
    enabledBy: 'TEAMS_APP_ID',
    channel: 'TEAMS_CHANNEL',
    channelExample: '19:abc123@thread.tacv2',
    setUp: 'set TEAMS_APP_ID, TEAMS_APP_PASSWORD, TEAMS_TENANT_ID and TEAMS_SERVICE_URL',
  },
] as const satisfies ReadonlyArray<{
  platform: string
  name: string
  enabledBy: keyof Config
  channel: keyof Config
  channelExample: string
  setUp: string
}>

/**
 * Mistakes in which platforms get questions, each one line naming the variable and the fix:
 * a route that sends to a platform that is not configured (its copies would never be posted,
 * so a timed ask on that route alone could never be answered), and a configured platform that
 * no question would ever reach (no default channel and no route sending to it).
 */
export function platformProblems(
  config: Config,
  routes: RoutesFile | undefined,
  routesPath?: string,
): string[] {
  const problems: string[] = []
  const where = `ASKBRIDGE_ROUTES${routesPath ? ` (${routesPath})` : ''}`
  const sentTo = new Set<string>()
  for (const route of routes?.routes ?? []) {
    const named = new Set<string>()
    for (const d of route.destinations) named.add(d.platform)
    for (const tier of route.escalation ?? []) for (const d of tier.destinations ?? []) named.add(d.platform)
    for (const platform of named) {
      sentTo.add(platform)
      const p = PLATFORMS.find((x) => x.platform === platform)
      if (p && config[p.enabledBy] === undefined) {
        problems.push(
          `${where}: route "${route.name}" sends to ${platform}, but ${p.name} is not configured: ${p.setUp}, or take ${platform} out of the route`,
        )
      }
    }
  }
  for (const p of PLATFORMS) {
    if (config[p.enabledBy] === undefined || config[p.channel] !== undefined || sentTo.has(p.platform))
      continue
    problems.push(
      `${p.channel} is not set and ${routes ? `no route in ${where} sends to ${p.platform}` : 'there is no routes file (ASKBRIDGE_ROUTES)'}, so ${p.name} would get no questions: set ${p.channel} to a channel id (for example ${p.channelExample})${routes ? `, or add a ${p.platform} destination to a route` : ''}`,
    )
  }
  return problems
}
