/**
 * Claude Code's `Notification` and `Stop` hooks, end to end: a route that lists them in `notices`
 * gets an FYI without buttons in its Slack channel (real Bolt against the fake Slack), its Discord
 * channel (real discord.js against the fake Discord) and the inbox, through both the HTTP hook and
 * the command hook; the hook answers `{}` either way, and every notice is in the audit log. A
 * route without `notices` posts nothing.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Notice } from '../../src/answerer/adapter.js'
import { ensureBuilt } from '../cli/built.js'
import { type StoredMessage as DiscordMessage, FakeDiscord } from '../fakes/discord/server.js'
import { FakeSlack, type StoredMessage as SlackMessage } from '../fakes/slack/server.js'
import { commandHook, fixture, httpHook } from '../helpers/claude-code.js'
import { inboxCookie, startBridge, type TestBridge } from '../server/helpers.js'
import { blocksText } from '../slack/rig.js'

const SLACK_CHANNEL = 'C0HOOKS'

let slack: FakeSlack
let discord: FakeDiscord
let tb: TestBridge
let cwd: string

beforeAll(async () => {
  await ensureBuilt()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-notices-'))
  slack = await FakeSlack.start({ pingIntervalMs: 1000 })
  discord = await new FakeDiscord().start()
  const everywhere = [
    // A notice never mentions anyone, even on a destination whose cards do.
    { platform: 'slack', channel: SLACK_CHANNEL, mention: ['subteam:S0ONCALL'] },
    { platform: 'discord', channel: discord.channelId },
    { platform: 'web' },
  ]
  const routes = join(cwd, 'routes.json')
  writeFileSync(
    routes,
    JSON.stringify({
      routes: [
        {
          name: 'watched',
          match: { agentId: 'claude-code:abc123' },
          destinations: everywhere,
          notices: ['Notification', 'Stop'],
        },
        {
          name: 'stop-only',
          match: { agentId: 'claude-code:batch-*' },
          destinations: everywhere,
          notices: ['Stop'],
        },
        { name: 'quiet', match: { agentId: 'claude-code:*' }, destinations: everywhere },
      ],
    }),
  )
  tb = await startBridge({
    SLACK_BOT_TOKEN: slack.options.botToken,
    SLACK_APP_TOKEN: slack.options.appToken,
    SLACK_API_URL: slack.apiUrl,
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    ASKBRIDGE_ROUTES: routes,
  })
  await slack.waitForSocket()
}, 60_000)

afterAll(async () => {
  await tb?.close()
  await slack?.close()
  await discord?.close()
  rmSync(cwd, { recursive: true, force: true })
})

const slackMessages = (): SlackMessage[] =>
  [...slack.messages.values()].filter((m) => m.channel === SLACK_CHANNEL)
const discordMessages = (): DiscordMessage[] => discord.channelMessages()

async function inboxNotices(): Promise<Notice[]> {
  const res = await fetch(`${tb.url}/inbox/api/notices`, { headers: { cookie: inboxCookie(tb.url) } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { notices: Notice[] }).notices
}

async function noticeAudit(): Promise<Array<{ agentId?: string; detail?: unknown }>> {
  return (await tb.bridge.store.listAudit({})).filter((e) => e.kind === 'notice')
}

/** What one notice looks like on each surface, posted by the time the hook answered. */
async function expectPosted(
  before: { slack: number; discord: number; inbox: number },
  title: string,
  text: string,
) {
  const s = slackMessages().slice(before.slack)
  expect(s).toHaveLength(1)
  const posted = s[0] as SlackMessage
  expect(posted.blocks.some((b) => b.type === 'actions')).toBe(false)
  expect(blocksText(posted.blocks)).toContain(title)
  expect(blocksText(posted.blocks)).toContain(text)
  expect(blocksText(posted.blocks)).toContain('claude-code:abc123')
  const d = discordMessages().slice(before.discord)
  expect(d).toHaveLength(1)
  const message = d[0] as DiscordMessage
  expect(message.components).toEqual([])
  expect(message.allowed_mentions).toEqual({ parse: [] })
  const embed = message.embeds[0] as { title?: string; description?: string; footer?: { text: string } }
  expect(embed.title).toBe(title)
  expect(embed.description).toContain(text)
  const inbox = await inboxNotices()
  expect(inbox).toHaveLength(before.inbox + 1)
  expect(inbox[0]).toMatchObject({ agentId: 'claude-code:abc123', title, text })
}

const counts = async () => ({
  slack: slackMessages().length,
  discord: discordMessages().length,
  inbox: (await inboxNotices()).length,
})

