/** The platforms `serve` builds: every adapter, the default route and the platforms' webhooks. */
import type { ChatAdapter } from '../answerer/adapter.js'
import type { Destination } from '../card/types.js'
import { type Config, publicUrlOf } from '../config/env.js'
import { isEnabled, type PlatformBuildInput, type PlatformModule, type WebInbox } from '../platform.js'
import { capabilitiesOf } from '../store/capabilities.js'
import type { WebhookMount } from './mounts.js'

/** What the platforms built: every adapter, the default route and the platforms' webhooks. */
export interface BuiltAdapters {
  web: WebInbox
  /** Every adapter to start, the web inbox included. */
  adapters: ChatAdapter[]
  /** The default route: the web inbox plus each configured platform's default channel. */
  destinations: Destination[]
  /** Platform webhooks on the bridge's port. */
  webhooks: WebhookMount[]
}

/** Build every platform that is on, in the list's order; exactly one of them is the inbox. */
export async function buildPlatforms(
  platforms: readonly PlatformModule[],
  input: Omit<PlatformBuildInput, 'capabilities' | 'publicUrl'> & { config: Config },
): Promise<BuiltAdapters> {
  const capabilities = capabilitiesOf(input.store)
  const publicUrl = publicUrlOf(input.config)
  const adapters: ChatAdapter[] = []
  const destinations: Destination[] = []
  const webhooks: WebhookMount[] = []
  let web: WebInbox | undefined
  for (const platform of platforms) {
    if (!isEnabled(platform, input.config)) continue
    const built = await platform.build({ ...input, capabilities, ...(publicUrl ? { publicUrl } : {}) })
    adapters.push(built.adapter)
    if (built.destination) destinations.push(built.destination)
    webhooks.push(...(built.webhooks ?? []))
    if (built.inbox) web = built.inbox
  }
  if (!web) throw new Error('no platform in the list builds the web inbox')
  return { web, adapters, destinations, webhooks }
}
