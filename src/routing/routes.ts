import { readFileSync } from 'node:fs'
import type { Destination, EscalationTier, Responders } from '../card/types.js'
import { type Logger, silentLogger } from '../log.js'
import type { AnswererRequest } from '../protocol/types.js'
import { parseDuration } from './duration.js'
import {
  type DestinationConfig,
  type RouteConfig,
  type RoutesFile,
  routesFileSchema,
  SLACK_CHANNEL,
  SLACK_GROUP,
  SLACK_USER,
  SNOWFLAKE,
  TEAMS_CHANNEL,
  TEAMS_USER,
} from './routes-schema.js'
import type { RoutePlan, Router } from './types.js'

export type { RoutesFile } from './routes-schema.js'

/** A routes file that cannot be used; `problems` name the exact path of each. */
export class RoutesError extends Error {
  override readonly name = 'RoutesError'
  constructor(
    readonly problems: string[],
    source = 'routes file',
  ) {
    super(`${source} is invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  }
}

const pathOf = (path: ReadonlyArray<PropertyKey>) =>
  path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
    '',
  )

function checkDestination(d: DestinationConfig, at: string, problems: string[]): void {
  if (d.platform === 'web') {
    if (d.channel || d.user) problems.push(`${at}: the web inbox takes no channel or user`)
    return
  }
  if (!d.channel && !d.user) problems.push(`${at}: needs a channel or a user`)
  if (d.channel && d.user) problems.push(`${at}: give a channel or a user, not both`)
  const idOk = (id: string, kind: 'channel' | 'user') =>
    d.platform === 'discord'
      ? SNOWFLAKE.test(id)
      : d.platform === 'teams'
        ? (kind === 'channel' ? TEAMS_CHANNEL : TEAMS_USER).test(id)
        : (kind === 'channel' ? SLACK_CHANNEL : SLACK_USER).test(id)
  const idName = {
    slack: { channel: 'Slack channel id (C…)', user: 'Slack user id (U…)' },
    discord: { channel: 'Discord channel id (a snowflake)', user: 'Discord user id (a snowflake)' },
    teams: {
      channel: 'Teams channel conversation id (19:…@thread.tacv2)',
      user: 'Microsoft Entra object id',
    },
  }[d.platform]
  if (d.channel && !idOk(d.channel, 'channel')) {
    problems.push(`${at}.channel: "${d.channel}" is not a ${idName.channel}`)
  }
  if (d.user && !idOk(d.user, 'user')) {
    problems.push(`${at}.user: "${d.user}" is not a ${idName.user}`)
  }
  d.mention?.forEach((m, i) => {
    checkMention(d.platform, m, `${at}.mention[${i}]`, problems)
  })
}

function checkMention(
  platform: 'slack' | 'discord' | 'teams' | 'web',
  mention: string,
  at: string,
  problems: string[],
) {
  const [kind, id = ''] = mention.split(':')
  const ok =
    platform === 'slack'
      ? (kind === 'subteam' && SLACK_GROUP.test(id)) || (kind === 'user' && SLACK_USER.test(id))
      : platform === 'discord'
        ? (kind === 'role' || kind === 'user') && SNOWFLAKE.test(id)
        : platform === 'teams'
          ? kind === 'user' && TEAMS_USER.test(id)
          : false
  if (!ok) {
    const hint =
      platform === 'slack'
        ? 'subteam:S… or user:U…'
        : platform === 'discord'
          ? 'role:ID or user:ID'
          : platform === 'teams'
            ? 'user:ENTRA-OBJECT-ID'
            : 'no mentions on web'
    problems.push(`${at}: "${mention}" is not a ${platform} mention (${hint})`)
  }
}

/** A mention that is valid on at least one of the route's platforms. */
function fitsRoute(route: RouteConfig, mention: string): boolean {
  const platforms = new Set(route.destinations.map((d) => d.platform))
  return [...platforms].some((p) => mentionFits(p, mention))
}

/** Whether a mention is valid on a platform (`subteam:`/`user:` on Slack, `role:`/`user:` on Discord). */
export function mentionFits(platform: 'slack' | 'discord' | 'teams' | 'web', mention: string): boolean {
  const scratch: string[] = []
  checkMention(platform, mention, '', scratch)
  return scratch.length === 0
}

/** Every route that names PagerDuty, with where it does, for start-up checks. */
export function pagerDutyTargets(
  file: RoutesFile,
): Array<{ at: string; schedule?: string | undefined; escalationPolicy?: string | undefined }> {
  return file.routes.flatMap((route, r) =>
    route.oncall ? [{ at: `routes[${r}].oncall.pagerduty`, ...route.oncall.pagerduty }] : [],
  )
}

/** Validate a parsed routes file: shapes, ids, durations, names and escalation cycles. */
export function validateRoutes(value: unknown, source?: string): RoutesFile {
  const parsed = routesFileSchema.safeParse(value)
  if (!parsed.success) {
    throw new RoutesError(
      parsed.error.issues.map((i) => `${pathOf(i.path) || '(root)'}: ${i.message}`),
      source,
    )
  }
  const file = parsed.data
  const problems: string[] = []
  const names = new Map<string, number>()
  file.routes.forEach((route, r) => {
    const at = `routes[${r}]`
    if (names.has(route.name))
      problems.push(`${at}.name: "${route.name}" is already the name of routes[${names.get(route.name)}]`)
    names.set(route.name, r)
    route.destinations.forEach((d, i) => {
      checkDestination(d, `${at}.destinations[${i}]`, problems)
    })
    route.notices?.forEach((event, i) => {
      if (route.notices?.indexOf(event) !== i)
        problems.push(`${at}.notices[${i}]: "${event}" is listed twice`)
    })
    route.responders?.slack?.users?.forEach((u, i) => {
      if (!SLACK_USER.test(u))
        problems.push(`${at}.responders.slack.users[${i}]: "${u}" is not a Slack user id`)
    })
    route.responders?.slack?.groups?.forEach((g, i) => {
      if (!SLACK_GROUP.test(g))
        problems.push(`${at}.responders.slack.groups[${i}]: "${g}" is not a Slack user group id (S…)`)
    })
    for (const kind of ['users', 'roles'] as const) {
      route.responders?.discord?.[kind]?.forEach((id, i) => {
        if (!SNOWFLAKE.test(id))
          problems.push(`${at}.responders.discord.${kind}[${i}]: "${id}" is not a Discord id`)
      })
    }
    route.responders?.teams?.users?.forEach((id, i) => {
      if (!TEAMS_USER.test(id))
        problems.push(`${at}.responders.teams.users[${i}]: "${id}" is not a Microsoft Entra object id`)
    })
    route.oncall?.fallback?.forEach((m, i) => {
      if (!fitsRoute(route, m))
        problems.push(`${at}.oncall.fallback[${i}]: "${m}" fits none of the route's platforms`)
    })
    let previous = 0
    route.escalation?.forEach((tier, t) => {
      const tat = `${at}.escalation[${t}]`
      const after = parseDuration(tier.after) ?? 0
      if (after <= previous) problems.push(`${tat}.after: tiers must come later than the one before`)
      previous = after
      tier.destinations?.forEach((d, i) => {
        checkDestination(d, `${tat}.destinations[${i}]`, problems)
      })
      if (
        !tier.mention?.length &&
        !tier.destinations?.length &&
        !tier.route &&
        tier.oncallLevel === undefined
      ) {
        problems.push(`${tat}: names no mention, destinations, route or oncallLevel`)
      }
      if (tier.oncallLevel !== undefined && !route.oncall?.pagerduty.escalationPolicy) {
        problems.push(`${tat}.oncallLevel: needs the route's oncall.pagerduty.escalationPolicy`)
      }
      tier.mention?.forEach((m, i) => {
        if (!fitsRoute(route, m))
          problems.push(`${tat}.mention[${i}]: "${m}" fits none of the route's platforms`)
      })
    })
  })
  // Escalation to another route must name one, and must not come back round.
  file.routes.forEach((route, r) => {
    route.escalation?.forEach((tier, t) => {
      if (tier.route !== undefined && !names.has(tier.route)) {
        problems.push(`routes[${r}].escalation[${t}].route: no route is named "${tier.route}"`)
      }
    })
  })
  const next = (name: string) =>
    (file.routes.find((x) => x.name === name)?.escalation ?? []).flatMap((t) => (t.route ? [t.route] : []))
  for (const [r, route] of file.routes.entries()) {
    const stack: string[] = [route.name]
    const walk = (name: string): string[] | undefined => {
      for (const target of next(name)) {
        if (target === route.name) return [...stack, target]
        if (stack.includes(target)) continue
        stack.push(target)
        const cycle = walk(target)
        if (cycle) return cycle
        stack.pop()
      }
      return undefined
    }
    const cycle = walk(route.name)
    if (cycle) {
      problems.push(`routes[${r}].escalation: escalation cycle ${cycle.join(' -> ')}`)
      break
    }
  }
  if (problems.length) throw new RoutesError(problems, source)
  return file
}

