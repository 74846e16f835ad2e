/**
 * Exactly one party is told its answer counted. A continued call is answered by ten people at
 * once over five ways in: signed Slack clicks, Discord gateway clicks, signed Discord HTTP
 * interactions, inbox actions and `POST /v1/questions/:id/answer`, round after round. Whoever
 * answers, the one answer queued for the agent is the one party told it counted (an applied click
 * or `accepted: true`); every other party got a response, a refusal, and an audit entry marked
 * refused.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { decodeComponentId } from '../../src/card/codec.js'
import { FakeDiscord, type FakeUser, type InteractionRecord } from '../fakes/discord/server.js'
import { FakeSlack } from '../fakes/slack/server.js'
import { act, request, startBridge, type TestBridge, until } from '../server/helpers.js'
import { fakeUser } from '../slack/rig.js'

const ROUNDS = 12
/** One option per way in: the queued reply's label says which way won. */
const WAYS = ['slack', 'gateway', 'discord-http', 'inbox', 'api'] as const
const question = {
  id: 'pick',
  question: 'Which way wins?',
  options: WAYS.map((label) => ({ label })),
}

let slack: FakeSlack
let discord: FakeDiscord
let b: TestBridge
beforeAll(async () => {
  slack = await FakeSlack.start()
  discord = await new FakeDiscord({ rateLimits: false }).start()
  b = await startBridge({
    SLACK_BOT_TOKEN: slack.options.botToken,
    SLACK_SIGNING_SECRET: slack.options.signingSecret,
    SLACK_CHANNEL: 'C0EXACTLY',
    SLACK_API_URL: slack.apiUrl,
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_CHANNEL_ID: discord.channelId,
    DISCORD_PUBLIC_KEY: discord.publicKeyHex,
  })
  discord.interactionsUrl = `${b.url}/discord/interactions`
}, 30_000)
afterAll(async () => {
  await b?.close()
  await discord?.close()
  await slack?.close()
})

const discordUser = (n: string): FakeUser => ({
  id: `2100000000000${n.padStart(5, '0')}`,
  username: `user${n}`,
  global_name: `User ${n}`,
})

const ephemeral = (data: unknown) =>
  (Number((data as { flags?: number } | undefined)?.flags ?? 0) & 64) === 64

/**
 * What a Discord interaction was told. An ephemeral initial response (flag 64) is a refusal. Any
 * other initial response is the clicked card's new look (or a deferred update, when the work ran
 * past the adapter's acknowledgement time), and a refusal then follows as an ephemeral follow-up
 * (adapters/discord/ack.ts): which of the two it was, the person's audit entry says, and a refused
 * one must have had its follow-up.
 */
async function discordTold(record: InteractionRecord, callId: string): Promise<'refused' | 'applied'> {
  const response = await record.responded
  if (ephemeral((response as { data?: unknown }).data)) return 'refused'
  const entry = await until(
    async () =>
      (await b.bridge.store.listAudit({ callId })).find(
        (a) => a.kind === 'interaction' && a.actor?.userId === record.userId,
      ),
    `the audit entry of interaction ${record.id}`,
  )
  if (!entry.refused) return 'applied'
  await until(() => record.followUps.some(ephemeral), `the refusal follow-up of interaction ${record.id}`)
  return 'refused'
}

