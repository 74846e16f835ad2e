/**
 * The attack suite's rig: the real `serve` (SQLite file, the web inbox), optionally with the real
 * OpenID Connect provider the sign-in tests use, a routes file and an agent tokens file; raw HTTP
 * for paths that fetch would normalise; a log that is kept for assertions.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PLATFORMS } from '../../adapters/platforms.js'
import { parseConfig } from '../../src/config/env.js'
import type { Logger } from '../../src/log.js'
import { type RoutesFile, validateRoutes } from '../../src/routing/routes.js'
import { type BridgeHandle, serve } from '../../src/server/serve.js'
import { CLIENT_ID, CLIENT_SECRET, onFreePort, startProvider } from '../helpers/oidc.js'
import { openInbox } from '../server/helpers.js'

export interface Logged {
  level: string
  message: string
  fields?: Record<string, unknown>
}

export interface SecureBridge {
  bridge: BridgeHandle
  url: string
  logs: Logged[]
  /** The inbox cookie (without OpenID Connect), from the link serve gives out. */
  cookie: string
  close(): Promise<void>
}

export interface AgentTokenSpec {
  token: string
  agent: string
  scopes: string[]
  requester?: string
  ratePerMinute?: number
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** Start the real bridge. `oidc`: inbox sign-in through the test provider. */
export async function startSecure(
  options: { env?: Record<string, string>; routes?: unknown; tokens?: AgentTokenSpec[]; oidc?: boolean } = {},
): Promise<SecureBridge> {
  const dir = mkdtempSync(join(tmpdir(), 'askbridge-security-'))
  const env: Record<string, string> = { ...options.env }
  if (options.tokens) {
    const file = join(dir, 'agent-tokens.json')
    // The file holds digests only: the tokens themselves are never written down.
    writeFileSync(
      file,
      JSON.stringify({
        tokens: options.tokens.map(({ token, ...rest }) => ({ sha256: sha256(token), ...rest })),
      }),
    )
    env.ASKBRIDGE_AGENT_TOKENS = file
  }
  const logs: Logged[] = []
  const push = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    logs.push({ level, message, ...(fields ? { fields } : {}) })
  const logger: Logger = {
    debug: push('debug'),
    info: push('info'),
    warn: push('warn'),
    error: push('error'),
  }
  const routes: RoutesFile | undefined = options.routes
    ? validateRoutes(options.routes, PLATFORMS)
    : undefined
  const closers: Array<() => Promise<void>> = []
  const bridge = await onFreePort(async (port) => {
    const url = `http://127.0.0.1:${port}`
    let issuer: Record<string, string> = {}
    if (options.oidc) {
      const provider = await startProvider(`${url}/inbox/callback`)
      closers.push(() => provider.close())
      issuer = {
        ASKBRIDGE_OIDC_ISSUER: provider.issuer,
        ASKBRIDGE_OIDC_CLIENT_ID: CLIENT_ID,
        ASKBRIDGE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        ASKBRIDGE_PUBLIC_URL: url,
      }
    }
    const config = parseConfig(
      {
        ASKBRIDGE_PORT: String(port),
        ASKBRIDGE_DB: join(dir, `bridge-${port}.db`),
        ...issuer,
        ...env,
      },
      PLATFORMS,
    )
    return serve({
      config,
      platforms: PLATFORMS,
      logger,
      heartbeatMs: 100,
      escalationIntervalMs: 0,
      ...(routes ? { routes } : {}),
    })
  })
  const cookie = options.oidc ? '' : await openInbox(bridge.inboxUrl)
  return {
    bridge,
    url: bridge.url,
    logs,
    cookie,
    async close() {
      await bridge.close()
      for (const c of closers) await c()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: { error?: { name: string; code: string; message: string }; [key: string]: unknown }
  text: string
}

/** One request with the path sent exactly as written (fetch would normalise `/%2e//`). */
export function raw(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<RawResponse> {
  const target = new URL(base)
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method,
        path,
        headers: {
          ...(payload ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          text += d
        })
        res.on('end', () => {
          let body: RawResponse['body'] = {}
          try {
            body = JSON.parse(text) as RawResponse['body']
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text })
        })
      },
    )
    req.on('error', reject)
    if (payload) req.write(payload)
    req.end()
  })
}
