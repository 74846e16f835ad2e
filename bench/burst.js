// Section "burst": N cards asked at once into ONE Slack channel, against the fake Slack enforcing
// Slack's documented rate limits, with people clicking cards while the rest are still queued.
// askbridge is the real `askbridge serve` (its own process, Slack HTTP mode); this process is the
// fake Slack, the agent (N blocking asks over the API) and the people.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { FakeSlack } from '../dist-bench/test/fakes/slack/server.js'
import { fmt, sleep, startServe, summarize, table, until } from './lib.js'

const N = Number(process.env.BENCH_BURST_N ?? 200)
/** Every CLICK_EVERY-th card is clicked as soon as it shows. */
const CLICK_EVERY = Number(process.env.BENCH_BURST_CLICK_EVERY ?? 5)
const CHANNEL = 'C0BURST'
const GOAL_RATE = 0.95
const GOAL_DEAD_MS = 5000

/** The fake's per-channel posting limit (test/fakes/slack/limits.ts), or Slack's documented 1/s. */
async function postLimit() {
  try {
    const limits = await import('../dist-bench/test/fakes/slack/limits.js')
    return { intervalMs: limits.POST_INTERVAL_MS, burst: limits.POST_BURST, enforced: true }
  } catch {
    return { intervalMs: 1000, burst: 1, enforced: false }
  }
}

