import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'

const manifest = JSON.parse(
  readFileSync(new URL('../../slack-app-manifest.json', import.meta.url), 'utf8'),
) as {
  display_information: { name: string }
  features: { bot_user: { display_name: string } }
  oauth_config: { scopes: { bot: string[] } }
  settings: { interactivity: { is_enabled: boolean }; socket_mode_enabled: boolean }
}

it('the app manifest creates a working app in one paste: scopes, interactivity, Socket Mode', () => {
  expect(manifest.display_information.name).toBe('askbridge')
  expect(manifest.features.bot_user.display_name).toBeTruthy()
  // Every Web API method the adapter calls is covered: chat.* (chat:write), posting without
  // joining (chat:write.public), conversations.open (im:write), users.info (users:read),
  // usergroups.users.list (usergroups:read). views.* needs no scope.
  expect(manifest.oauth_config.scopes.bot.sort()).toEqual(
    ['chat:write', 'chat:write.public', 'im:write', 'usergroups:read', 'users:read'].sort(),
  )
  expect(manifest.settings.interactivity.is_enabled).toBe(true)
  expect(manifest.settings.socket_mode_enabled).toBe(true)
})