describe('Notification and Stop notices', () => {
  const shown = {
    notification: {
      event: 'Notification',
      title: 'Permission needed',
      text: 'Claude needs your permission to use Bash',
    },
    stop: {
      event: 'Stop',
      title: 'Claude Code finished its turn',
      text: "I've finished the refactor; all tests pass.",
    },
  }
  it.each([
    ['notification', 'http'],
    ['notification', 'command'],
    ['stop', 'http'],
    ['stop', 'command'],
  ] as const)(
    '%s through the %s hook: an FYI in Slack, Discord and the inbox, answered {}',
    async (name, hook) => {
      const before = await counts()
      if (hook === 'http') expect(await httpHook(tb.url, fixture(name))).toEqual({ status: 200, body: {} })
      else expect(await commandHook(tb.url, cwd, fixture(name))).toEqual({ code: 0, stderr: '', body: {} })
      const { event, title, text } = shown[name]
      await expectPosted(before, title, text)
      expect(slack.mentions).toEqual([])
      expect((await noticeAudit()).at(-1)).toMatchObject({
        agentId: 'claude-code:abc123',
        detail: {
          event,
          route: 'watched',
          title,
          text,
          posted: [`slack:${SLACK_CHANNEL}:`, `discord:${discord.channelId}:`, 'web::'],
        },
      })
    },
  )

  it('agent text pings nobody and injects no markup on any surface', async () => {
    const before = await counts()
    const hostile = {
      ...fixture('notification'),
      title: '@here <!channel> deploy',
      message: '@everyone <!subteam^S0ONCALL> <@U0GRACE> <@&210000000000000009> [click](javascript:alert(1))',
    }
    expect(await httpHook(tb.url, hostile)).toEqual({ status: 200, body: {} })
    const posted = slackMessages().slice(before.slack)
    expect(posted).toHaveLength(1)
    expect(slack.mentions).toEqual([])
    // As sent (before the client unescapes it for reading): nothing Slack would parse as a mention or link.
    const sent = JSON.stringify((posted[0] as SlackMessage).blocks)
    expect(sent).not.toMatch(/<!channel>|<!subteam|<@U0GRACE>|<javascript:/)
    expect(blocksText((posted[0] as SlackMessage).blocks)).toContain('<!channel> deploy')
    const message = discordMessages().slice(before.discord)[0] as DiscordMessage
    expect(message.allowed_mentions).toEqual({ parse: [] })
    const embed = JSON.stringify(message.embeds)
    expect(embed).not.toMatch(/@everyone|@here|<@&\d|<@!?\d/)
    expect(discord.rejected).toEqual([])
  })

  it('a long message is cut within every platform limit', async () => {
    const before = await counts()
    const long = { ...fixture('stop'), last_assistant_message: `${'word '.repeat(20_000)}END` }
    expect(await commandHook(tb.url, cwd, long)).toEqual({ code: 0, stderr: '', body: {} })
    const posted = slackMessages().slice(before.slack)[0] as SlackMessage
    for (const block of posted.blocks) {
      const text = (block.text as { text?: string } | undefined)?.text ?? ''
      expect(text.length).toBeLessThanOrEqual(3000)
    }
    expect(blocksText(posted.blocks)).toContain('…')
    expect(blocksText(posted.blocks)).not.toContain('END')
    const embed = (discordMessages().slice(before.discord)[0] as DiscordMessage).embeds[0] as {
      description: string
    }
    expect(embed.description.length).toBeLessThanOrEqual(4096)
    expect(embed.description).toContain('…')
    expect(discord.rejected).toEqual([])
    const inbox = (await inboxNotices())[0] as Notice
    expect(inbox.text.length).toBeLessThanOrEqual(2500)
    expect(inbox.text.endsWith('…')).toBe(true)
  })

  it('a route without the event in `notices` posts nothing, and the hook still answers {}', async () => {
    const before = await counts()
    const audited = (await noticeAudit()).length
    const quiet = { ...fixture('notification'), session_id: 'other-session' }
    expect(await httpHook(tb.url, quiet)).toEqual({ status: 200, body: {} })
    expect(await commandHook(tb.url, cwd, { ...fixture('stop'), session_id: 'other-session' })).toMatchObject(
      {
        code: 0,
        body: {},
      },
    )
    // Only Stop is listed for batch sessions.
    expect(await httpHook(tb.url, { ...fixture('notification'), session_id: 'batch-7' })).toEqual({
      status: 200,
      body: {},
    })
    // The hook answers after posting (or deciding not to post), so nothing can still be on its way.
    expect(await counts()).toEqual(before)
    expect((await noticeAudit()).length).toBe(audited)
    expect(await httpHook(tb.url, { ...fixture('stop'), session_id: 'batch-7' })).toEqual({
      status: 200,
      body: {},
    })
    expect(slackMessages().length).toBe(before.slack + 1)
    expect((await noticeAudit()).at(-1)).toMatchObject({
      agentId: 'claude-code:batch-7',
      detail: { event: 'Stop', route: 'stop-only' },
    })
  })
})
