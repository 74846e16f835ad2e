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

/** One JSON request; `body` strings are sent raw (for malformed-input tests). */
export async function request(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Json> {
  const init: RequestInit = { method, headers: { ...headers } }
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