export default async function burst({ dir, log }) {
  const limit = await postLimit()
  const fake = await FakeSlack.start({ rateLimits: true, limitSpeed: 1 })
  const server = await startServe({
    ASKBRIDGE_DB: join(dir, 'burst.db'),
    SLACK_BOT_TOKEN: fake.options.botToken,
    SLACK_SIGNING_SECRET: fake.options.signingSecret,
    SLACK_CHANNEL: CHANNEL,
    SLACK_API_URL: fake.apiUrl,
  })
  fake.interactivityUrl = `${server.url}/slack/events`
  const aborts = new AbortController()
  try {
    const user = { id: 'U0BURST', name: 'Burst' }
    const t0 = performance.now()
    const asks = Array.from({ length: N }, (_, i) => {
      const callId = `burst-${i}`
      return fetch(`${server.url}/v1/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        signal: aborts.signal,
        body: JSON.stringify({
          callId,
          questions: [{ id: 'go', question: `Release ${i}?`, options: [{ label: 'Yes' }, { label: 'No' }] }],
        }),
      })
        .then(async (res) => ({ callId, status: res.status, body: await res.json() }))
        .catch((error) => ({ callId, error }))
    })

    const firstSeen = new Map()
    const copies = new Map()
    const dead = []
    const clicks = []
    // Watch the channel: when each card shows, and click every CLICK_EVERY-th one at once.
    const watch = async () => {
      while (firstSeen.size < N) {
        copies.clear()
        for (const m of fake.messages.values()) {
          if (!m.callId?.startsWith('burst-')) continue
          copies.set(m.callId, (copies.get(m.callId) ?? 0) + 1)
          if (firstSeen.has(m.callId)) continue
          firstSeen.set(m.callId, performance.now())
          const i = Number(m.callId.slice('burst-'.length))
          if (i % CLICK_EVERY === CLICK_EVERY - 1) clicks.push(click(m))
        }
        await sleep(10)
      }
    }
    const click = async (message) => {
      const yes = fake.liveActionIds(message.callId).find((id) => id.endsWith('|c|0|0'))
      if (!yes) throw new Error(`no Yes on ${message.callId}`)
      const t = performance.now()
      const delivery = await fake.deliver(fake.actionPayload(user, message, yes))
      const acked = performance.now() - t
      await until(
        () => fake.liveActionIds(message.callId).length === 0,
        `${message.callId} buttons dead`,
        600_000,
      )
      dead.push(performance.now() - t)
      return { callId: message.callId, status: delivery.status, acked }
    }
    let timer
    await Promise.race([
      watch(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`only ${firstSeen.size} of ${N} cards posted`)),
          Math.max(600_000, N * limit.intervalMs * 3),
        )
      }),
    ]).finally(() => clearTimeout(timer))
    const clicked = await Promise.all(clicks)
    const seen = [...firstSeen.values()].sort((a, b) => a - b)
    const allPosted = (seen.at(-1) - t0) / 1000
    const span = (seen.at(-1) - seen[0]) / 1000
    // The fastest schedule the limit allows for N posts into one channel: `burst` at once, then one per interval.
    const legal = (Math.max(0, N - limit.burst) * limit.intervalMs) / 1000
    const rateShare = span > 0 ? legal / span : 1
    // Every clicked ask must come back answered; the others are still open (no one clicked them).
    const clickedIds = new Set(clicked.map((c) => c.callId))
    let answered = 0
    for (const result of await Promise.all(asks.filter((_, i) => clickedIds.has(`burst-${i}`))))
      if (result.body?.answers?.[0]?.selected?.[0] === 'Yes') answered++
    const lost = N - firstSeen.size + (clickedIds.size - answered)
    const duplicated = [...copies.values()].filter((n) => n > 1).length
    const limited = fake.calls.filter((c) => c.status === 429).length
    const byMethod = new Map()
    for (const c of fake.calls)
      if (c.status === 429) byMethod.set(c.method, (byMethod.get(c.method) ?? 0) + 1)
    const deadStats = summarize(dead)
    const ackStats = summarize(clicked.map((c) => c.acked))
    log(`${N} cards in ${fmt(allPosted)} s, ${limited} × 429, dead buttons p99 ${fmt(deadStats.p99)} ms`)
    const markdown = `${N} blocking asks sent at once over \`POST /v1/ask\` to \`askbridge serve\` (its own process, Slack HTTP
mode, one channel, SQLite with the default durability). The fake Slack ${
      limit.enforced
        ? `enforces Slack's documented limits at real speed (test/fakes/slack/limits.ts: chat.postMessage ${limit.burst} at once per channel, then one per ${limit.intervalMs / 1000} s; chat.update Tier 3, 50 a minute per workspace), answering 429 with Retry-After past them`
        : `does not enforce rate limits in this build (no limits.ts); the allowed rate is Slack's documented one post per second per channel`
    }. Every ${CLICK_EVERY}th card is clicked (a signed HTTP click) as soon as it shows, while the later cards are
still queued; "dead" is from sending the click until the card on the fake has no buttons left (polled
every 20 ms or so). Real time throughout: ${N} posts at one a second take about ${Math.round(legal)} s.
${N === 200 ? '' : `\nThis run used N = ${N} (BENCH_BURST_N), not the issue's 200.\n`}
${table(
  ['figure', 'value'],
  [
    ['cards posted', `${firstSeen.size} of ${N}`],
    ['time to post all (from the asks)', `${fmt(allPosted)} s`],
    [
      'achieved posting rate vs allowed',
      `${fmt((N - 1) / span)} posts/s; the limit allows ${N} posts in ${fmt(legal)} s, this took ${fmt(span)} s from the first: ${(rateShare * 100).toFixed(1)}%`,
    ],
    [
      'clicks during the burst',
      `${clicked.length} (non-200 acks: ${clicked.filter((c) => c.status !== 200).length})`,
    ],
    ['click → ack p50 / p99', `${fmt(ackStats.p50)} / ${fmt(ackStats.p99)} ms`],
    [
      'click → dead buttons p50 / p99 / max',
      `${fmt(deadStats.p50)} / ${fmt(deadStats.p99)} / ${fmt(deadStats.max)} ms`,
    ],
    [
      '429s from the fake',
      `${limited}${byMethod.size ? ` (${[...byMethod].map(([m, n]) => `${m} ${n}`).join(', ')})` : ''}`,
    ],
    ['lost (card never posted, or a clicked ask not answered)', String(lost)],
    ['cards posted twice', String(duplicated)],
  ],
)}`
    return {
      markdown,
      goals: [
        {
          goal: `burst of ${N} cards: 0 lost`,
          figure: `${lost} lost, ${duplicated} posted twice`,
          pass: lost === 0 && duplicated === 0,
        },
        {
          goal: `burst: ≥ ${GOAL_RATE * 100}% of the allowed posting rate`,
          figure: `${(rateShare * 100).toFixed(1)}% (${fmt(span)} s for what the limit allows in ${fmt(legal)} s)${limit.enforced ? '' : ', fake not enforcing limits'}`,
          pass: rateShare >= GOAL_RATE && limit.enforced,
        },
        {
          goal: `burst: click → dead buttons p99 < ${GOAL_DEAD_MS / 1000} s`,
          figure: `${fmt(deadStats.p99 / 1000)} s (p50 ${fmt(deadStats.p50 / 1000)} s, ${dead.length} clicks)`,
          pass: deadStats.p99 < GOAL_DEAD_MS,
        },
      ],
    }
  } finally {
    aborts.abort()
    await server.stop()
    await fake.close()
  }
}
