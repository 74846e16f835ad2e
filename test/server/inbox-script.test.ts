/**
 * The inbox page's script is a real module (adapters/web/client, compiled by the build) that the
 * inbox serves as static files under its CSP's `script-src 'self'`, also behind the inbox cookie.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { ensureBuilt } from '../cli/built.js'
import { inboxCookie, request, startBridge, type TestBridge } from './helpers.js'

const TOKEN = 'test-api-token-not-secret'
let b: TestBridge
let cookie: string

beforeAll(async () => {
  await ensureBuilt()
  b = await startBridge({ ASKBRIDGE_API_TOKEN: TOKEN })
  cookie = inboxCookie(b.url)
}, 180_000)

afterAll(async () => {
  await b?.close()
})

test('the page names its module script, and its CSP allows only same-origin script files', async () => {
  const page = await request(b.url, 'GET', '/inbox', undefined, { cookie })
  expect(page.status).toBe(200)
  expect(page.text).toContain('<script type="module" src="/inbox/client/main.js"></script>')
  expect(page.headers.get('content-security-policy')).toContain("script-src 'self';")
})

test('every module the entry imports is served as JavaScript, behind the inbox cookie', async () => {
  const seen = new Set<string>()
  const load = async (name: string): Promise<void> => {
    if (seen.has(name)) return
    seen.add(name)
    const r = await request(b.url, 'GET', `/inbox/client/${name}`, undefined, { cookie })
    expect(r.status, name).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    // Compiled browser code: no TypeScript left, imports are sibling modules.
    expect(r.text).not.toMatch(/^import type /m)
    for (const m of r.text.matchAll(/^import .* from '\.\/([a-z-]+\.js)';$/gm)) await load(m[1] ?? '')
  }
  await load('main.js')
  expect([...seen].sort()).toEqual([
    'actions.js',
    'controls.js',
    'dom.js',
    'main.js',
    'render.js',
    'session.js',
    'store.js',
  ])
  // Without the cookie the script is refused like the rest of the inbox; the API token is no cookie.
  expect((await request(b.url, 'GET', '/inbox/client/main.js', undefined, { cookie: '' })).status).toBe(401)
  const withToken = { cookie: '', authorization: `Bearer ${TOKEN}` }
  expect((await request(b.url, 'GET', '/inbox/client/main.js', undefined, withToken)).status).toBe(401)
})

test('only compiled modules of that folder: sources, declarations and other paths are 404', async () => {
  for (const path of ['/inbox/client/main.ts', '/inbox/client/main.d.ts', '/inbox/client/nope.js']) {
    const r = await request(b.url, 'GET', path, undefined, { cookie })
    expect(r.status, path).toBe(404)
    expect(r.body.error).toMatchObject({ code: 'NOT_FOUND' })
  }
  // An encoded slash never reaches a route: the path is refused before any guard or handler.
  for (const path of ['/inbox/client/..%2F..%2F..%2Fpackage.json', '/inbox/client/..%2Fadapter.js']) {
    const r = await request(b.url, 'GET', path, undefined, { cookie })
    expect(r.status, path).toBe(400)
    expect(r.body.error).toMatchObject({ code: 'BAD_PATH' })
  }
})
