/**
 * A chat platform as configuration, the routes file and the responder policy see it: its ids,
 * variables, mention grammar and responder lists, written in adapters/<platform>/platform.ts.
 * Only this part of a platform's module lives down here, below the routing and the
 * configuration; how a platform starts (its adapter, webhooks, inbox) is in src/platform.ts.
 */
import type { z } from 'zod'
import type { Mention, MentionKind, PlatformResponders, Responders } from './card/types.js'

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

/**
 * One platform as configuration and the routes file see it: its ids, variables and mention
 * grammar. Its module (`PlatformModule`, src/platform.ts) adds how to start it.
 */
export interface PlatformDescriptor {
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
}

/** The platform's own variables from a validated configuration, typed by its schema fragment. */
export function envOf<E extends PlatformDescriptor['env']>(
  config: Readonly<Record<string, unknown>>,
  _env: E,
): { [K in keyof E]: z.output<E[K]> } {
  return config as { [K in keyof E]: z.output<E[K]> }
}

/** Whether a platform is on in a configuration. */
export function isEnabled(platform: PlatformDescriptor, config: Readonly<Record<string, unknown>>): boolean {
  return platform.enabledBy === undefined || config[platform.enabledBy] !== undefined
}

/** The mention kind a responder list adds to. */
export const LIST_OF: Record<MentionKind, ResponderList> = { user: 'users', group: 'groups', role: 'roles' }

/**
 * Parse a written mention (`word:id`, as in the routes file) on a platform: the one place a
 * mention's text is taken apart. Undefined when it is not one of the platform's mentions.
 */
export function parseMention(platform: PlatformDescriptor, text: string): Mention | undefined {
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
export function mentionHint(platform: PlatformDescriptor): string {
  const kinds = Object.values(platform.mentions ?? {})
  if (kinds.length === 0) return `no mentions on ${platform.id}`
  return kinds.map((k) => `${k.word}:${k.id.short ?? 'ID'}`).join(' or ')
}
