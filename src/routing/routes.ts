import { readFileSync } from 'node:fs'
import type { Destination, EscalationTier, Mention, PlatformResponders, Responders } from '../card/types.js'
import { AskbridgeError } from '../errors.js'
import { type Logger, silentLogger } from '../log.js'
import {
  mentionHint,
  type PlatformDescriptor,
  parseMention,
  type ResponderList,
} from '../platform-descriptor.js'
import type { AnswererRequest } from '../protocol/types.js'
import { parseDuration } from './duration.js'
import {
  type DestinationConfig,
  type RouteConfig,
  type RoutesFile,
  routesFileSchema,
} from './routes-schema.js'
import type { RoutePlan, Router } from './types.js'

export type { RoutesFile } from './routes-schema.js'

/** A routes file that cannot be used; `problems` name the exact path of each. */
export class RoutesError extends AskbridgeError {
  override readonly name = 'RoutesError'
  readonly code = 'INVALID_ROUTES'
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

/** The platforms by id. */
type Platforms = ReadonlyMap<string, PlatformDescriptor>
const byId = (platforms: readonly PlatformDescriptor[]): Platforms => new Map(platforms.map((p) => [p.id, p]))

function checkDestination(d: DestinationConfig, at: string, platforms: Platforms, problems: string[]): void {
  const platform = platforms.get(d.platform)
  if (!platform) return
  const ids = platform.ids
  if (!ids) {
    if (d.channel || d.user) problems.push(`${at}: ${platform.name} takes no channel or user`)
  } else {
    if (!d.channel && !d.user) problems.push(`${at}: needs a channel or a user`)
    if (d.channel && d.user) problems.push(`${at}: give a channel or a user, not both`)
    if (d.channel && !ids.channel.pattern.test(d.channel)) {
      problems.push(`${at}.channel: "${d.channel}" is not a ${ids.channel.what}`)
    }
    if (d.user && !ids.user.pattern.test(d.user)) {
      problems.push(`${at}.user: "${d.user}" is not a ${ids.user.what}`)
    }
  }
  d.mention?.forEach((m, i) => {
    if (!parseMention(platform, m))
      problems.push(`${at}.mention[${i}]: "${m}" is not a ${platform.id} mention (${mentionHint(platform)})`)
  })
}

/** A mention as every one of the route's platforms reads it (none: it fits no platform of the route). */
function routeMentions(route: RouteConfig, text: string, platforms: Platforms): Mention[] {
  const named = new Set(route.destinations.map((d) => d.platform))
  return [...named].flatMap((id) => {
    const platform = platforms.get(id)
    const mention = platform ? parseMention(platform, text) : undefined
    return mention ? [mention] : []
  })
}

/** A destination's mentions, parsed by its platform. */
function destinationMentions(d: DestinationConfig, platforms: Platforms): Mention[] {
  const platform = platforms.get(d.platform)
  return (d.mention ?? []).flatMap((m) => {
    const mention = platform ? parseMention(platform, m) : undefined
    return mention ? [mention] : []
  })
}

/** Each responder list of the route: a list the platform takes, of ids its rule accepts. */
function checkResponders(route: RouteConfig, at: string, platforms: Platforms, problems: string[]): void {
  const { web: _web, people: _people, ...lists } = route.responders ?? {}
  for (const [id, value] of Object.entries(lists)) {
    const rules = platforms.get(id)?.responders
    if (!rules) {
      problems.push(`${at}.responders.${id}: not a platform with responders`)
      continue
    }
    for (const [list, ids] of Object.entries(value ?? {}) as Array<[ResponderList, string[] | undefined]>) {
      const rule = rules[list]
      if (!rule) {
        problems.push(`${at}.responders.${id}.${list}: ${id} has no ${list}`)
        continue
      }
      ids?.forEach((v, i) => {
        if (!rule.pattern.test(v))
          problems.push(`${at}.responders.${id}.${list}[${i}]: "${v}" is not a ${rule.what}`)
      })
    }
  }
}

/** Every route that names PagerDuty, with where it does, for start-up checks. */
export function pagerDutyTargets(
  file: RoutesFile,
): Array<{ at: string; schedule?: string | undefined; escalationPolicy?: string | undefined }> {
  return file.routes.flatMap((route, r) =>
    route.oncall ? [{ at: `routes[${r}].oncall.pagerduty`, ...route.oncall.pagerduty }] : [],
  )
}

/**
 * Validate a parsed routes file against the platforms: shapes, ids, mentions, durations, names
 * and escalation cycles.
 */
export function validateRoutes(
  value: unknown,
  platformList: readonly PlatformDescriptor[],
  source?: string,
): RoutesFile {
  const platforms = byId(platformList)
  const parsed = routesFileSchema(platformList).safeParse(value)
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
      checkDestination(d, `${at}.destinations[${i}]`, platforms, problems)
    })
    route.notices?.forEach((event, i) => {
      if (route.notices?.indexOf(event) !== i)
        problems.push(`${at}.notices[${i}]: "${event}" is listed twice`)
    })
    checkResponders(route, at, platforms, problems)
    route.oncall?.fallback?.forEach((m, i) => {
      if (routeMentions(route, m, platforms).length === 0)
        problems.push(`${at}.oncall.fallback[${i}]: "${m}" fits none of the route's platforms`)
    })
    let previous = 0
    route.escalation?.forEach((tier, t) => {
      const tat = `${at}.escalation[${t}]`
      const after = parseDuration(tier.after) ?? 0
      if (after <= previous) problems.push(`${tat}.after: tiers must come later than the one before`)
      previous = after
      tier.destinations?.forEach((d, i) => {
        checkDestination(d, `${tat}.destinations[${i}]`, platforms, problems)
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
        if (routeMentions(route, m, platforms).length === 0)
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
export function loadRoutes(path: string, platforms: readonly PlatformDescriptor[]): RoutesFile {
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
  return validateRoutes(json, platforms, path)
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

function toResponders({ people, web, ...lists }: NonNullable<RouteConfig['responders']>): Responders {
  const out: Responders = {}
  if (web !== undefined) out.web = web
  for (const [platform, value] of Object.entries(lists)) {
    const set = Object.entries(value ?? {}).filter(([, ids]) => ids !== undefined)
    if (set.length > 0) out[platform] = Object.fromEntries(set) as PlatformResponders
  }
  if (people?.length) out.emails = people.map((p) => p.slice('email:'.length).toLowerCase())
  return out
}

function toDestination(d: DestinationConfig, platforms: Platforms): Destination {
  const mention = destinationMentions(d, platforms)
  return {
    platform: d.platform,
    ...(d.channel ? { channel: d.channel } : {}),
    ...(d.user ? { user: d.user } : {}),
    ...(mention.length ? { mention } : {}),
  }
}

/**
 * The router for a routes file: the first route whose `match` fits wins; no match goes to the
 * default destinations (the env defaults) and is logged.
 */
export function routesRouter(
  file: RoutesFile,
  defaults: Destination[],
  platformList: readonly PlatformDescriptor[],
  logger: Logger = silentLogger,
): Router {
  const platforms = byId(platformList)
  const byName = new Map(file.routes.map((r) => [r.name, r]))
  const mentions = (route: RouteConfig, list: string[] | undefined) =>
    (list ?? []).flatMap((m) => routeMentions(route, m, platforms))
  const destination = (d: DestinationConfig) => toDestination(d, platforms)
  const plan = (route: RouteConfig): RoutePlan => ({
    name: route.name,
    destinations: route.destinations.map(destination),
    ...(route.responders ? { responders: toResponders(route.responders) } : {}),
    quorum: route.quorum ?? 1,
    excludeRequester: route.excludeRequester ?? false,
    ...(route.notices?.length ? { notices: [...route.notices] } : {}),
    ...(route.oncall
      ? {
          oncall: {
            pagerduty: { ...route.oncall.pagerduty },
            fallback: mentions(route, route.oncall.fallback),
          },
        }
      : {}),
    escalation: (route.escalation ?? []).map(
      (tier): EscalationTier => ({
        afterMs: parseDuration(tier.after) ?? 0,
        ...(tier.oncallLevel !== undefined && route.oncall
          ? {
              oncall: {
                level: tier.oncallLevel,
                pagerduty: { ...route.oncall.pagerduty },
                fallback: mentions(route, route.oncall.fallback),
              },
            }
          : {}),
        ...(tier.mention?.length ? { mention: mentions(route, tier.mention) } : {}),
        ...(tier.destinations?.length || tier.route
          ? {
              destinations: [
                ...(tier.destinations ?? []).map(destination),
                ...(tier.route ? (byName.get(tier.route)?.destinations ?? []).map(destination) : []),
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
