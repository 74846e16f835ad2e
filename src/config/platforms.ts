import type { PlatformDescriptor } from '../platform-descriptor.js'
import type { RoutesFile } from '../routing/routes.js'
import type { Config } from './env.js'

/**
 * Mistakes in which platforms get questions, each one line naming the variable and the fix:
 * a route that sends to a platform that is not configured (its copies would never be posted,
 * so a timed ask on that route alone could never be answered), and a configured platform that
 * no question would ever reach (no default channel and no route sending to it). Every platform
 * is checked the same way, from its descriptor.
 */
export function platformProblems(
  config: Config,
  routes: RoutesFile | undefined,
  platforms: readonly PlatformDescriptor[],
  routesPath?: string,
): string[] {
  const problems: string[] = []
  const where = `ASKBRIDGE_ROUTES${routesPath ? ` (${routesPath})` : ''}`
  const sentTo = new Set<string>()
  for (const route of routes?.routes ?? []) {
    const named = new Set<string>()
    for (const d of route.destinations) named.add(d.platform)
    for (const tier of route.escalation ?? []) for (const d of tier.destinations ?? []) named.add(d.platform)
    for (const id of named) {
      sentTo.add(id)
      const p = platforms.find((x) => x.id === id)
      if (p?.enabledBy !== undefined && config[p.enabledBy] === undefined) {
        problems.push(
          `${where}: route "${route.name}" sends to ${id}, but ${p.name} is not configured: ${p.setUp ?? `set ${p.enabledBy}`}, or take ${id} out of the route`,
        )
      }
    }
  }
  for (const p of platforms) {
    const channel = p.defaultChannel
    if (p.enabledBy === undefined || channel === undefined) continue
    if (config[p.enabledBy] === undefined || config[channel.variable] !== undefined || sentTo.has(p.id))
      continue
    problems.push(
      `${channel.variable} is not set and ${routes ? `no route in ${where} sends to ${p.id}` : 'there is no routes file (ASKBRIDGE_ROUTES)'}, so ${p.name} would get no questions: set ${channel.variable} to a channel id (for example ${channel.example})${routes ? `, or add a ${p.id} destination to a route` : ''}`,
    )
  }
  return problems
}
