/**
 * The configuration mistakes a new user makes stop `askbridge serve` with one clear message that
 * names the variable and the fix. Each test pins the exact message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { FakeDiscord } from '../fakes/discord/server.js'
import { ensureBuilt } from './built.js'
import { askbridge } from './run.js'

let cwd: string
beforeAll(async () => {
  await ensureBuilt()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-mistakes-'))
}, 120_000)
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

const serve = (env: Record<string, string>) =>
  askbridge(['serve'], { cwd, env: { ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: join(cwd, 'mistakes.db'), ...env } })

function routesFile(name: string, routes: unknown[]): string {
  const path = join(cwd, name)
  writeFileSync(path, JSON.stringify({ routes }))
  return path
}

/** A port where nothing listens (it was just free). */
async function deadUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

test('a route that sends to a platform that is not configured', async () => {
  const path = routesFile('unconfigured.json', [
    { name: 'oncall', destinations: [{ platform: 'web' }, { platform: 'slack', channel: 'C0ONCALL' }] },
  ])
  const r = await serve({ ASKBRIDGE_ROUTES: path })
  expect(r.code).toBe(1)
  expect(r.stderr).toBe(
    'askbridge: invalid configuration:\n' +
      `  - ASKBRIDGE_ROUTES (${path}): route "oncall" sends to slack, but Slack is not configured: set SLACK_BOT_TOKEN and SLACK_APP_TOKEN (or SLACK_SIGNING_SECRET), or take slack out of the route\n`,
  )
  // Escalation tiers count too.
  const tier = routesFile('tier.json', [
    {
      name: 'deploys',
      destinations: [{ platform: 'web' }],
      escalation: [{ after: '10m', destinations: [{ platform: 'discord', channel: '110000000000000009' }] }],
    },
  ])
  const t = await serve({ ASKBRIDGE_ROUTES: tier })
  expect(t.stderr).toBe(
    'askbridge: invalid configuration:\n' +
      `  - ASKBRIDGE_ROUTES (${tier}): route "deploys" sends to discord, but Discord is not configured: set DISCORD_BOT_TOKEN, or take discord out of the route\n`,
  )
})

test('a configured platform with no default channel and no route that uses it', async () => {
  const slack = await serve({ SLACK_BOT_TOKEN: 'xoxb-nochan', SLACK_APP_TOKEN: 'xapp-nochan' })
  expect(slack.code).toBe(1)
  expect(slack.stderr).toBe(
    'askbridge: invalid configuration:\n' +
      '  - SLACK_CHANNEL is not set and there is no routes file (ASKBRIDGE_ROUTES), so Slack would get no questions: set SLACK_CHANNEL to a channel id (for example C0123456789)\n',
  )
  const path = routesFile('web-only.json', [{ name: 'inbox', destinations: [{ platform: 'web' }] }])
  const discord = await serve({ DISCORD_BOT_TOKEN: 'discord-no-channel', ASKBRIDGE_ROUTES: path })
  expect(discord.code).toBe(1)
  expect(discord.stderr).toBe(
    'askbridge: invalid configuration:\n' +
      `  - DISCORD_CHANNEL_ID is not set and no route in ASKBRIDGE_ROUTES (${path}) sends to discord, so Discord would get no questions: set DISCORD_CHANNEL_ID to a channel id (for example 123456789012345678), or add a discord destination to a route\n`,
  )
  expect(discord.stderr).not.toContain('discord-no-channel')
})

test('Discord refuses the bot token: named DISCORD_BOT_TOKEN, never echoed', async () => {
  const fake = await new FakeDiscord().start()
  try {
    const r = await serve({
      DISCORD_BOT_TOKEN: 'not-the-discord-token',
      DISCORD_API_URL: fake.apiUrl,
      DISCORD_CHANNEL_ID: fake.channelId,
    })
    expect(r.code).toBe(1)
    expect(lastLine(r.stderr)).toBe(
      'askbridge: cannot start: Discord refused the bot token (DISCORD_BOT_TOKEN): An invalid token was provided. Copy it again from the Developer Portal (your application, Bot, Reset Token).',
    )
    expect(r.stderr).not.toContain('not-the-discord-token')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  } finally {
    await fake.close()
  }
})

test('a Discord API URL where nothing answers: named DISCORD_API_URL', async () => {
  const url = await deadUrl()
  const r = await serve({
    DISCORD_BOT_TOKEN: 'discord-test-token',
    DISCORD_API_URL: url,
    DISCORD_CHANNEL_ID: '110000000000000003',
  })
  expect(r.code).toBe(1)
  expect(lastLine(r.stderr)).toBe(
    `askbridge: cannot start: cannot reach the Discord API at ${url} (DISCORD_API_URL): connect ECONNREFUSED ${url.slice('http://'.length)}`,
  )
})

test('a Slack Web API that never answers: serve says what it waits for, and gives up after about 5 s', async () => {
  // Accepts connections and never answers.
  const sockets = new Set<Socket>()
  const silent: Server = createServer((socket) => {
    sockets.add(socket)
  })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}/api/`
  try {
    const r = await serve({
      SLACK_BOT_TOKEN: 'xoxb-silent',
      SLACK_APP_TOKEN: 'xapp-silent',
      SLACK_CHANNEL: 'C0SILENT',
      SLACK_API_URL: url,
    })
    expect(r.code).toBe(1)
    const waiting = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; url?: string })
      .find((l) => l.msg.startsWith('waiting for'))
    expect(waiting).toMatchObject({
      msg: 'waiting for the Slack Web API to answer (SLACK_API_URL), up to 5 s',
      url,
    })
    expect(lastLine(r.stderr)).toBe(
      `askbridge: cannot start: cannot reach the Slack Web API at ${url} (SLACK_API_URL): no answer within 5 s`,
    )
  } finally {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => silent.close(() => resolve()))
  }
})

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? ''
}