it(`${ROUNDS} rounds of 10 answers to one continued call over five ways in: one party counted`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const callId = `once-${round}`
    const agentId = 'agent-once'
    // A timed ask whose window closes soon: the call is continued, its card still answerable. Long
    // enough for the card to be posted (a window that closed first would post none).
    const asked = await request(b.url, 'POST', '/v1/ask', {
      agentId,
      callId,
      questions: [question],
      timeoutMs: 1000,
    })
    expect(asked.body.pending).toBe(true)
    const slackCard = await until(() => slack.messagesOf(callId)[0], `slack card ${callId}`)
    const discordCard = await until(
      () => discord.channelMessages().find((m) => JSON.stringify(m.components).includes(callId)),
      `discord card ${callId}`,
    )
    await until(async () => (await b.bridge.store.getCall({ agentId, callId }))?.state === 'continued')

    const slackAction = (o: number) =>
      slack.liveActionIds(callId).find((id) => {
        const ref = decodeComponentId(id)
        return ref?.verb === 'choose' && ref.o === o
      })
    const discordButton = (o: number) =>
      discordCard.components
        .flatMap((row) => (row.components as Array<{ custom_id?: string }> | undefined) ?? [])
        .map((c) => String(c.custom_id))
        .find((id) => {
          const ref = decodeComponentId(id)
          return ref?.callId === callId && ref.verb === 'choose' && ref.o === o
        })

    // Every request is built before any is sent: all ten see the same live card.
    const sends: Array<() => Promise<{ way: (typeof WAYS)[number]; told: 'applied' | 'refused' }>> = []
    for (let n = 0; n < 2; n++) {
      const tag = `${round}${n}`
      const slackPayload = slack.actionPayload(
        fakeUser({ userId: `U0ONCE${tag}`, name: `Slack ${tag}` }),
        slackCard,
        slackAction(0) as string,
      )
      sends.push(async () => {
        const res = await slack.sendHttp(slackPayload, { url: `${b.url}/slack/events` })
        expect(res.timedOut).toBe(false)
        expect(res.status).toBe(200)
        const audit = await b.bridge.store.listAudit({ callId })
        const mine = audit.find((a) => a.kind === 'interaction' && a.actor?.userId === `U0ONCE${tag}`)
        return { way: 'slack', told: mine && !mine.refused ? 'applied' : 'refused' }
      })
      const gateway = discord.prepareClick(discordCard.id, discordButton(1) as string, discordUser(`1${tag}`))
      sends.push(async () => {
        discord.dispatch('INTERACTION_CREATE', gateway.payload)
        return { way: 'gateway', told: await discordTold(gateway, callId) }
      })
      const http = discord.prepareClick(discordCard.id, discordButton(2) as string, discordUser(`2${tag}`))
      sends.push(async () => {
        expect(await discord.postHttpInteraction(http)).toBeLessThan(300)
        return { way: 'discord-http', told: await discordTold(http, callId) }
      })
      sends.push(async () => {
        const res = await act(
          b.url,
          callId,
          { type: 'choose', questionId: 'pick', label: 'inbox' },
          `Inbox ${tag}`,
        )
        expect(res.status).toBe(200)
        return { way: 'inbox', told: res.body.ok === true ? 'applied' : 'refused' }
      })
      sends.push(async () => {
        const res = await request(b.url, 'POST', `/v1/questions/${callId}/answer?agentId=${agentId}`, {
          answers: [{ id: 'pick', selected: ['api'] }],
        })
        if (res.status === 200)
          return { way: 'api', told: res.body.accepted === true ? 'applied' : 'refused' }
        expect(res.body.error?.code).toBe('REPLY_QUEUED')
        return { way: 'api', told: 'refused' }
      })
    }
    const told = await Promise.all(sends.map((send) => send()))

    const winners = told.filter((t) => t.told === 'applied')
    expect(winners, `round ${round}: parties told they counted`).toHaveLength(1)
    const call = await b.bridge.store.getCall({ agentId, callId })
    const queued = call?.queuedReply?.payload as { answers?: Array<{ selected: string[] }> } | undefined
    // The agent gets the winner's answer, and only that one.
    expect(queued?.answers?.[0]?.selected, `round ${round}: the queued reply`).toEqual([winners[0]?.way])
    // Every other party is audited as refused (clicks and API answers alike).
    const audit = await b.bridge.store.listAudit({ callId })
    const answers = audit.filter((a) => a.kind === 'interaction' || a.kind === 'answer')
    expect(
      answers.filter((a) => !a.refused),
      `round ${round}: applied in the audit`,
    ).toHaveLength(1)
    expect(
      answers.filter((a) => a.refused),
      `round ${round}: refused in the audit`,
    ).toHaveLength(told.length - 1)
  }
}, 120_000)
