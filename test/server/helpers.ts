import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PLATFORMS } from '../../adapters/platforms.js'
import type { WebCardView } from '../../adapters/web/client/types.js'
import { parseConfig } from '../../src/config/env.js'
import type {
  AskUserQuestionAnswerItem,
  LateReply,
  UserQuestionProjectionView,
} from '../../src/protocol/types.js'
import { type BridgeHandle, serve } from '../../src/server/serve.js'

/** A real bridge on 127.0.0.1:<random port> with a SQLite file in a temp directory. */
export interface TestBridge {
  bridge: BridgeHandle
  url: string
  dir: string
  close(): Promise<void>
}

export async function startBridge(
  env: Record<string, string> = {},
  dir?: string,
  replicas?: { leaseMs?: number; intervalMs?: number },
): Promise<TestBridge> {
  const own = dir === undefined
  const home = dir ?? mkdtempSync(join(tmpdir(), 'askbridge-server-'))
  const config = parseConfig(
    { ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: join(home, 'bridge.db'), ...env },
    PLATFORMS,
  )
  const bridge = await serve({
    config,
    platforms: PLATFORMS,
    heartbeatMs: 100,
    escalationIntervalMs: 0,
    ...(replicas ? { replicas } : {}),
  })
  // The inbox opens from the one-time link serve gives out, as a person's browser does.
  if (!config.ASKBRIDGE_OIDC_ISSUER) inboxCookies.set(bridge.url, await openInbox(bridge.inboxUrl))
  return {
    bridge,
    url: bridge.url,
    dir: home,
    async close() {
      await bridge.close()
      if (own) rmSync(home, { recursive: true, force: true })
    },
  }
}

/** Response bodies of the API and the inbox, loosely typed for assertions. */
export interface ApiBody {
  error?: { name: string; code: string; message: string }
  answers?: AskUserQuestionAnswerItem[]
  callId?: string
  pending?: boolean
  accepted?: boolean
  ok?: boolean
  message?: string
  card?: WebCardView
  cards?: WebCardView[]
  replies?: LateReply[]
  active?: UserQuestionProjectionView['active']
  settled?: UserQuestionProjectionView['settled']
  [key: string]: unknown
}

export interface Json {
  status: number
  body: ApiBody
  text: string
  headers: Headers
}

/** The inbox cookie of each bridge started here (its base URL -> `name=value`). */
const inboxCookies = new Map<string, string>()

/** Open the inbox through a sign-in link; resolves the cookie it sets (`name=value`). */
export async function openInbox(link: string): Promise<string> {
  // `connection: close`: no keep-alive connection is left behind to count against the edge's caps.
  const res = await fetch(link, { redirect: 'manual', headers: { connection: 'close' } })
  const cookie = res.headers.get('set-cookie')?.split(';')[0]
  if (res.status !== 302 || !cookie) throw new Error(`the inbox sign-in link was refused (${res.status})`)
  return cookie
}

/** The inbox cookie of a bridge started by {@link startBridge}. */
export function inboxCookie(url: string): string {
  const cookie = inboxCookies.get(url)
  if (!cookie) throw new Error(`no inbox session for ${url}`)
  return cookie
}

/**
 * One JSON request; `body` strings are sent raw (for malformed-input tests). Inbox paths carry
 * the inbox cookie of a bridge started here, unless `headers` names a cookie (or `cookie: ''`).
 */
export async function request(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Json> {
  const cookie = path.startsWith('/inbox') || path === '/' ? inboxCookies.get(url) : undefined
  const sent = { ...(cookie && headers.cookie === undefined ? { cookie } : {}), ...headers }
  if (sent.cookie === '') delete sent.cookie
  const init: RequestInit = { method, headers: sent }
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body)
    ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
  }
  const res = await fetch(`${url}${path}`, init)
  const text = await res.text()
  let parsed: ApiBody = {}
  try {
    parsed = JSON.parse(text) as ApiBody
  } catch {
    // not JSON (metrics, HTML): use `text`
  }
  return { status: res.status, body: parsed, text, headers: res.headers }
}

/** Press a control in the web inbox, as the page does. */
export function act(
  url: string,
  callId: string,
  action: unknown,
  name = 'Ana',
  headers: Record<string, string> = {},
) {
  return request(
    url,
    'POST',
    `/inbox/api/cards/${encodeURIComponent(callId)}/actions`,
    { action, person: { name } },
    headers,
  )
}

/** Poll until `check` is truthy (no wall-clock assertions). */
export async function until<T>(
  check: () => T | Promise<T>,
  what = 'condition',
  tries = 500,
): Promise<NonNullable<T>> {
  for (let i = 0; i < tries; i++) {
    const v = await check()
    if (v) return v as NonNullable<T>
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** Wait until the bridge shows a live card for this call in the inbox. */
export function cardPosted(url: string, callId: string, headers: Record<string, string> = {}) {
  return until(async () => {
    const r = await request(url, 'GET', '/inbox/api/cards', undefined, headers)
    return r.body.cards?.find((c) => c.callId === callId && (c.status === 'open' || c.status === 'continued'))
  }, `card ${callId}`)
}
