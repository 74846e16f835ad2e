/**
 * The routes file's shape (ASKBRIDGE_ROUTES): zod schemas built from the platforms' modules
 * (their ids, responder lists and people accounts); the ids themselves are checked by
 * `validateRoutes` with each platform's rules.
 */
import { z } from 'zod'
import type { PlatformDescriptor } from '../platform-descriptor.js'
import { parseDuration } from './duration.js'

/** PagerDuty object ids (`PABC123`). */
const PAGERDUTY_ID = /^[A-Z0-9]{2,20}$/
const EMAIL = /^[^\s@:]+@[^\s@:]+$/

/** The Claude Code hook events a route may post as notices (see `notices`). */
export const NOTICE_EVENTS = ['Notification', 'Stop'] as const
export type NoticeEvent = (typeof NOTICE_EVENTS)[number]

const mentionSchema = z.string()
/** A destination on one of the platforms (`ids`); its channel, user and mentions are checked later. */
function destinationSchema(ids: readonly string[]) {
  const named = ids.map((id) => `"${id}"`)
  const list = named.length > 1 ? `${named.slice(0, -1).join(', ')} or ${named.at(-1)}` : (named[0] ?? '')
  return z.strictObject({
    platform: z.string().refine((v) => ids.includes(v), { error: `platform must be ${list}` }),
    channel: z.string().optional(),
    user: z.string().optional(),
    mention: z.array(mentionSchema).optional(),
  })
}
const durationSchema = z
  .string()
  .refine((v) => parseDuration(v) !== undefined, { error: 'not a duration (use 90s, 10m, 2h or 1d)' })

const oncallSchema = z.strictObject({
  pagerduty: z
    .strictObject({
      schedule: z.string().regex(PAGERDUTY_ID, 'not a PagerDuty schedule id (P…)').optional(),
      escalationPolicy: z
        .string()
        .regex(PAGERDUTY_ID, 'not a PagerDuty escalation policy id (P…)')
        .optional(),
    })
    .refine((p) => (p.schedule === undefined) !== (p.escalationPolicy === undefined), {
      error: 'name a schedule or an escalationPolicy (one of them)',
    }),
  /** Mentioned (and allowed to answer) when PagerDuty is unreachable and nobody is known yet. */
  fallback: z.array(mentionSchema).optional(),
})

/** `users`, `groups`, `roles`: lists of ids, checked against the platform's rules later. */
const platformRespondersSchema = z.strictObject({
  users: z.array(z.string()).optional(),
  groups: z.array(z.string()).optional(),
  roles: z.array(z.string()).optional(),
})

const routeSchema = (destination: ReturnType<typeof destinationSchema>) =>
  z.strictObject({
    name: z.string().min(1),
    match: z
      .strictObject({
        intent: z.enum(['approval', 'plan-review', 'none']).optional(),
        agentId: z.string().optional(),
        header: z.string().optional(),
        route: z.string().optional(),
        /** A Claude Code hook's tool name: `Bash`, `Edit|Write`-style alternatives are not globs, use one route each; `mcp__github__*` globs. */
        tool: z.string().min(1).optional(),
        /** A regular expression searched in the hook's rendered tool input (the Bash command, the file path, the URL). */
        toolInput: z
          .string()
          .min(1)
          .refine((v) => compiles(v), { error: 'not a valid regular expression' })
          .optional(),
        /**
         * A `*` glob over the source of an MCP tool's server (`mcp_server.source` in the hook:
         * user, project, local, plugin, managed, ...): who configured the server, which a server
         * name alone does not say.
         */
        mcpSource: z.string().min(1).optional(),
      })
      .optional(),
    destinations: z.array(destination).min(1),
    /**
     * Claude Code hook events posted to the destinations as a notice without buttons (an FYI:
     * a session is waiting, or finished its turn). Off unless listed.
     */
    notices: z
      .array(
        z.enum(NOTICE_EVENTS, {
          error: `each entry must be one of ${NOTICE_EVENTS.map((e) => `"${e}"`).join(', ')}`,
        }),
      )
      .optional(),
    /** Who may answer: per platform its lists, `web` (the inbox), and people by e-mail. */
    responders: z
      .strictObject({
        web: z.boolean().optional(),
        /** People by e-mail (`email:ADDRESS`), on every platform through `people` and sign-in. */
        people: z
          .array(z.string().regex(/^email:[^\s@:]+@[^\s@:]+$/, 'not an "email:ADDRESS" entry'))
          .optional(),
      })
      .catchall(platformRespondersSchema)
      .optional(),
    /** Mention and allow whoever is on call now. */
    oncall: oncallSchema.optional(),
    quorum: z.number().int().min(1).max(20).optional(),
    excludeRequester: z.boolean().optional(),
    escalation: z
      .array(
        z.strictObject({
          after: durationSchema,
          mention: z.array(mentionSchema).optional(),
          destinations: z.array(destination).optional(),
          /** Mirror to another route's destinations. */
          route: z.string().optional(),
          /** Mention and allow whoever is on call at this level of the route's escalation policy. */
          oncallLevel: z.number().int().min(1).max(20).optional(),
        }),
      )
      .optional(),
  })

/**
 * email -> `{<platform>: user id, ...}`: one person's accounts on each platform. A bare id names
 * no platform, so it is refused with the object form to write instead.
 */
function peopleSchema(platforms: readonly PlatformDescriptor[]) {
  const accounts: Record<string, z.ZodOptional<z.ZodString>> = {}
  for (const p of platforms) {
    if (p.ids) accounts[p.id] = z.string().regex(p.ids.user.pattern, `not a ${p.ids.user.what}`).optional()
  }
  const object = z.strictObject({
    ...accounts,
    /** Agents this person runs (`*` globs over agent ids): they are those agents' requester. */
    agents: z
      .array(z.string().regex(/^[A-Za-z0-9_.:*-]{1,64}$/, 'not an agent id or a * glob of agent ids'))
      .min(1)
      .optional(),
  })
  const value = z
    .unknown()
    .superRefine((v, ctx) => {
      if (typeof v === 'string') ctx.addIssue({ code: 'custom', message: bareIdProblem(v, platforms) })
    })
    .pipe(object)
  return z.record(z.string().regex(EMAIL, 'keys are e-mail addresses'), value)
}

/** What to write instead of a bare id in the `people` map: an object naming the id's platform. */
function bareIdProblem(id: string, platforms: readonly PlatformDescriptor[]): string {
  const withIds = platforms.filter((p) => p.ids)
  const fits = withIds.filter((p) => p.ids?.user.pattern.test(id))
  const example = (fits[0] ?? withIds[0])?.id ?? 'PLATFORM'
  const others = (fits.length > 0 ? fits : withIds).slice(1).map((p) => `"${p.id}"`)
  const or = others.length > 0 ? ` (or ${others.join(', ')})` : ''
  return (
    `"${id}" is a bare id, which names no platform: write this person's accounts as an object, ` +
    `e.g. { "${example}": ${JSON.stringify(id)} }${or}`
  )
}

/** The routes file's schema for these platforms. */
export function routesFileSchema(platforms: readonly PlatformDescriptor[]) {
  return z.strictObject({
    people: peopleSchema(platforms).optional(),
    routes: z.array(routeSchema(destinationSchema(platforms.map((p) => p.id)))),
  })
}

/** A parsed routes file. */
export type RoutesFile = z.infer<ReturnType<typeof routesFileSchema>>
export type RouteConfig = RoutesFile['routes'][number]
export type DestinationConfig = z.infer<ReturnType<typeof destinationSchema>>

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}
