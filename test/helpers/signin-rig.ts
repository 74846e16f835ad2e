/**
 * The rig of the inbox sign-in tests (test/signin/signin.test.ts, test/security/signin.test.ts):
 * the real `serve` with OpenID Connect sign-in against a real provider (oidc-provider, in this
 * process), its log lines recorded.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PLATFORMS } from '../../adapters/platforms.js'
import { parseConfig } from '../../src/config/env.js'
import type { Logger } from '../../src/log.js'
import { type BridgeHandle, type ServeOptions, serve } from '../../src/server/serve.js'
import { CLIENT_ID, CLIENT_SECRET, onFreePort, startProvider } from './oidc.js'

export interface Logged {
  level: string
  message: string
  fields?: Record<string, unknown>
}

/** A logger that keeps every line (debug included) in `logs`. */
export function recorder(): { logger: Logger; logs: Logged[] } {
  const logs: Logged[] = []
  const at =
    (level: string) =>
    (message: string, fields?: Record<string, unknown>): void => {
      logs.push({ level, message, ...(fields ? { fields } : {}) })
    }
  return { logs, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } }
}

/** The variables that turn inbox sign-in on with the test provider's client. */
export const oidcEnv = (issuer: string) => ({
  ASKBRIDGE_OIDC_ISSUER: issuer,
  ASKBRIDGE_OIDC_CLIENT_ID: CLIENT_ID,
  ASKBRIDGE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
})

/** Undone in reverse order after each test (the caller runs them in `afterEach`). */
export type Cleanups = Array<() => Promise<void> | void>

/**
 * A bridge with sign-in on 127.0.0.1:<port> and a provider that registers
 * `<publicUrl>/inbox/callback`. `publicUrl(url)` is ASKBRIDGE_PUBLIC_URL (default: the bridge's
 * own URL); `db` is ASKBRIDGE_DB (default: a fresh SQLite file), to share a database between
 * bridges; `env` adds variables; `serve` adds options of `serve()`.
 */
export async function startSignInBridge(
  cleanups: Cleanups,
  options: {
    publicUrl?: (url: string) => string
    db?: string
    env?: Record<string, string>
    serve?: Partial<ServeOptions>
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'askbridge-signin-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const { logger, logs } = recorder()
  const { bridge, url, provider } = await onFreePort(async (port) => {
    const url = `http://127.0.0.1:${port}`
    const publicUrl = options.publicUrl?.(url) ?? url
    const provider = await startProvider(`${publicUrl}/inbox/callback`)
    const config = parseConfig(
      {
        ASKBRIDGE_PORT: String(port),
        ASKBRIDGE_DB: options.db ?? join(dir, `bridge-${port}.db`),
        ASKBRIDGE_PUBLIC_URL: publicUrl,
        ...oidcEnv(provider.issuer),
        ...options.env,
      },
      PLATFORMS,
    )
    try {
      const bridge: BridgeHandle = await serve({
        config,
        platforms: PLATFORMS,
        logger,
        escalationIntervalMs: 0,
        ...options.serve,
      })
      return { bridge, url, provider }
    } catch (error) {
      await provider.close()
      throw error
    }
  })
  cleanups.push(() => provider.close())
  cleanups.push(() => bridge.close())
  return { bridge, url, logs, provider }
}
