/**
 * A chat platform as the core sees it: one module per platform, written in
 * adapters/<platform>/platform.ts and handed to the core as a list (adapters/platforms.ts), so
 * the core names no platform. The part configuration and the routes file read (ids, variables,
 * mentions) is its descriptor (src/platform-descriptor.ts); this adds how the composition root
 * starts it.
 */
import type { ChatAdapter } from './answerer/adapter.js'
import type { Destination } from './card/types.js'
import type { Logger } from './log.js'
import type { PlatformDescriptor } from './platform-descriptor.js'
import type { HttpMount, WebhookMount } from './server/mounts.js'
import type { StoreCapabilities } from './store/capabilities.js'
import type { Store } from './store/types.js'

export { envOf, type IdRule, isEnabled, respondersOn } from './platform-descriptor.js'

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

/** One platform's module: its descriptor, and how to start it. */
export interface PlatformModule extends PlatformDescriptor {
  /**
   * Start the platform's adapter (called when `enabledBy` is set, or always). Its people
   * look-up is the adapter's `lookupByEmail`, where the platform has one.
   */
  build(input: PlatformBuildInput): Promise<BuiltPlatform>
}
