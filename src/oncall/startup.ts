import { ConfigError } from '../config/env.js'
import type { Logger } from '../log.js'
import { pagerDutyTargets, type RoutesFile } from '../routing/routes.js'
import { PagerDutyClient, PagerDutyError } from './pagerduty.js'

/** Routes naming PagerDuty with no PAGERDUTY_API_TOKEN: one problem per route. */
export function pagerDutyTokenProblems(routes: RoutesFile | undefined, token: string | undefined): string[] {
  if (token) return []
  return (routes ? pagerDutyTargets(routes) : []).map(
    (t) => `ASKBRIDGE_ROUTES: ${t.at} names PagerDuty, but PAGERDUTY_API_TOKEN is not set`,
  )
}

/**
 * The PagerDuty client for a routes file, checked at start: a route naming PagerDuty needs
 * PAGERDUTY_API_TOKEN, the token must be accepted, and every schedule and escalation policy
 * must exist. One ConfigError names every problem. PagerDuty unreachable at start is not one
 * (questions then use the last known on-call or the fallback): it is logged.
 * Returns undefined when no route names PagerDuty.
 */
export async function pagerDutyForRoutes(
  routes: RoutesFile | undefined,
  env: { PAGERDUTY_API_TOKEN?: string | undefined; PAGERDUTY_API_URL?: string | undefined },
  log: Logger,
): Promise<PagerDutyClient | undefined> {
  const targets = routes ? pagerDutyTargets(routes) : []
  if (targets.length === 0) return undefined
  if (!env.PAGERDUTY_API_TOKEN) throw new ConfigError(pagerDutyTokenProblems(routes, undefined))
  const client = new PagerDutyClient({
    token: env.PAGERDUTY_API_TOKEN,
    ...(env.PAGERDUTY_API_URL ? { apiUrl: env.PAGERDUTY_API_URL } : {}),
  })
  const problems: string[] = []
  for (const t of targets) {
    const [kind, id] = t.schedule
      ? (['schedule', t.schedule] as const)
      : (['escalationPolicy', t.escalationPolicy ?? ''] as const)
    try {
      const found = kind === 'schedule' ? await client.schedule(id) : await client.escalationPolicy(id)
      if (!found) {
        const what = kind === 'schedule' ? 'schedule' : 'escalation policy'
        problems.push(`ASKBRIDGE_ROUTES: ${t.at}.${kind}: PagerDuty has no ${what} "${id}"`)
      }
    } catch (error) {
      if (error instanceof PagerDutyError && error.code === 'unauthorized') {
        problems.push(`PAGERDUTY_API_TOKEN: ${error.message}`)
        break
      }
      log.warn('PagerDuty cannot be checked at start; on-call questions use the fallback until it answers', {
        error: error instanceof Error ? error.message : String(error),
        url: client.apiUrl,
      })
      break
    }
  }
  if (problems.length) throw new ConfigError(problems)
  return client
}
