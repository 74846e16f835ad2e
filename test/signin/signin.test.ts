/**
 * Inbox sign-in against a real OpenID Connect provider (oidc-provider) in this process: the
 * code flow with PKCE, state and nonce; signed, expiring session cookies; CSRF on every write;
 * answers as the signed-in person; refusals logged with no session; an unreachable issuer at
 * start; and one person on Slack and in the inbox counted once in a quorum.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ConfigError, parseConfig } from '../../src/config/env.js'
import { validateRoutes } from '../../src/routing/routes.js'
import { serve } from '../../src/server/serve.js'
import { FakeSlack } from '../fakes/slack/server.js'
import { authorize, CLIENT_ID, CLIENT_SECRET, CookieJar, freePort, send, signIn } from '../helpers/oidc.js'
import { deployApproval } from '../helpers/routing.js'
import { refFor, until } from '../helpers/service.js'
import { startSignInBridge } from '../helpers/signin-rig.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const start = (
  options: {
    env?: Record<string, string>
    routes?: ReturnType<typeof validateRoutes>
    now?: () => number
  } = {},
) =>
  startSignInBridge(cleanups, {
    ...(options.env ? { env: options.env } : {}),
    serve: {
      heartbeatMs: 100,
      ...(options.routes ? { routes: options.routes } : {}),
      inboxSession: { ttlMs: 60 * 60_000, ...(options.now ? { now: options.now } : {}) },
    },
  })

/**
 * Ask an approval through the API (blocking) and wait until the inbox lists it; `answer` is the
 * blocking ask's response.
 */
