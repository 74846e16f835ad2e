/**
 * Every platform askbridge knows, handed to the core (`serve`, configuration) by
 * bin/askbridge.js and the tests: nothing under src/ names a platform. Adding a platform is one
 * module in adapters/<platform>/ and one line here. The inbox comes first: it is the default
 * route's first destination.
 */
import type { PlatformModule } from '../src/adapter-kit.js'
import { discord } from './discord/platform.js'
import { slack } from './slack/platform.js'
import { teams } from './teams/platform.js'
import { web } from './web/platform.js'

export const PLATFORMS: readonly PlatformModule[] = [web, slack, discord, teams]
