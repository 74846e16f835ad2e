/**
 * A real OpenID Connect provider (oidc-provider) in the test process, with its development
 * login and consent pages, and a client that walks the authorization code flow over HTTP the
 * way a browser does (cookies per host and path, redirects by hand).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Provider from 'oidc-provider'

export const CLIENT_ID = 'askbridge-inbox'
export const CLIENT_SECRET = 'inbox-client-secret-for-tests-0123456789'

/** A free TCP port on 127.0.0.1 (the bridge's, known before the provider registers its redirect URI). */
export async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

/**
 * Run `start` on a free port, again on another one when something else took it in between
 * (other test files bind ports at the same time).
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    try {
      return await start(port)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 4) throw error
    }
  }
}

export interface TestProvider {
  issuer: string
  close(): Promise<void>
}

/** People who can sign in: the login is their e-mail; any password. */
const NAMES: Record<string, string> = {
  'alice@example.com': 'Alice Example',
  'bob@example.com': 'Bob Example',
}

/**
 * The `email_verified` claim of an account: true, except for the logins that test refusals
 * (`unverified@…` has none, `string-false@…` the string "false", `false@…` false).
 */
function verified(id: string): { email_verified?: unknown } {
  if (id.startsWith('unverified@')) return {}
  if (id.startsWith('string-false@')) return { email_verified: 'false' }
  if (id.startsWith('false@')) return { email_verified: false }
  return { email_verified: true }
}

/** Start the provider on `localhost` (its own cookie host), with one client for `redirectUri`. */
export async function startProvider(redirectUri: string): Promise<TestProvider> {
  const server: Server = createServer()
  await new Promise<void>((r) => server.listen(0, r)) // every interface: localhost may be ::1 or 127.0.0.1
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['test-cookie-key-not-secret'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: id, ...verified(id), name: NAMES[id] ?? id }
        },
      }
    },
  })
  server.on('request', provider.callback())
  return {
    issuer,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

interface Cookie {
  name: string
  value: string
  path: string
}

/** Cookies per host (ports share cookies in browsers, so the host is the key), honouring Path. */
export class CookieJar {
  private readonly byHost = new Map<string, Cookie[]>()

  header(url: URL): string {
    return (this.byHost.get(url.hostname) ?? [])
      .filter((c) => url.pathname.startsWith(c.path))
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join('; ')
  }

  take(url: URL, res: Response): void {
    const list = this.byHost.get(url.hostname) ?? []
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';').map((p) => p.trim())
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq)
      const value = pair.slice(eq + 1)
      const path = attrs.find((a) => /^path=/i.test(a))?.slice(5) || '/'
      const gone = attrs.some((a) => /^max-age=0$/i.test(a)) || value === ''
      const i = list.findIndex((c) => c.name === name && c.path === path)
      if (i >= 0) list.splice(i, 1)
      if (!gone) list.push({ name, value, path })
    }
    this.byHost.set(url.hostname, list)
  }

  get(host: string, name: string): string | undefined {
    return this.byHost.get(host)?.find((c) => c.name === name)?.value
  }

  set(host: string, name: string, value: string, path = '/'): void {
    const list = (this.byHost.get(host) ?? []).filter((c) => !(c.name === name && c.path === path))
    list.push({ name, value, path })
    this.byHost.set(host, list)
  }
}

/** One request with the jar's cookies, no automatic redirects. */
export async function send(jar: CookieJar, url: URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  const cookie = jar.header(url)
  if (cookie) headers.set('cookie', cookie)
  const res = await fetch(url, { ...init, headers, redirect: 'manual' })
  jar.take(url, res)
  return res
}

/**
 * Walk the sign-in from `/inbox/login` through the provider's login and consent pages. It stops
 * at the bridge's callback and returns its URL (with `code` and `state`) without calling it, so a
 * test can tamper with it; `tamperAuthorization` may change the request sent to the provider.
 */
export async function authorize(
  jar: CookieJar,
  bridgeUrl: string,
  email: string,
  tamperAuthorization: (url: URL) => URL = (u) => u,
): Promise<URL> {
  const start = await send(jar, new URL('/inbox/login', bridgeUrl))
  if (start.status !== 302) throw new Error(`/inbox/login answered ${start.status}`)
  let url = tamperAuthorization(new URL(start.headers.get('location') ?? ''))
  for (let hop = 0; hop < 20; hop++) {
    if (url.pathname === '/inbox/callback') return url
    let res = await send(jar, url)
    if (url.pathname.startsWith('/interaction/') && res.status === 200) {
      const page = await res.text()
      const prompt = page.includes('name="login"') ? 'login' : 'consent'
      const body = new URLSearchParams(
        prompt === 'login' ? { prompt, login: email, password: 'any' } : { prompt },
      )
      res = await send(jar, url, { method: 'POST', body })
    }
    const location = res.headers.get('location')
    if (!location)
      throw new Error(`sign-in stopped at ${url.pathname} with HTTP ${res.status}: ${await res.text()}`)
    url = new URL(location, url)
  }
  throw new Error('too many redirects')
}

/** Sign in for real and return the jar holding the bridge's session cookie. */
export async function signIn(bridgeUrl: string, email: string, jar = new CookieJar()): Promise<CookieJar> {
  const callback = await authorize(jar, bridgeUrl, email)
  const res = await send(jar, callback)
  if (res.status !== 302 || !jar.get(new URL(bridgeUrl).hostname, 'askbridge_session')) {
    throw new Error(`sign-in callback answered ${res.status}: ${await res.text()}`)
  }
  return jar
}