async function ask(bridgeUrl: string, callId: string, jar: CookieJar) {
  const asking = fetch(`${bridgeUrl}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId, questions: [deployApproval] }),
  }).then((r) => r.json() as Promise<Record<string, unknown>>)
  asking.catch(() => {})
  await until(async () => {
    const res = await send(jar, new URL('/inbox/api/cards', bridgeUrl))
    const body = (await res.json()) as { cards?: Array<{ callId: string }> }
    return body.cards?.some((c) => c.callId === callId)
  }, `${callId} in the inbox`)
  return { answer: asking }
}

async function me(bridgeUrl: string, jar: CookieJar) {
  const res = await send(jar, new URL('/inbox/api/me', bridgeUrl))
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const act = (
  bridgeUrl: string,
  jar: CookieJar,
  callId: string,
  action: object,
  headers: Record<string, string> = {},
) =>
  send(jar, new URL(`/inbox/api/cards/${callId}/actions`, bridgeUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ action, person: { name: 'Mallory' } }),
  })

describe('inbox sign-in', () => {
  it('signs in with the code flow, answers as the signed-in person (the name is not the page’s), signs out', async () => {
    const { url } = await start()
    // Not signed in: the page goes to sign-in, the API refuses.
    const anon = new CookieJar()
    const page = await send(anon, new URL('/inbox', url))
    expect(page.status).toBe(302)
    expect(page.headers.get('location')).toBe('/inbox/login')
    expect((await send(anon, new URL('/inbox/api/cards', url))).status).toBe(401)

    const jar = await signIn(url, 'alice@example.com')
    const cookie = jar.get('127.0.0.1', 'askbridge_session')
    expect(cookie).toBeDefined()
    const who = await me(url, jar)
    expect(who.body).toMatchObject({ signedIn: true, name: 'Alice Example', email: 'alice@example.com' })
    const csrf = String(who.body.csrf)

    const { answer: asking } = await ask(url, 'web-1', jar)
    const res = await act(url, jar, 'web-1', { type: 'approve' }, { 'x-csrf-token': csrf })
    expect(res.status).toBe(200)
    expect(await asking).toEqual({ callId: 'web-1', answers: [{ id: 'deploy', selected: ['Approve'] }] })
    const shown = (await (await send(jar, new URL('/inbox/api/cards', url))).json()) as {
      cards: Array<{ callId: string; statusLines: Array<{ text: string }> }>
    }
    const lines = shown.cards.find((c) => c.callId === 'web-1')?.statusLines.map((l) => l.text)
    expect(lines?.join('\n')).toContain('Alice Example')
    const audit = (await (await fetch(`${url}/v1/audit?callId=web-1`)).json()) as {
      events: Array<{ kind: string; actor?: Record<string, unknown> }>
    }
    expect(audit.events.find((e) => e.kind === 'completed')?.actor).toMatchObject({
      platform: 'web',
      userId: 'alice@example.com',
      name: 'Alice Example',
    })

    const out = await send(jar, new URL('/inbox/logout', url), {
      method: 'POST',
      headers: { 'x-csrf-token': csrf },
    })
    expect(out.status).toBe(200)
    expect(jar.get('127.0.0.1', 'askbridge_session')).toBeUndefined()
    expect((await me(url, jar)).status).toBe(401)
  })

  it('refuses a forged or expired session cookie', async () => {
    let now = 1_900_000_000_000
    const { url } = await start({ now: () => now })
    const jar = await signIn(url, 'bob@example.com')
    const good = jar.get('127.0.0.1', 'askbridge_session') ?? ''
    expect((await me(url, jar)).status).toBe(200)

    const [payload, signature] = good.split('.')
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Record<string, unknown>
    const forged = Buffer.from(JSON.stringify({ ...claims, email: 'alice@example.com' })).toString(
      'base64url',
    )
    for (const value of [
      `${forged}.${signature}`, // someone else's address under Bob's signature
      `${payload}.${'A'.repeat(signature?.length ?? 43)}`, // a made-up signature
      `${payload}`, // no signature
      'not a cookie at all %ZZ',
    ]) {
      const fake = new CookieJar()
      fake.set('127.0.0.1', 'askbridge_session', value)
      expect((await me(url, fake)).status).toBe(401)
      const page = await send(fake, new URL('/inbox', url))
      expect(page.status).toBe(302)
    }

    now += 60 * 60_000 + 1
    const expired = await me(url, jar)
    expect(expired.status).toBe(401)
    expect(expired.body).toMatchObject({ error: { code: 'SIGN_IN_REQUIRED' } })
  })

  it('refuses a write without the CSRF token (or with another session’s), and nothing changes', async () => {
    const { url, bridge } = await start()
    const jar = await signIn(url, 'alice@example.com')
    const other = await signIn(url, 'bob@example.com')
    const otherCsrf = String((await me(url, other)).body.csrf)
    const { answer: asking } = await ask(url, 'csrf-1', jar)
    for (const headers of [{}, { 'x-csrf-token': otherCsrf }, { 'x-csrf-token': '' }]) {
      const res = await act(url, jar, 'csrf-1', { type: 'approve' }, headers)
      expect(res.status).toBe(403)
      expect(await res.json()).toMatchObject({ error: { code: 'CSRF' } })
    }
    const logout = await send(jar, new URL('/inbox/logout', url), { method: 'POST' })
    expect(logout.status).toBe(403)
    expect((await bridge.chat.host.getCard(refFor('csrf-1')))?.status).toBe('open')
    const csrf = String((await me(url, jar)).body.csrf)
    expect((await act(url, jar, 'csrf-1', { type: 'approve' }, { 'x-csrf-token': csrf })).status).toBe(200)
    await asking
  })

  it('a callback with a wrong state or nonce is refused and logged, and no session is created', async () => {
    const { url, logs } = await start()
    // Wrong state: the provider's answer comes back with a state this browser never sent.
    const jar = new CookieJar()
    const callback = await authorize(jar, url, 'alice@example.com')
    callback.searchParams.set('state', 'a-state-askbridge-never-issued')
    const res = await send(jar, callback)
    expect(res.status).toBe(400)
    expect(res.headers.getSetCookie().join('\n')).not.toContain('askbridge_session=e')
    expect(jar.get('127.0.0.1', 'askbridge_session')).toBeUndefined()
    expect(await res.text()).toContain('Sign-in failed')

    // Wrong nonce: the authorization request was changed on its way to the provider, so the
    // ID token carries a nonce this browser's sign-in did not choose.
    const jar2 = new CookieJar()
    const callback2 = await authorize(jar2, url, 'alice@example.com', (u) => {
      u.searchParams.set('nonce', 'a-nonce-askbridge-never-issued')
      return u
    })
    const res2 = await send(jar2, callback2)
    expect(res2.status).toBe(400)
    expect(jar2.get('127.0.0.1', 'askbridge_session')).toBeUndefined()

    // A callback with no sign-in in progress at all.
    const res3 = await send(new CookieJar(), callback2)
    expect(res3.status).toBe(400)

    const refused = logs.filter((l) => l.message === 'inbox sign-in refused')
    expect(refused).toHaveLength(3)
    expect(JSON.stringify(refused[0]?.fields)).toMatch(/state/i)
    expect(JSON.stringify(refused[1]?.fields)).toMatch(/nonce/i)
    expect(logs.filter((l) => l.message === 'inbox sign-in')).toEqual([])
  })

  it('an issuer that cannot be reached stops serve with a message naming ASKBRIDGE_OIDC_ISSUER', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-signin-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const port = await freePort()
    const config = parseConfig(
      {
        ASKBRIDGE_PORT: '0',
        ASKBRIDGE_DB: join(dir, 'bridge.db'),
        ASKBRIDGE_OIDC_ISSUER: `http://127.0.0.1:${port}`,
        ASKBRIDGE_OIDC_CLIENT_ID: CLIENT_ID,
        ASKBRIDGE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        ASKBRIDGE_PUBLIC_URL: 'http://127.0.0.1:8787',
      },
      PLATFORMS,
    )
    const error = await serve({ config, platforms: PLATFORMS }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).message).toContain(
      `ASKBRIDGE_OIDC_ISSUER: cannot use the OpenID Connect provider at http://127.0.0.1:${port}`,
    )
    expect((error as ConfigError).message).not.toContain(CLIENT_SECRET)
    // Half the variables is a configuration error too.
    expect(() => parseConfig({ ASKBRIDGE_OIDC_ISSUER: 'https://accounts.google.com' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_OIDC_CLIENT_ID and ASKBRIDGE_OIDC_CLIENT_SECRET are needed with ASKBRIDGE_OIDC_ISSUER/,
    )
  })

  it('a quorum approval by the same person on Slack and in the inbox counts once', async () => {
    const slack = await FakeSlack.start({ pingIntervalMs: 1000 })
    cleanups.push(() => slack.close())
    const routes = validateRoutes(
      {
        people: { 'alice@example.com': { slack: 'U0ALICE' } },
        routes: [
          {
            name: 'two-person',
            destinations: [{ platform: 'slack', channel: 'C0GATE' }, { platform: 'web' }],
            responders: { people: ['email:alice@example.com', 'email:bob@example.com'] },
            quorum: 2,
          },
        ],
      },
      PLATFORMS,
    )
    const { url } = await start({
      routes,
      env: {
        SLACK_BOT_TOKEN: slack.options.botToken,
        SLACK_APP_TOKEN: slack.options.appToken,
        SLACK_API_URL: slack.apiUrl,
      },
    })
    await slack.waitForSocket()
    const alice = await signIn(url, 'alice@example.com')
    const aliceCsrf = String((await me(url, alice)).body.csrf)
    const { answer: asking } = await ask(url, 'quorum-1', alice)
    const [message] = await until(() => {
      const m = slack.messagesOf('quorum-1')
      return m.length === 1 ? m : undefined
    }, 'posted to Slack')
    const approve = JSON.stringify(message?.blocks).match(
      /"action_id":"([^"]*)"[^}]*"text":\{[^}]*"text":"Approve"/,
    )
    const actionId =
      approve?.[1] ??
      (message?.blocks ?? [])
        .flatMap((b) => (Array.isArray(b.elements) ? (b.elements as Array<Record<string, unknown>>) : []))
        .map((e) => String(e.action_id))
        .find((id) => id.includes('approve'))
    if (!message || !actionId) throw new Error('no approve button in Slack')
    await slack.deliver(slack.actionPayload({ id: 'U0ALICE', name: 'Alice' }, message, actionId))
    await until(() => slack.noticesFor('U0ALICE')[0], 'Alice’s Slack approval noted')
    expect(slack.noticesFor('U0ALICE')[0]).toBe('Approval recorded: 1 of 2.')

    // The same person in the inbox: refused as a second approval.
    const again = await act(url, alice, 'quorum-1', { type: 'approve' }, { 'x-csrf-token': aliceCsrf })
    expect(await again.json()).toMatchObject({
      ok: false,
      message: expect.stringMatching(/already approved/i),
    })

    const bob = await signIn(url, 'bob@example.com')
    const bobCsrf = String((await me(url, bob)).body.csrf)
    const done = await act(url, bob, 'quorum-1', { type: 'approve' }, { 'x-csrf-token': bobCsrf })
    expect(await done.json()).toMatchObject({ ok: true })
    expect(await asking).toEqual({ callId: 'quorum-1', answers: [{ id: 'deploy', selected: ['Approve'] }] })
  })
})