/** Read and validate a routes file; errors name the file and the exact path of each problem. */
export function loadRoutes(path: string): RoutesFile {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new RoutesError([`cannot read: ${(error as Error).message}`], path)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new RoutesError([`not JSON: ${(error as Error).message}`], path)
  }
  return validateRoutes(json, path)
}

/** Routes match at most this much of a tool input (a regex over megabytes is not worth its time). */
const TOOL_INPUT_MATCH_CHARS = 100_000

/** `*` matches any run of characters; everything else is literal. */
export function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
  return re.test(value)
}

function routeMatches(route: RouteConfig, request: AnswererRequest): boolean {
  const match = route.match
  if (!match) return true
  if (match.route !== undefined && match.route !== request.route) return false
  if (match.agentId !== undefined && !globMatch(match.agentId, request.agent?.id ?? 'default')) return false
  if (match.intent !== undefined) {
    const kinds = request.questions.map((q) => q.intent?.kind ?? 'none')
    if (!kinds.includes(match.intent)) return false
  }
  if (match.header !== undefined) {
    const pattern = match.header
    if (!request.questions.some((q) => q.header !== undefined && globMatch(pattern, q.header))) return false
  }
  if (match.tool !== undefined && !(request.tool && globMatch(match.tool, request.tool.name))) return false
  if (match.mcpSource !== undefined) {
    const source = request.tool?.mcpSource
    if (source === undefined || !globMatch(match.mcpSource, source)) return false
  }
  if (match.toolInput !== undefined) {
    if (!request.tool) return false
    if (!new RegExp(match.toolInput).test(request.tool.input.slice(0, TOOL_INPUT_MATCH_CHARS))) return false
  }
  return true
}

