/**
 * Inbox sign-in in headless Chromium against a real OpenID Connect provider (oidc-provider)
 * started in this process: the inbox sends the person to the provider, they sign in and consent,
 * come back signed in (name shown, not editable), answer, and the answer is theirs.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { parseConfig } from '../../src/config/env.js'
import { type BridgeHandle, serve } from '../../src/server/serve.js'
import { CLIENT_ID, CLIENT_SECRET, onFreePort, startProvider, type TestProvider } from '../helpers/oidc.js'
import { deployApproval } from '../helpers/routing.js'
import { refFor } from '../helpers/service.js'

let browser: Browser
let provider: TestProvider
let bridge: BridgeHandle
let dir: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askbridge-signin-browser-'))
  ;({ provider, bridge } = await onFreePort(async (port) => {
    const provider = await startProvider(`http://127.0.0.1:${port}/inbox/callback`)
    const config = parseConfig(
      {
        ASKBRIDGE_PORT: String(port),
        ASKBRIDGE_DB: join(dir, `bridge-${port}.db`),
        ASKBRIDGE_OIDC_ISSUER: provider.issuer,
        ASKBRIDGE_OIDC_CLIENT_ID: CLIENT_ID,
        ASKBRIDGE_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        ASKBRIDGE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      },
      PLATFORMS,
    )
    try {
      return {
        provider,
        bridge: await serve({ config, platforms: PLATFORMS, heartbeatMs: 100, escalationIntervalMs: 0 }),
      }
    } catch (error) {
      await provider.close()
      throw error
    }
  }))
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  })
})

afterAll(async () => {
  await browser?.close()
  await bridge?.close()
  await provider?.close()
  rmSync(dir, { recursive: true, force: true })
})

test('sign in through the provider, answer as the signed-in person, sign out', async () => {
  const page = await browser.newPage()
  const failed: string[] = []
  // The inbox's own requests must all succeed (the provider's dev pages fetch a web font: not ours).
  page.on('response', (r) => {
    if (r.url().startsWith(bridge.url) && r.status() >= 400) failed.push(`${r.status()} ${r.url()}`)
  })
  page.on('pageerror', (e) => failed.push(e.message))

  await page.goto(`${bridge.url}/inbox`)
  // The provider's login page, then its consent page.
  await page.waitForURL(/localhost:\d+\/interaction\//)
  await page.fill('input[name="login"]', 'alice@example.com')
  await page.fill('input[name="password"]', 'any password')
  await page.click('button[type="submit"]')
  await page.waitForURL(/\/interaction\/|\/inbox/)
  if (page.url().includes('/interaction/')) await page.click('button[type="submit"]')
  await page.waitForURL(`${bridge.url}/inbox`)

  const who = page.locator('#signed-in')
  await who.waitFor()
  expect(await who.textContent()).toContain('Signed in as Alice Example (alice@example.com)')
  expect(await page.locator('#me').count()).toBe(0) // no name to type

  const asking = fetch(`${bridge.url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId: 'browser-gate', questions: [deployApproval] }),
  }).then((r) => r.json())
  const card = page.locator('article[data-call-id="browser-gate"]')
  await card.getByRole('button', { name: 'Approve' }).click()
  expect(await asking).toEqual({ callId: 'browser-gate', answers: [{ id: 'deploy', selected: ['Approve'] }] })
  await card
    .getByText(/by Alice Example/)
    .first()
    .waitFor()
  const stored = await bridge.chat.host.getCard(refFor('browser-gate'))
  expect(stored?.answeredBy).toMatchObject({
    platform: 'web',
    userId: 'alice@example.com',
    name: 'Alice Example',
  })

  await page.click('#sign-out')
  await page.getByText('You are signed out.').waitFor()
  const after = await page.evaluate(async () => (await fetch('/inbox/api/cards')).status)
  expect(after).toBe(401)
  failed.splice(
    failed.findIndex((f) => f.startsWith('401') && f.endsWith('/inbox/api/cards')),
    1,
  )
  expect(failed).toEqual([])
})
