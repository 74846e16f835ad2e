import { readdirSync, readFileSync } from 'node:fs'
import { expect, it } from 'vitest'

const manifest = JSON.parse(
  readFileSync(new URL('../../slack-app-manifest.json', import.meta.url), 'utf8'),
) as {
  display_information: { name: string }
  features: { bot_user: { display_name: string } }
  oauth_config: { scopes: { bot: string[] } }
  settings: { interactivity: { is_enabled: boolean }; socket_mode_enabled: boolean }
}

/**
 * The bot scopes each Web API method needs (docs.slack.dev method pages). `chat:write.public`
 * goes with chat.postMessage: cards go to public channels the bot has not joined.
 * A method missing here fails the test, so a new call cannot ship without its scope.
 */
const SCOPES: Record<string, string[]> = {
  'chat.postMessage': ['chat:write', 'chat:write.public'],
  'chat.update': ['chat:write'],
  'chat.delete': ['chat:write'],
  'api.test': [],
  'chat.postEphemeral': ['chat:write'],
  'views.open': [],
  'views.update': [],
  'conversations.open': ['im:write'],
  // Reading back a card's messages after a crash: public and private channels, DMs.
  'conversations.history': ['channels:history', 'groups:history', 'im:history'],
  'users.info': ['users:read'],
  'users.lookupByEmail': ['users:read.email'],
  'usergroups.users.list': ['usergroups:read'],
}

/** Every Web API method the adapter's source calls on its client. */
function methodsCalled(): string[] {
  const dir = new URL('../../adapters/slack/', import.meta.url)
  const found = new Set<string>()
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(new URL(file, dir), 'utf8')
    for (const m of source.matchAll(/client\.((?:[a-z]+\.)+[a-zA-Z]+)\(/g)) found.add(m[1] ?? '')
    // Raw calls by name (`client.apiCall('x.y')`) would bypass the scan above.
    expect(source).not.toMatch(/apiCall\(/)
  }
  return [...found].sort()
}

it('the manifest asks for exactly the scopes the adapter’s Web API calls need', () => {
  const methods = methodsCalled()
  expect(methods).toContain('chat.postMessage')
  const unknown = methods.filter((m) => !(m in SCOPES))
  expect(unknown, 'a Web API method without a known scope').toEqual([])
  const needed = [...new Set(methods.flatMap((m) => SCOPES[m] ?? []))].sort()
  expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(needed)
})

it('the app manifest creates a working app in one paste: interactivity, Socket Mode', () => {
  expect(manifest.display_information.name).toBe('askbridge')
  expect(manifest.features.bot_user.display_name).toBeTruthy()
  expect(manifest.settings.interactivity.is_enabled).toBe(true)
  expect(manifest.settings.socket_mode_enabled).toBe(true)
  // No events and no slash commands: the adapter listens for neither.
  expect(manifest).not.toHaveProperty('settings.event_subscriptions')
  expect(manifest).not.toHaveProperty('features.slash_commands')
})
