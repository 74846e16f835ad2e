import { PLATFORMS } from '../../adapters/platforms.js'
import { type Mention, parseMention } from '../../src/platform-descriptor.js'

/** Mentions as the routes file writes them (`subteam:S…`), parsed by the platform's module. */
export function mentions(platform: string, ...texts: string[]): Mention[] {
  const module = PLATFORMS.find((p) => p.id === platform)
  if (!module) throw new Error(`no platform ${platform}`)
  return texts.map((text) => {
    const mention = parseMention(module, text)
    if (!mention) throw new Error(`"${text}" is not a ${platform} mention`)
    return mention
  })
}
