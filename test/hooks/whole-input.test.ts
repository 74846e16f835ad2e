/**
 * The whole tool input of a hook call in the inbox (`GET /inbox/tool/:callId`): behind the
 * inbox's authentication, and the public URL the cards link it with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import type { CardState } from '../../src/card/types.js'
import { ConfigError, parseConfig, publicUrlOf } from '../../src/config/env.js'
import { fixture } from '../helpers/claude-code.js'
import { until } from '../helpers/service.js'
import { inboxCookie, startBridge, type TestBridge } from '../server/helpers.js'

describe('the public URL cards link with', () => {
  it('ASKBRIDGE_PUBLIC_URL, else the sign-in redirect URI without /inbox/callback, else none', () => {
    expect(publicUrlOf(parseConfig({ ASKBRIDGE_PUBLIC_URL: 'https://ask.example.com/' }, PLATFORMS))).toBe(
      'https://ask.example.com',
    )
    const oidc = {
      ASKBRIDGE_OIDC_ISSUER: 'https://accounts.example.com',
      ASKBRIDGE_OIDC_CLIENT_ID: 'id',
      ASKBRIDGE_OIDC_CLIENT_SECRET: 'secret',
      ASKBRIDGE_OIDC_REDIRECT_URI: 'https://corp.example.com/askbridge/inbox/callback',
    }
    expect(publicUrlOf(parseConfig(oidc, PLATFORMS))).toBe('https://corp.example.com/askbridge')
    expect(
      publicUrlOf(parseConfig({ ...oidc, ASKBRIDGE_PUBLIC_URL: 'https://ask.example.com' }, PLATFORMS)),
    ).toBe('https://ask.example.com')
    expect(publicUrlOf(parseConfig({}, PLATFORMS))).toBeUndefined()
  })

  it('a public URL that is not an http(s) URL is a configuration error naming it', () => {
    expect(() => parseConfig({ ASKBRIDGE_PUBLIC_URL: 'ask.example.com' }, PLATFORMS)).toThrow(ConfigError)
    expect(() => parseConfig({ ASKBRIDGE_PUBLIC_URL: 'ask.example.com' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_PUBLIC_URL/,
    )
  })
})

describe('GET /inbox/tool/:callId with a token', () => {
  const TOKEN = 'whole-input-token'
  const auth = { authorization: `Bearer ${TOKEN}` }
  let tb: TestBridge

  beforeAll(async () => {
    tb = await startBridge({ ASKBRIDGE_API_TOKEN: TOKEN })
  })
  afterAll(async () => {
    await tb?.close()
  })

  it('needs the inbox cookie like the rest of the inbox (never the API token); escapes what the agent sent', async () => {
    const payload = fixture('permission-request-bash')
    payload.tool_input = { command: `printf '<img src=x onerror=alert(1)>' ${'z'.repeat(5_000)}` }
    const hook = fetch(`${tb.url}/v1/hooks/claude-code?timeout=60`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify(payload),
    })
    const card = await until(
      async () => (await tb.bridge.store.listCards<CardState>()).map((c) => c.state)[0],
      'the hook card',
    )
    const path = `${tb.url}/inbox/tool/${card.callId}`
    expect((await fetch(path)).status).toBe(401)
    // A person's browser without the cookie gets the page that says how to get in.
    const browser = await fetch(path, { headers: { accept: 'text/html' } })
    expect(browser.status).toBe(401)
    expect(await browser.text()).not.toContain('printf')
    expect((await fetch(path, { headers: auth })).status).toBe(401)
    const page = await fetch(path, { headers: { cookie: inboxCookie(tb.url) } })
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html.includes(`printf '&lt;img src=x onerror=alert(1)>' ${'z'.repeat(5_000)}`)).toBe(true)
    expect(html.includes('<img')).toBe(false)
    const tokenCookie = await fetch(path, { headers: { cookie: `askbridge_token=${TOKEN}` } })
    expect(tokenCookie.status).toBe(401)
    const cancel = await fetch(`${tb.url}/v1/questions/${card.callId}`, { method: 'DELETE', headers: auth })
    expect(cancel.status).toBe(200)
    expect(await (await hook).json()).toEqual({})
  })
})
