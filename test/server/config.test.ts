import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ConfigError, envSchema, loadConfig, parseConfig, secretsOf } from '../../src/config/index.js'

describe('configuration', () => {
  test('embedded defaults need nothing', () => {
    const c = parseConfig({}, PLATFORMS)
    expect(c).toMatchObject({
      ASKBRIDGE_HOST: '127.0.0.1',
      ASKBRIDGE_PORT: 8787,
      ASKBRIDGE_DB: './askbridge.db',
      ASKBRIDGE_URL: 'http://127.0.0.1:8787',
      ASKBRIDGE_MCP_TIMEOUT: 50,
    })
    expect(c.ASKBRIDGE_API_TOKEN).toBeUndefined()
    expect(c.SLACK_BOT_TOKEN).toBeUndefined()
  })

  test('every problem is named in one message, values never echoed', () => {
    let error: unknown
    try {
      parseConfig(
        {
          ASKBRIDGE_PORT: '99999',
          ASKBRIDGE_URL: 'ftp://x',
          SLACK_BOT_TOKEN: 'xoxp-fake-usr',
          SLACK_CHANNEL: 'C1',
          DISCORD_PUBLIC_KEY: 'zz',
          ASKBRIDGE_HOST: '10.0.0.5',
        },
        PLATFORMS,
      )
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as ConfigError).message
    for (const key of [
      'ASKBRIDGE_PORT',
      'ASKBRIDGE_URL',
      'SLACK_BOT_TOKEN',
      'SLACK_APP_TOKEN or SLACK_SIGNING_SECRET',
      'DISCORD_PUBLIC_KEY',
      'ASKBRIDGE_API_TOKEN',
    ]) {
      expect(message).toContain(key)
    }
    expect(message).not.toContain('xoxp-fake-usr')
    expect((error as ConfigError).problems.length).toBeGreaterThanOrEqual(6)
  })

  test('retention: 30 days for calls and the audit kept by default, durations or 0, a bad value named', () => {
    const defaults = parseConfig({}, PLATFORMS)
    expect(defaults.ASKBRIDGE_RETENTION).toBe(30 * 86_400_000)
    expect(defaults.ASKBRIDGE_AUDIT_RETENTION).toBe(0)
    const set = parseConfig({ ASKBRIDGE_RETENTION: '0', ASKBRIDGE_AUDIT_RETENTION: '365d' }, PLATFORMS)
    expect(set.ASKBRIDGE_RETENTION).toBe(0)
    expect(set.ASKBRIDGE_AUDIT_RETENTION).toBe(365 * 86_400_000)
    expect(parseConfig({ ASKBRIDGE_RETENTION: '12h' }, PLATFORMS).ASKBRIDGE_RETENTION).toBe(12 * 3_600_000)
    let error: unknown
    try {
      parseConfig({ ASKBRIDGE_RETENTION: 'a month', ASKBRIDGE_AUDIT_RETENTION: '-1d' }, PLATFORMS)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems
    expect(problems).toContainEqual(
      expect.stringMatching(/^ASKBRIDGE_RETENTION must be a duration such as 30d/),
    )
    expect(problems).toContainEqual(expect.stringMatching(/^ASKBRIDGE_AUDIT_RETENTION must be a duration/))
  })

  test('Slack and Discord settings without their bot token are named', () => {
    expect(() =>
      parseConfig({ SLACK_CHANNEL: 'C1', DISCORD_CHANNEL_ID: '110000000000000003' }, PLATFORMS),
    ).toThrow(
      /SLACK_CHANNEL is set but SLACK_BOT_TOKEN is not[\s\S]*DISCORD_CHANNEL_ID is set but DISCORD_BOT_TOKEN is not/,
    )
    const ok = parseConfig(
      {
        SLACK_BOT_TOKEN: 'xoxb-fake',
        SLACK_APP_TOKEN: 'xapp-test-token',
        SLACK_CHANNEL: 'C0123',
        DISCORD_BOT_TOKEN: 'discord-test-token',
        DISCORD_CHANNEL_ID: '110000000000000003',
      },
      PLATFORMS,
    )
    expect(secretsOf(ok, PLATFORMS)).toEqual(['xoxb-fake', 'xapp-test-token', 'discord-test-token'])
  })

  test('.env fills in what the environment lacks; the environment wins', () => {
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-env-'))
    try {
      const file = join(dir, '.env')
      writeFileSync(file, '# comment\nASKBRIDGE_PORT=9999\nASKBRIDGE_DB=sqlite:/tmp/from-file.db\n')
      const c = loadConfig({ platforms: PLATFORMS, env: { ASKBRIDGE_PORT: '7000' }, envFile: file })
      expect(c.ASKBRIDGE_PORT).toBe(7000)
      expect(c.ASKBRIDGE_DB).toBe('sqlite:/tmp/from-file.db')
      expect(
        loadConfig({ platforms: PLATFORMS, env: {}, envFile: join(dir, 'missing.env') }).ASKBRIDGE_PORT,
      ).toBe(8787)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('.env.example is valid as a .env and lists every variable', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-env-'))
    try {
      writeFileSync(join(dir, '.env'), example)
      expect(loadConfig({ platforms: PLATFORMS, env: {}, envFile: join(dir, '.env') }).ASKBRIDGE_PORT).toBe(
        8787,
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    // The core's variables and every platform module's.
    const keys = [...Object.keys(envSchema.shape), ...PLATFORMS.flatMap((p) => Object.keys(p.env))]
    for (const key of keys) expect(example, key).toMatch(new RegExp(`^#? ?${key}=`, 'm'))
  })
})

describe('agent tokens name their requester on a platform the modules know', () => {
  const tokens = (requesters: string[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-requester-'))
    const path = join(dir, 'tokens.json')
    writeFileSync(
      path,
      JSON.stringify({
        tokens: requesters.map((requester, i) => ({
          sha256: String(i).repeat(64),
          agent: `agent-${i}`,
          scopes: ['ask'],
          requester,
        })),
      }),
    )
    return { path, done: () => rmSync(dir, { recursive: true, force: true }) }
  }

  test('e-mail and each platform user id shape are accepted', () => {
    const file = tokens([
      'email:Ann@example.com',
      'slack:U0ANN',
      'discord:110000000000000021',
      'teams:0f8fad5b-d9cb-469f-a165-70867728950e',
    ])
    try {
      const c = parseConfig({ ASKBRIDGE_AGENT_TOKENS: file.path }, PLATFORMS)
      expect(c.ASKBRIDGE_AGENT_TOKENS?.map((t) => t.requester)).toEqual([
        { platform: 'email', userId: 'ann@example.com' },
        { platform: 'slack', userId: 'U0ANN' },
        { platform: 'discord', userId: '110000000000000021' },
        { platform: 'teams', userId: '0f8fad5b-d9cb-469f-a165-70867728950e' },
      ])
    } finally {
      file.done()
    }
  })

  test('an unknown platform and a malformed id are named together, without the values', () => {
    const file = tokens(['matrix:@ann:example.org', 'slack:ann', 'discord:#general'])
    try {
      let problems: string[] = []
      try {
        parseConfig({ ASKBRIDGE_AGENT_TOKENS: file.path }, PLATFORMS)
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        problems = (error as ConfigError).problems
      }
      expect(problems).toEqual([
        'ASKBRIDGE_AGENT_TOKENS: tokens.0.requester names no platform askbridge knows (email, slack, discord, teams)',
        'ASKBRIDGE_AGENT_TOKENS: tokens.1.requester is not a Slack user id (U…)',
        'ASKBRIDGE_AGENT_TOKENS: tokens.2.requester is not a Discord user id (a snowflake)',
      ])
    } finally {
      file.done()
    }
  })
})