describe('cookies', () => {
  it('parseCookies never throws: malformed pairs and undecodable values are skipped, the first of a name wins', async () => {
    const { parseCookies } = await import('../../src/server/signin.js')
    const parsed = parseCookies('a=1; bad; =x; b=%ZZ; c="q%20r"; a=2; d==e; spa ce=1')
    expect([...parsed.entries()]).toEqual([
      ['a', '1'],
      ['c', 'q r'],
      ['d', '=e'],
    ])
    expect(parseCookies(undefined).size).toBe(0)
  })

  it('a malformed inbox cookie is refused with 401, not a server error; the API token is no inbox cookie', async () => {
    const { startBridge, inboxCookie } = await import('../server/helpers.js')
    const b = await startBridge({ ASKBRIDGE_API_TOKEN: 'inbox-token-123456' })
    cleanups.push(() => b.close())
    for (const cookie of ['askbridge_inbox=%ZZ', 'askbridge_token=inbox-token-123456']) {
      const res = await fetch(`${b.url}/inbox/api/cards`, { headers: { cookie } })
      expect(res.status, cookie).toBe(401)
    }
    const ok = await fetch(`${b.url}/inbox/api/cards`, { headers: { cookie: inboxCookie(b.url) } })
    expect(ok.status).toBe(200)
  })
})
