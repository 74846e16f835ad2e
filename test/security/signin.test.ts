/**
 * The attack suite's sign-in rows, against the real `serve` and the real OpenID Connect provider
 * (oidc-provider): only a verified address signs in; signing out ends the session on the server,
 * for every replica; the redirect URI comes from configuration, never from the Host header, and
 * the loopback Host check covers /inbox with sign-in on; cookies are Secure under an https public
 * URL. Held: state, nonce and PKCE are still enforced.
 */
import { request as httpRequest } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ConfigError, parseConfig } from '../../src/config/env.js'
import { serve } from '../../src/server/serve.js'
import { authorize, CookieJar, send, signIn } from '../helpers/oidc.js'
import { testSchema } from '../helpers/pg.js'
import { oidcEnv, startSignInBridge } from '../helpers/signin-rig.js'
import { startBridge } from '../server/helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/**
 * A bridge with sign-in; `publicUrl(url)` is ASKBRIDGE_PUBLIC_URL (the provider registers
 * `<publicUrl>/inbox/callback`); `db` shares a database between bridges.
 */
const start = (options: { publicUrl?: (url: string) => string; db?: string } = {}) =>
  startSignInBridge(cleanups, options)

async function me(bridgeUrl: string, jar: CookieJar) {
  const res = await send(jar, new URL('/inbox/api/me', bridgeUrl))
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** One request with a Host header of our choosing (fetch does not let a caller set it). */
function withHost(
  url: string,
  path: string,
  host: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { headers: { host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        body += c
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('security: inbox sign-in', () => {
  it('only email_verified === true signs in: missing, "false" and false are refused with a page, logged, no session', async () => {
    const { url, logs } = await start()
    for (const login of ['unverified@example.com', 'string-false@example.com', 'false@example.com']) {
      const jar = new CookieJar()
      const callback = await authorize(jar, url, login)
      const res = await send(jar, callback)
      expect(res.status, login).toBe(400)
      expect(await res.text()).toContain('did not say the e-mail address is verified')
      expect(jar.get('127.0.0.1', 'askbridge_session'), login).toBeUndefined()
      expect((await me(url, jar)).status).toBe(401)
    }
    const refused = logs.filter((l) => l.message === 'inbox sign-in refused')
    expect(refused.map((l) => (l.fields?.detail as { code?: string })?.code)).toEqual([
      'EMAIL_NOT_VERIFIED',
      'EMAIL_NOT_VERIFIED',
      'EMAIL_NOT_VERIFIED',
    ])
    expect(logs.filter((l) => l.message === 'inbox sign-in')).toEqual([])
    // A verified account still signs in.
    expect((await me(url, await signIn(url, 'alice@example.com'))).status).toBe(200)
  })

  it('after sign-out, replaying the old session cookie is refused', async () => {
    const { url } = await start()
    const jar = await signIn(url, 'alice@example.com')
    const cookie = jar.get('127.0.0.1', 'askbridge_session') ?? ''
    const who = await me(url, jar)
    expect(who.status).toBe(200)
    const out = await send(jar, new URL('/inbox/logout', url), {
      method: 'POST',
      headers: { 'x-csrf-token': String(who.body.csrf) },
    })
    expect(out.status).toBe(200)
    const replay = new CookieJar()
    replay.set('127.0.0.1', 'askbridge_session', cookie)
    const again = await me(url, replay)
    expect(again.status).toBe(401)
    expect(again.body).toMatchObject({ error: { code: 'SIGN_IN_REQUIRED' } })
    const cards = await send(replay, new URL('/inbox/api/cards', url))
    expect(cards.status).toBe(401)
  })

  it('sign-out on one replica holds on another (sessions live in the shared PostgreSQL database)', async () => {
    const schema = await testSchema()
    cleanups.push(() => schema.drop())
    const a = await start({ db: schema.url })
    // B: the same database and client, its own port; it only checks sessions.
    const b = await serve({
      config: parseConfig(
        {
          ASKBRIDGE_PORT: '0',
          ASKBRIDGE_DB: schema.url,
          ASKBRIDGE_PUBLIC_URL: a.url,
          ...oidcEnv(a.provider.issuer),
        },
        PLATFORMS,
      ),
      platforms: PLATFORMS,
      escalationIntervalMs: 0,
    })
    cleanups.push(() => b.close())
    const jar = await signIn(a.url, 'bob@example.com')
    const who = await me(b.url, jar)
    expect(who.status).toBe(200)
    expect(who.body).toMatchObject({ email: 'bob@example.com' })
    const cookie = jar.get('127.0.0.1', 'askbridge_session') ?? ''
    await send(jar, new URL('/inbox/logout', a.url), {
      method: 'POST',
      headers: { 'x-csrf-token': String(who.body.csrf) },
    })
    const replay = new CookieJar()
    replay.set('127.0.0.1', 'askbridge_session', cookie)
    expect((await me(b.url, replay)).status).toBe(401)
  })

  it('the redirect URI comes from configuration, never the Host header; /inbox keeps the loopback Host check', async () => {
    const { url } = await start()
    // Another host name is refused on every /inbox path, sign-in's own included.
    for (const path of ['/inbox/login', '/inbox/api/cards', '/inbox', '/inbox/callback?code=x&state=y']) {
      const res = await withHost(url, path, 'attacker.example')
      expect(res.status, path).toBe(403)
      expect(JSON.parse(res.body), path).toMatchObject({ error: { code: 'FORBIDDEN_HOST' } })
    }
    // A loopback name that is not the configured one: the redirect URI is still the configured one.
    const port = new URL(url).port
    const res = await withHost(url, '/inbox/login', `localhost:${port}`)
    expect(res.status).toBe(302)
    const location = new URL(String(res.headers.location))
    expect(location.searchParams.get('redirect_uri')).toBe(`${url}/inbox/callback`)
    // Sign-in without either setting is a configuration error naming both.
    expect(() => parseConfig(oidcEnv('https://accounts.example.com'), PLATFORMS)).toThrow(ConfigError)
    expect(() => parseConfig(oidcEnv('https://accounts.example.com'), PLATFORMS)).toThrow(
      /ASKBRIDGE_OIDC_REDIRECT_URI or ASKBRIDGE_PUBLIC_URL is needed/,
    )
  })

  it('cookies are Secure when the public URL is https (the redirect URI derived from it)', async () => {
    const { url } = await start({ publicUrl: () => 'https://askbridge.example' })
    const jar = new CookieJar()
    const login = await send(jar, new URL('/inbox/login', url))
    expect(login.status).toBe(302)
    expect(new URL(login.headers.get('location') ?? '').searchParams.get('redirect_uri')).toBe(
      'https://askbridge.example/inbox/callback',
    )
    expect(login.headers.getSetCookie().join('\n')).toMatch(/askbridge_signin=[^;]+;.*; Secure/)
    // The provider sends the browser to the public URL; here it reaches the bridge directly.
    const callback = await authorize(jar, url, 'alice@example.com')
    expect(callback.origin).toBe('https://askbridge.example')
    const res = await send(jar, new URL(`${callback.pathname}${callback.search}`, url))
    expect(res.status).toBe(302)
    const session = res.headers.getSetCookie().find((c) => c.startsWith('askbridge_session='))
    expect(session).toMatch(/; Secure/)
    expect(session).toMatch(/; HttpOnly/)
  })

  it('the inbox sign-in link cookie is Secure too when the public URL is https', async () => {
    const b = await startBridge({ ASKBRIDGE_PUBLIC_URL: 'https://askbridge.example' })
    cleanups.push(() => b.close())
    const res = await fetch(`${b.url}${await b.bridge.http.signInLink()}`, { redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(res.headers.get('set-cookie')).toMatch(/^askbridge_inbox=[^;]+;.*; Secure$/)
    const plain = await startBridge({})
    cleanups.push(() => plain.close())
    const local = await fetch(`${plain.url}${await plain.bridge.http.signInLink()}`, { redirect: 'manual' })
    expect(local.status).toBe(302)
    expect(local.headers.get('set-cookie')).not.toMatch(/Secure/)
  })

  it('held: state, nonce and PKCE are still enforced', async () => {
    const { url } = await start()
    const jar = new CookieJar()
    const login = await send(jar, new URL('/inbox/login', url))
    const authz = new URL(login.headers.get('location') ?? '')
    expect(authz.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authz.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/)
    expect(authz.searchParams.get('state')).toBeTruthy()
    expect(authz.searchParams.get('nonce')).toBeTruthy()
    // A wrong state is refused, no session.
    const jar2 = new CookieJar()
    const callback = await authorize(jar2, url, 'alice@example.com')
    callback.searchParams.set('state', 'not-the-state-askbridge-issued')
    expect((await send(jar2, callback)).status).toBe(400)
    expect(jar2.get('127.0.0.1', 'askbridge_session')).toBeUndefined()
    // A nonce changed on the way to the provider: the ID token does not carry this browser's.
    const jar3 = new CookieJar()
    const tampered = await authorize(jar3, url, 'alice@example.com', (u) => {
      u.searchParams.set('nonce', 'a-nonce-askbridge-never-issued')
      return u
    })
    expect((await send(jar3, tampered)).status).toBe(400)
    expect(jar3.get('127.0.0.1', 'askbridge_session')).toBeUndefined()
  })
})
