/** The routes file's shape (ASKBRIDGE_ROUTES): zod schemas and the platform id formats they check. */
import { z } from 'zod'
import { parseDuration } from './duration.js'

/** Slack conversation ids (C…, G…, D…) and Discord snowflakes. */
export const SLACK_CHANNEL = /^[CGD][A-Z0-9]{2,}$/
export const SLACK_USER = /^[UW][A-Z0-9]{2,}$/
export const SLACK_GROUP = /^S[A-Z0-9]{2,}$/
export const SNOWFLAKE = /^\d{15,21}$/
/** A Teams channel conversation id (`19:…@thread.tacv2`) and a Microsoft Entra object id (a GUID). */
export const TEAMS_CHANNEL = /^19:[^\s/;]{1,200}@thread\.(tacv2|skype)$/
export const TEAMS_USER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** PagerDuty object ids (`PABC123`). */
const PAGERDUTY_ID = /^[A-Z0-9]{2,20}$/
const EMAIL = /^[^\s@:]+@[^\s@:]+$/

/** The Claude Code hook events a route may post as notices (see `notices`). */
export const NOTICE_EVENTS = ['Notification', 'Stop'] as const
export type NoticeEvent = (typeof NOTICE_EVENTS)[number]

const mentionSchema = z.string()
const destinationSchema = z.strictObject({
  platform: z.enum(['slack', 'discord', 'teams', 'web'], {
    error: 'platform must be "slack", "discord", "teams" or "web"',
  }),
  channel: z.string().optional(),
  user: z.string().optional(),
  mention: z.array(mentionSchema).optional(),
})
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

const routeSchema = z.strictObject({
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
  destinations: z.array(destinationSchema).min(1),
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
  responders: z
    .strictObject({
      slack: z
        .strictObject({ users: z.array(z.string()).optional(), groups: z.array(z.string()).optional() })
        .optional(),
      discord: z
        .strictObject({ users: z.array(z.string()).optional(), roles: z.array(z.string()).optional() })
        .optional(),
      teams: z.strictObject({ users: z.array(z.string()).optional() }).optional(),
      web: z.boolean().optional(),
      /** People by e-mail (`email:ADDRESS`), on every platform through `people` and sign-in. */
      people: z
        .array(z.string().regex(/^email:[^\s@:]+@[^\s@:]+$/, 'not an "email:ADDRESS" entry'))
        .optional(),
    })
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
        destinations: z.array(destinationSchema).optional(),
        /** Mirror to another route's destinations. */
        route: z.string().optional(),
        /** Mention and allow whoever is on call at this level of the route's escalation policy. */
        oncallLevel: z.number().int().min(1).max(20).optional(),
      }),
    )
    .optional(),
})

/** email -> a Discord user id, or `{discord?, slack?, teams?}`: one person's accounts on each platform. */
const peopleSchema = z.record(
  z.string().regex(EMAIL, 'keys are e-mail addresses'),
  z.union([
    z.string().regex(SNOWFLAKE, 'not a Discord user id (a snowflake)'),
    z.strictObject({
      discord: z.string().regex(SNOWFLAKE, 'not a Discord user id (a snowflake)').optional(),
      slack: z.string().regex(SLACK_USER, 'not a Slack user id (U…)').optional(),
      teams: z.string().regex(TEAMS_USER, 'not a Microsoft Entra object id (a GUID)').optional(),
      /** Agents this person runs (`*` globs over agent ids): they are those agents' requester. */
      agents: z
        .array(z.string().regex(/^[A-Za-z0-9_.:*-]{1,64}$/, 'not an agent id or a * glob of agent ids'))
        .min(1)
        .optional(),
    }),
  ]),
)

export const routesFileSchema = z.strictObject({
  people: peopleSchema.optional(),
  routes: z.array(routeSchema),
})
export type RoutesFile = z.infer<typeof routesFileSchema>
export type RouteConfig = RoutesFile['routes'][number]
export type DestinationConfig = z.infer<typeof destinationSchema>

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}