const toResponders = ({ people, ...rest }: NonNullable<RouteConfig['responders']>): Responders => ({
  ...(rest as Responders),
  ...(people?.length ? { emails: people.map((p) => p.slice('email:'.length).toLowerCase()) } : {}),
})

const toDestination = (d: DestinationConfig): Destination => ({
  platform: d.platform,
  ...(d.channel ? { channel: d.channel } : {}),
  ...(d.user ? { user: d.user } : {}),
  ...(d.mention?.length ? { mention: d.mention } : {}),
})

/**
 * The router for a routes file: the first route whose `match` fits wins; no match goes to the
 * default destinations (the env defaults) and is logged.
 */
export function routesRouter(
  file: RoutesFile,
  defaults: Destination[],
  logger: Logger = silentLogger,
): Router {
  const byName = new Map(file.routes.map((r) => [r.name, r]))
  const plan = (route: RouteConfig): RoutePlan => ({
    name: route.name,
    destinations: route.destinations.map(toDestination),
    ...(route.responders ? { responders: toResponders(route.responders) } : {}),
    quorum: route.quorum ?? 1,
    excludeRequester: route.excludeRequester ?? false,
    ...(route.notices?.length ? { notices: [...route.notices] } : {}),
    ...(route.oncall
      ? { oncall: { pagerduty: { ...route.oncall.pagerduty }, fallback: route.oncall.fallback ?? [] } }
      : {}),
    escalation: (route.escalation ?? []).map(
      (tier): EscalationTier => ({
        afterMs: parseDuration(tier.after) ?? 0,
        ...(tier.oncallLevel !== undefined && route.oncall
          ? {
              oncall: {
                level: tier.oncallLevel,
                pagerduty: { ...route.oncall.pagerduty },
                fallback: route.oncall.fallback ?? [],
              },
            }
          : {}),
        ...(tier.mention?.length ? { mention: tier.mention } : {}),
        ...(tier.destinations?.length || tier.route
          ? {
              destinations: [
                ...(tier.destinations ?? []).map(toDestination),
                ...(tier.route ? (byName.get(tier.route)?.destinations ?? []).map(toDestination) : []),
              ],
            }
          : {}),
      }),
    ),
  })
  return {
    resolve(request) {
      const route = file.routes.find((r) => routeMatches(r, request))
      if (route) return plan(route)
      logger.info('no route matched; using the default route', {
        callId: request.callId,
        agentId: request.agent?.id,
        route: request.route,
      })
      return { name: 'default', destinations: defaults, quorum: 1, excludeRequester: false, escalation: [] }
    },
  }
}
