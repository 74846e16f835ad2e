/**
 * The rig of the hook end-to-end tests (test/hooks/e2e.test.ts, decisions.test.ts): a real
 * bridge with Slack (real Bolt over Socket Mode against the fake Slack) and Discord (real
 * discord.js against the fake Discord), the web inbox, and a working directory for the command
 * hook; and the steps both use: wait for the next hook card on every surface, click on Discord.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isPostPending } from '../../src/answerer/adapter.js'
import { type ComponentRef, cardRef, encodeComponentId } from '../../src/card/codec.js'
import type { CardState } from '../../src/card/types.js'
import { ensureBuilt } from '../cli/built.js'
import { waitResponded } from '../discord/rig.js'
import { type FakeUser as DiscordUser, FakeDiscord } from '../fakes/discord/server.js'
import { FakeSlack } from '../fakes/slack/server.js'
import { startBridge, type TestBridge } from '../server/helpers.js'
import { keyFor, until } from './service.js'

export interface HookRig {
  slack: FakeSlack
  discord: FakeDiscord
  tb: TestBridge
  /** The command hook's working directory. */
  cwd: string
  close(): Promise<void>
}

/** Start the fakes and a bridge on them (the built CLI too, for the command hook). */
export async function startHookRig(options: {
  /** The Slack channel the bridge posts to. */
  slackChannel: string
  /** Prefix of the command hook's temporary working directory. */
  tmpPrefix: string
  /** More of the bridge's environment. */
  env?: Record<string, string>
}): Promise<HookRig> {
  await ensureBuilt()
  const cwd = mkdtempSync(join(tmpdir(), options.tmpPrefix))
  const slack = await FakeSlack.start({ pingIntervalMs: 1000 })
  // Every test posts to the one Discord channel; about hooks, not pacing: limits off.
  const discord = await new FakeDiscord({ rateLimits: false }).start()
  const tb = await startBridge({
    SLACK_BOT_TOKEN: slack.options.botToken,
    SLACK_APP_TOKEN: slack.options.appToken,
    SLACK_API_URL: slack.apiUrl,
    SLACK_CHANNEL: options.slackChannel,
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_CHANNEL_ID: discord.channelId,
    ...options.env,
  })
  await slack.waitForSocket()
  return {
    slack,
    discord,
    tb,
    cwd,
    async close() {
      await tb.close()
      await slack.close()
      await discord.close()
      rmSync(cwd, { recursive: true, force: true })
    },
  }
}

/** Resolves once every one of `platforms` has posted `card` and recorded it (the reference has replaced the intent to post). */
export async function postedOn(
  tb: TestBridge,
  card: CardState,
  platforms: readonly string[],
  tries?: number,
): Promise<void> {
  await until(
    async () => {
      const posted = (await tb.bridge.store.listPosts(card))
        .filter((p) => !isPostPending(p.ref))
        .map((p) => p.platform)
      return platforms.every((p) => posted.includes(p))
    },
    `the ${platforms.join(', ')} copies`,
    tries,
  )
}

/**
 * The next hook card not in `seen` (and matching `which`), once Slack, Discord and the inbox
 * have posted it; it is added to `seen`.
 */
export async function nextHookCard(
  tb: TestBridge,
  seen: Set<string>,
  options: { which?: (card: CardState) => boolean; tries?: number } = {},
): Promise<CardState> {
  const card = await until(async () => {
    const cards = await tb.bridge.store.listCards<CardState>()
    return cards.map((c) => c.state).find((c) => !seen.has(c.callId) && (options.which?.(c) ?? true))
  }, 'a new hook card')
  seen.add(card.callId)
  await postedOn(tb, card, ['slack', 'discord', 'web'], options.tries)
  return card
}

/** The id of a card's component (button, menu) for the call `callId`. */
export async function componentId(
  tb: TestBridge,
  callId: string,
  ref: Omit<ComponentRef, 'callId' | 'agent'>,
): Promise<string> {
  return encodeComponentId({ ...cardRef(await keyFor(tb.bridge.store, callId)), ...ref })
}

/** `user` clicks a component of the card on Discord; resolves once the click is answered. */
export async function discordClick(
  rig: Pick<HookRig, 'tb' | 'discord'>,
  callId: string,
  ref: Omit<ComponentRef, 'callId' | 'agent'>,
  user: DiscordUser,
) {
  const customId = await componentId(rig.tb, callId, ref)
  const message = await until(() => rig.discord.messageWith(customId), `Discord component ${customId}`)
  const record = await rig.discord.click(message.id, customId, user)
  await waitResponded(record)
  return record
}
