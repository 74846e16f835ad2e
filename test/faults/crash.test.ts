/**
 * kill -9 at a random instant: `askbridge serve` (the built command, a real child process) with
 * 100 open calls on the fake Slack, 50 blocking and 50 timed, killed while cards are being
 * posted and people are clicking. After a restart on the same database: every call is
 * answerable, no call has two cards, and every click Slack was told was received reaches the
 * agent (as the ask's result, in the projection, or as a late reply).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { isPostPending } from '../../src/answerer/adapter.js'
import { decodeComponentId } from '../../src/card/codec.js'
import { openStore } from '../../src/store/index.js'
import { BIN, ensureBuilt } from '../cli/built.js'
import { FakeSlack } from '../fakes/slack/server.js'
import { until } from '../helpers/service.js'

const CALLS = 100
const SEED = 1301

/** A small seeded generator (mulberry32): the same instants on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const question = (i: number) => ({
  id: 'pick',
  question: `Which option for task ${i}?`,
  options: [{ label: 'Alpha' }, { label: 'Beta' }, { label: 'Gamma' }],
})
const callIds = Array.from({ length: CALLS }, (_, i) => (i < CALLS / 2 ? `b${i}` : `t${i}`))
const channelOf = (i: number) => `C0CRASH${i}`
const PEOPLE = ['U0ANN', 'U0BOB', 'U0CAT', 'U0DAN']

let fake: FakeSlack
let dir: string
let port: number
const children: ChildProcessByStdio<null, Readable, Readable>[] = []

beforeAll(async () => {
  await ensureBuilt()
  // About crashes, not pacing: 100 cards answered at once would wait a minute or more for
  // chat.update's Tier 3 (50 a minute), so the fake's rate limits are off.
  fake = await FakeSlack.start({ pingIntervalMs: 1000, rateLimits: false })
  // Each post takes a moment, so the kill lands between Slack accepting a post and askbridge
  // storing its reference for some of the cards.
  fake.delay('chat.postMessage', 8)
  dir = mkdtempSync(join(tmpdir(), 'askbridge-crash-'))
  // One channel per call: Slack's pacing is per channel, so 100 cards post in parallel.
  const routes = {
    routes: Array.from({ length: CALLS }, (_, i) => ({
      name: `r${i}`,
      match: { route: `r${i}` },
      destinations: [{ platform: 'slack', channel: channelOf(i) }],
    })),
  }
  writeFileSync(join(dir, 'routes.json'), JSON.stringify(routes))
  port = await freePort()
}, 120_000)

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  await fake?.close()
  rmSync(dir, { recursive: true, force: true })
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port
      s.close(() => resolve(p))
    })
    s.on('error', reject)
  })
}

async function startServe(): Promise<{ url: string; child: ChildProcessByStdio<null, Readable, Readable> }> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      ASKBRIDGE_PORT: String(port),
      ASKBRIDGE_DB: join(dir, 'bridge.db'),
      ASKBRIDGE_ROUTES: join(dir, 'routes.json'),
      SLACK_BOT_TOKEN: fake.options.botToken,
      SLACK_APP_TOKEN: fake.options.appToken,
      SLACK_API_URL: fake.apiUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stderr = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      const m = /"msg":"askbridge is listening","url":"(http:\/\/[^"]+)"/.exec(stderr)
      if (m?.[1]) resolve(m[1])
    })
    child.on('exit', (code, signal) => reject(new Error(`serve exited ${code ?? signal}: ${stderr}`)))
  })
  return { url, child }
}

function ask(url: string, i: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const timed = i >= CALLS / 2
  return fetch(`${url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      callId: callIds[i],
      agentId: 'agent-1',
      route: `r${i}`,
      questions: [question(i)],
      ...(timed ? { timeoutMs: 200 } : {}),
    }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))
}

/** Click option `o` on a call's live card as `user`; true when Slack got the acknowledgement. */
async function click(callId: string, o: number, user: string): Promise<boolean> {
  const message = fake
    .messagesOf(callId)
    .find((m) => fake.liveActionIds(callId).some((id) => JSON.stringify(m.blocks).includes(id)))
  const actionId = fake.liveActionIds(callId).find((id) => {
    const ref = decodeComponentId(id)
    return ref?.verb === 'choose' && ref.o === o
  })
  if (!message || !actionId) return false
  try {
    const delivery = await fake.deliver(fake.actionPayload({ id: user }, message, actionId))
    return !delivery.timedOut
  } catch {
    return false
  }
}

