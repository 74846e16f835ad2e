/**
 * A chat platform as the core sees it: one descriptor per platform, written in
 * adapters/<platform>/platform.ts and handed to the core as a list (adapters/platforms.ts), so
 * the core names no platform. Configuration, the routes file, the responder policy, staffing and
 * the composition root read what they need from the descriptors.
 */
import type { z } from 'zod'
import type { ChatAdapter } from './answerer/adapter.js'
import type { Destination, Mention, MentionKind, PlatformResponders, Responders } from './card/types.js'
import type { Logger } from './log.js'
import type { HttpMount, WebhookMount } from './server/http.js'
import type { StoreCapabilities } from './store/capabilities.js'
import type { Store } from './store/types.js'

/** A kind of platform id and how a message names it (`a Slack user id (U…)`). */
export interface IdRule {
  pattern: RegExp
  what: string
  /** How the id is shown in a hint (`U…`). @default 'ID' */
  short?: string
}

export type { Mention, MentionKind, PlatformResponders }

/** The responder lists a platform takes in the routes file's `responders.<platform>`. */
export type ResponderList = 'users' | 'groups' | 'roles'

/** A platform's responders in `responders` (undefined for the inbox's `web` and `emails`). */
export function respondersOn(
  responders: Responders | undefined,
  platform: string,
): PlatformResponders | undefined {
  const value = platform === 'web' || platform === 'emails' ? undefined : responders?.[platform]
  return typeof value === 'object' && !Array.isArray(value) ? value : undefined
}

/** The web inbox as the server sees it: an adapter that also answers HTTP. */
export interface WebInbox extends ChatAdapter, HttpMount {
  readonly connections: number
}

/** What `build()` gets from the composition root. */
export interface PlatformBuildInput {
  /** The validated configuration; read the platform's own variables with `envOf`. */
  config: Readonly<Record<string, unknown>>
  store: Store
  logger: Logger
  /** What the store offers when several bridges share it (leader election, a replay guard). */
  capabilities: StoreCapabilities
  /** Where people reach the bridge (ASKBRIDGE_PUBLIC_URL), for links into the inbox. */
  publicUrl?: string
  heartbeatMs?: number
}

/** What `build()` returns. */
export interface BuiltPlatform {
  adapter: ChatAdapter
  /** The default destination (the platform's default channel), when configured. */
  destination?: Destination
  /** Signed webhooks on the bridge's port. */
  webhooks?: WebhookMount[]
  /** The web inbox (exactly one platform builds it). */
  inbox?: WebInbox
}

/** One platform's module. */
export interface PlatformModule {
  /** The id in destinations, responders, people and the adapter's `platform`. */
  readonly id: string
  /** Its name for people ("Slack"). */
  readonly name: string
  /** Its environment variables: a fragment of the configuration schema. */
  readonly env: Readonly<Record<string, z.ZodType<unknown, string | undefined>>>
  /** Which of its variables hold secrets (cut from every log line). */
  readonly secrets: readonly string[]
  /** The variable whose presence turns the platform on; absent: always on. */
  readonly enabledBy?: string
  /** What to set to turn it on, for messages ("set X and Y"). */
  readonly setUp?: string
  /** The variable naming its default channel, and an example value. */
  readonly defaultChannel?: { variable: string; example: string }
  /** Rules across its variables, on the raw values, so one message names every problem. */
  crossProblems?(get: (variable: string) => string | undefined): string[]
  /** Channel and user ids of its destinations; absent: destinations take neither (the inbox). */
  readonly ids?: { channel: IdRule; user: IdRule }
  /** Its mention grammar: the word written before each kind of id (`subteam:S…`) and the id. */
  readonly mentions?: Partial<Record<MentionKind, { word: string; id: IdRule }>>
  /** Its responder lists in the routes file (`users`, `groups` looked up, `roles` held). */
  readonly responders?: Partial<Record<ResponderList, IdRule>>
  /**
   * Start the platform's adapter (called when `enabledBy` is set, or always). Its people
   * look-up is the adapter's `lookupByEmail`, where the platform has one.
   */
  build(input: PlatformBuildInput): Promise<BuiltPlatform>
}

/** The platform's own variables from a validated configuration, typed by its schema fragment. */
export function envOf<E extends PlatformModule['env']>(
  config: Readonly<Record<string, unknown>>,
  _env: E,
): { [K in keyof E]: z.output<E[K]> } {
  return config as { [K in keyof E]: z.output<E[K]> }
}

/** Whether a platform is on in a configuration. */
export function isEnabled(platform: PlatformModule, config: Readonly<Record<string, unknown>>): boolean {
  return platform.enabledBy === undefined || config[platform.enabledBy] !== undefined
}

/** The mention kind a responder list adds to. */
export const LIST_OF: Record<MentionKind, ResponderList> = { user: 'users', group: 'groups', role: 'roles' }

/**
 * Parse a written mention (`word:id`, as in the routes file) on a platform: the one place a
 * mention's text is taken apart. Undefined when it is not one of the platform's mentions.
 */
export function parseMention(platform: PlatformModule, text: string): Mention | undefined {
  const colon = text.indexOf(':')
  if (colon < 0) return undefined
  const word = text.slice(0, colon)
  const id = text.slice(colon + 1)
  for (const [kind, rule] of Object.entries(platform.mentions ?? {}) as Array<
    [MentionKind, { word: string; id: IdRule }]
  >) {
    if (rule.word === word && rule.id.pattern.test(id)) return { platform: platform.id, kind, id }
  }
  return undefined
}

/** How a platform's mentions are written, for messages (`subteam:S… or user:U…`). */
export function mentionHint(platform: PlatformModule): string {
  const kinds = Object.values(platform.mentions ?? {})
  if (kinds.length === 0) return `no mentions on ${platform.id}`
  return kinds.map((k) => `${k.word}:${k.id.short ?? 'ID'}`).join(' or ')
}
