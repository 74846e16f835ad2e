/**
 * A card is posted once even when two bridges on one PostgreSQL database see the same ask (a
 * client re-attaching to another replica while the first is still posting), and a card whose
 * poster died between claiming and posting is posted by another bridge, once.
 */
import { createServer, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { isPostPending } from '../../src/answerer/adapter.js'
import { ensureBuilt } from '../cli/built.js'
import { FakeSlack } from '../fakes/slack/server.js'
import { type TestSchema, testSchema } from '../helpers/pg.js'
import { type Replica, startReplica, stopReplica } from '../helpers/replica.js'
import { until } from '../helpers/service.js'
import { request, startBridge, type TestBridge } from '../server/helpers.js'
import { fakeUser } from '../slack/rig.js'

let schema: TestSchema | undefined
let fake: FakeSlack | undefined
const bridges: TestBridge[] = []
const children: Replica[] = []
let blackHole: { server: Server; sockets: Set<Socket> } | undefined
afterEach(async () => {
  for (const c of children.splice(0)) await stopReplica(c)
  await Promise.all(bridges.splice(0).map((b) => b.close()))
  for (const s of blackHole?.sockets ?? []) s.destroy()
  blackHole?.server.closeAllConnections()
  await new Promise((r) => (blackHole ? blackHole.server.close(r) : r(undefined)))
  blackHole = undefined
  await fake?.close()
  await schema?.drop()
  schema = undefined
})

const slackEnv = (f: FakeSlack, apiUrl = f.apiUrl) => ({
  SLACK_BOT_TOKEN: f.options.botToken,
  SLACK_SIGNING_SECRET: f.options.signingSecret,
  SLACK_CHANNEL: 'C0ONCE',
  SLACK_API_URL: apiUrl,
})
const body = (callId: string) => ({
  agentId: 'deploy',
  callId,
  questions: [{ id: 'go', question: `Ship ${callId}?`, options: [{ label: 'Yes' }, { label: 'No' }] }],
})
const slackPost = async (bridge: TestBridge, callId: string) =>
  (await bridge.bridge.store.listPosts({ agentId: 'deploy', callId })).find((p) => p.platform === 'slack')
const ask = (url: string, callId: string) => request(url, 'POST', '/v1/ask', body(callId))

/** Click Yes on the card of `callId` through the bridge at `url` (signed, as Slack sends it). */
async function clickYes(f: FakeSlack, url: string, callId: string): Promise<void> {
  const message = f.messagesOf(callId)[0]
  const yes = f.liveActionIds(callId).find((id) => id.endsWith('|c|0|0'))
  if (!message || !yes) throw new Error(`no card for ${callId}`)
  const res = await f.sendHttp(f.actionPayload(fakeUser({ userId: 'U0ANN', name: 'Ann' }), message, yes), {
    url: `${url}/slack/events`,
  })
  expect(res.status).toBe(200)
}

it('two bridges asked the same call at the same instant post one card; both asks get the answer', async () => {
  schema = await testSchema()
  // About posting once, not pacing: two bridges' posts to one channel would meet Slack's
  // per-channel limit and wait out 429s, so the fake's rate limits are off.
  fake = await FakeSlack.start({ rateLimits: false })
  const f = fake
  // A slow Slack: each post is under way long enough for the other bridge to see the ask.
  f.delay('chat.postMessage', 150)
  const env = { ASKBRIDGE_DB: schema.url, ...slackEnv(f) }
  const [a, b] = [await startBridge(env), await startBridge(env)]
  bridges.push(a, b)
  const ids = Array.from({ length: 6 }, (_, i) => `same-${i}`)
  // Each call reaches both bridges: the first at the same instant, the rest once bridge A has
  // claimed the card and is posting it.
  const posting = async (id: string) => {
    await until(() => slackPost(a, id))
    return ask(b.url, id)
  }
  const asks = ids.flatMap((id, i) => [ask(a.url, id), i === 0 ? ask(b.url, id) : posting(id)])
  for (const id of ids) {
    await until(async () => {
      const slack = await slackPost(b, id)
      return slack && !isPostPending(slack.ref)
    }, `${id} posted and recorded`)
  }
  for (const [i, id] of ids.entries()) await clickYes(f, i % 2 ? a.url : b.url, id)
  for (const res of await Promise.all(asks)) {
    expect(res.status).toBe(200)
    expect(res.body.answers).toEqual([{ id: 'go', selected: ['Yes'] }])
  }
  // Exactly one card per call: one message, one postMessage.
  for (const id of ids) expect(f.messagesOf(id), id).toHaveLength(1)
  expect(f.calls.filter((c) => c.method === 'chat.postMessage')).toHaveLength(ids.length)
}, 60_000)

it('a bridge killed between claiming a card and posting it: another bridge posts it, once', async () => {
  await ensureBuilt()
  schema = await testSchema()
  fake = await FakeSlack.start()
  const f = fake
  // Replica A's Slack is the fake, except that chat.postMessage never answers: it claims the
  // card, sends the post, and hangs there.
  const sockets = new Set<Socket>()
  const server = createServer(async (req, res) => {
    if (req.url?.endsWith('/chat.postMessage')) {
      sockets.add(req.socket)
      return
    }
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const upstream = await fetch(`${f.url}${req.url}`, {
      method: req.method ?? 'GET',
      headers: req.headers as Record<string, string>,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    })
    res.writeHead(upstream.status, {
      'content-type': upstream.headers.get('content-type') ?? 'application/json',
    })
    res.end(Buffer.from(await upstream.arrayBuffer()))
  })
  blackHole = { server, sockets }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  const common = { ASKBRIDGE_DB: schema.url, ASKBRIDGE_LOG_LEVEL: 'warn' }
  const a = await startReplica({
    ...common,
    ASKBRIDGE_PORT: '0',
    ...slackEnv(f, `http://127.0.0.1:${port}/api/`),
  })
  children.push(a)
  const b = await startBridge({ ...common, ...slackEnv(f) })
  bridges.push(b)

  const first = ask(a.url, 'orphan').catch(() => undefined)
  const claimed = async () =>
    schema?.query<{ claim_owner: string | null; ref: string }>(
      "SELECT claim_owner, ref FROM askbridge_posts WHERE call_id = 'orphan' AND platform = 'slack'",
    )
  await until(async () => (await claimed())?.[0]?.claim_owner, 'replica A claimed the card', 10_000)
  await until(() => sockets.size > 0, 'replica A is posting', 10_000)
  a.child.kill('SIGKILL')
  await a.exited
  await first

  // Nobody re-attaches: bridge B finds the claim lapsed and posts the card.
  await until(() => f.messagesOf('orphan').length > 0, 'bridge B posted the orphaned card', 15_000)
  // The client comes back through bridge B and gets the answer clicked there.
  const again = ask(b.url, 'orphan')
  await until(async () => !isPostPending(JSON.parse((await claimed())?.[0]?.ref ?? 'null')), 'post recorded')
  await clickYes(f, b.url, 'orphan')
  expect((await again).body.answers).toEqual([{ id: 'go', selected: ['Yes'] }])
  expect(f.messagesOf('orphan')).toHaveLength(1)
  expect((await claimed())?.[0]?.claim_owner).toBeNull()
}, 60_000)