it('kill -9 with 100 open calls at a random instant: all answerable, no duplicate card, no acknowledged answer lost', async () => {
  const random = rng(SEED)
  const first = await startServe()
  await fake.waitForSocket()

  // 50 timed calls whose window closes at once: the agent has its `pending` result, the calls
  // are continued (their cards may still be posting). Then 50 blocking calls, which lose their
  // connection at the kill.
  const timedAsks = callIds.map((_, i) => (i >= CALLS / 2 ? ask(first.url, i) : undefined))
  for (const pending of timedAsks) if (pending) expect((await pending).body.pending).toBe(true)
  const postsBefore = fake.calls.filter((c) => c.method === 'chat.postMessage').length
  const firstAsks = callIds.map((_, i) =>
    i < CALLS / 2 ? ask(first.url, i).catch(() => undefined) : undefined,
  )
  // Kill once a random number of posts went through: some cards posted and recorded, some
  // accepted by Slack but not yet recorded, some never posted.
  const killAfter = postsBefore + 5 + Math.floor(random() * 40)
  // People click cards as they appear; what Slack acknowledged must survive.
  const acknowledged = new Map<string, string>()
  const clicking: Promise<unknown>[] = []
  const clicked = new Set<string>()
  const labels = ['Alpha', 'Beta', 'Gamma']
  await until(
    () => {
      for (const callId of callIds) {
        if (clicked.size >= 20 || clicked.has(callId) || fake.liveActionIds(callId).length === 0) continue
        clicked.add(callId)
        const o = Math.floor(random() * 3)
        const user = PEOPLE[Math.floor(random() * PEOPLE.length)] as string
        clicking.push(
          click(callId, o, user).then((ok) => {
            if (ok) acknowledged.set(callId, labels[o] as string)
          }),
        )
      }
      // At least one click acknowledged first, or there is nothing to lose: how far the posts
      // get before the first acknowledgement depends on the machine, not on askbridge.
      return (
        acknowledged.size > 0 && fake.calls.filter((c) => c.method === 'chat.postMessage').length >= killAfter
      )
    },
    'posts under way',
    3000,
  )
  first.child.kill('SIGKILL')
  await new Promise((r) => first.child.once('exit', r))
  await Promise.allSettled(clicking)
  await Promise.allSettled(firstAsks)
  expect(acknowledged.size).toBeGreaterThan(0)
  // What the kill left behind: copies recorded, copies only intended (mid-post), cards never posted.
  const left = openStore(`sqlite:${join(dir, 'bridge.db')}`)
  const state = { recorded: 0, intended: 0, unposted: 0 }
  for (const callId of callIds) {
    const posts = await left.listPosts({ agentId: 'agent-1', callId })
    if (posts.some((p) => !isPostPending(p.ref))) state.recorded++
    else if (posts.length > 0) state.intended++
    else state.unposted++
  }
  await left.close()
  console.log(
    `crash after ${killAfter} posts: ${JSON.stringify(state)}, ${acknowledged.size} clicks acknowledged`,
  )

  const second = await startServe()
  await fake.waitForSocket()
  // Blocking callers re-attach with the same callId (what a client does after losing the connection).
  const reattached = new Map<string, Promise<{ status: number; body: Record<string, unknown> }>>()
  for (const [i, callId] of callIds.entries()) if (i < CALLS / 2) reattached.set(callId, ask(second.url, i))

  // Every call has its card (again) or is answered; then every unanswered card is clicked.
  await until(
    () => callIds.every((id) => fake.liveActionIds(id).length > 0 || fake.messagesOf(id).length > 0),
    'every call has a card after the restart',
    3000,
  )
  for (const callId of callIds) {
    if (fake.liveActionIds(callId).length === 0) continue
    await until(
      async () => (await click(callId, 1, 'U0ANN')) || fake.liveActionIds(callId).length === 0,
      `click ${callId}`,
    )
  }

  // No copy keeps live buttons once its call is answered.
  // A copy cut short by the kill is adopted once its claim lapses (up to 3 s after the kill,
  // swept every second), and only then can it show the answer given through it meanwhile.
  await until(
    () => callIds.every((id) => fake.liveActionIds(id).length === 0),
    'every copy shows its answer',
    3000,
  ).catch((error: unknown) => {
    const live = callIds.filter((id) => fake.liveActionIds(id).length > 0)
    throw new Error(`${(error as Error).message}: still live ${live.join(' ')}`)
  })

  // 0 duplicate cards: one copy per call (a duplicate would have been retired, i.e. deleted).
  const copies = callIds.map((id) => fake.messagesOf(id).length)
  expect(copies.filter((n) => n !== 1)).toEqual([])

  // Every blocking call returns its answer to the re-attached caller.
  for (const [callId, pending] of reattached) {
    const res = await pending
    expect(res.status, callId).toBe(200)
    const selected = (res.body.answers as Array<{ selected: string[] }>)[0]?.selected
    // An acknowledged click is the answer; otherwise whichever click won (one answer).
    const expected = acknowledged.get(callId)
    if (expected) expect(selected, callId).toEqual([expected])
    else expect(selected?.length, callId).toBe(1)
  }

  // Every timed call's answer reaches the agent: settled in the projection or a late reply.
  const timed = callIds.slice(CALLS / 2)
  const reached = async () => {
    const projection = (await (await fetch(`${second.url}/v1/questions?agentId=agent-1`)).json()) as {
      settled: Array<{ callId: string; answers: Array<{ selected: string[] }> }>
    }
    const replies = (await (await fetch(`${second.url}/v1/agents/agent-1/replies?waitSeconds=0`)).json()) as {
      replies: Array<{ payload: { callId: string; answers: Array<{ selected: string[] }> } }>
    }
    const got = new Map<string, string[] | undefined>()
    for (const s of projection.settled) got.set(s.callId, s.answers[0]?.selected)
    for (const r of replies.replies) got.set(r.payload.callId, r.payload.answers[0]?.selected)
    return got
  }
  const got = await until(async () => {
    const g = await reached()
    return timed.every((id) => g.has(id)) ? g : undefined
  }, 'every timed answer reached the agent')
  for (const callId of timed) expect(got.get(callId)?.length, callId).toBe(1)
  // Nothing acknowledged was lost: each acknowledged click is the answer that arrived.
  for (const [callId, label] of acknowledged) {
    if (callId.startsWith('t')) expect(got.get(callId), callId).toEqual([label])
  }

  second.child.kill('SIGTERM')
  await new Promise((r) => second.child.once('exit', r))
}, 120_000)
