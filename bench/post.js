// Section "post": ask → card posted, at 1, 8 and 64 concurrent asks, each set to distinct channels and
// to one channel, against the fake Slack enforcing Slack's documented limits at real speed. Beside each
// figure, the floor those limits set (the earliest each card could be posted, from the same send times),
// so what is pacing and what is askbridge's own overhead can be read apart.
// askbridge is the real `askbridge serve` (its own process, Slack HTTP mode, SQLite); this process is the
// fake Slack and the agent.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { FakeSlack } from '../dist-bench/test/fakes/slack/server.js'
import { fmt, sleep, startServe, summarize, table, until } from './lib.js'

const CONCURRENCY = (process.env.BENCH_POST_CONCURRENCY ?? '1,8,64').split(',').map(Number)
/** Concurrency 1 is this many asks one after another (each once its card is up). */
const SERIAL = Number(process.env.BENCH_POST_SERIAL ?? 10)
const MAX = Math.max(...CONCURRENCY, SERIAL)
/** Channels: a fresh set for every run, so no run starts on a bucket another run emptied. */
const RUNS = CONCURRENCY.length * 2
const channelOf = (run, i) => `C0POST${String(run).padStart(2, '0')}X${String(i).padStart(3, '0')}`

/** askbridge's own per-channel pacing, its defaults (adapters/slack/queue.ts). */
async function ownPacing() {
  const queue = await import('../dist/adapters/slack/queue.js')
  return { intervalMs: queue.DEFAULT_PER_CHANNEL_INTERVAL_MS, burst: queue.DEFAULT_POST_BURST }
}

/** The fake's per-channel posting limit (test/fakes/slack/limits.ts). */
async function postLimit() {
  const limits = await import('../dist-bench/test/fakes/slack/limits.js')
  return { intervalMs: limits.POST_INTERVAL_MS, burst: limits.POST_BURST }
}

/**
 * The earliest each ask's card could be posted under the per-channel limit (a token bucket of `burst`
 * posts, one back every `intervalMs`, a fresh bucket per channel), from when each ask was sent, in
 * send order: ms from sending to that earliest post.
 */
function floors(asks, limit) {
  const buckets = new Map()
  const out = new Map()
  for (const ask of [...asks].sort((a, b) => a.sent - b.sent)) {
    const b = buckets.get(ask.channel) ?? { tokens: limit.burst, at: ask.sent }
    let t = Math.max(ask.sent, b.at)
    b.tokens = Math.min(limit.burst, b.tokens + (t - b.at) / limit.intervalMs)
    if (b.tokens < 1) {
      t += (1 - b.tokens) * limit.intervalMs
      b.tokens = 1
    }
    b.tokens -= 1
    b.at = t
    buckets.set(ask.channel, b)
    out.set(ask.callId, t - ask.sent)
  }
  return out
}

export default async function post({ dir, log }) {
  const limit = await postLimit()
  const pacing = await ownPacing()
  const fake = await FakeSlack.start({ rateLimits: true, limitSpeed: 1 })
  // When each card first reached Slack: the fake stores a message as it takes the post.
  const posted = new Map()
  const set = fake.messages.set.bind(fake.messages)
  fake.messages.set = (key, message) => {
    if (message.callId && !posted.has(message.callId)) posted.set(message.callId, performance.now())
    return set(key, message)
  }
  const routes = []
  for (let run = 0; run < RUNS; run++)
    for (let i = 0; i < MAX; i++)
      routes.push({
        name: channelOf(run, i),
        match: { route: channelOf(run, i) },
        destinations: [{ platform: 'slack', channel: channelOf(run, i) }],
      })
  writeFileSync(join(dir, 'routes.json'), JSON.stringify({ routes }))
  const server = await startServe({
    ASKBRIDGE_DB: join(dir, 'post.db'),
    SLACK_BOT_TOKEN: fake.options.botToken,
    SLACK_SIGNING_SECRET: fake.options.signingSecret,
    SLACK_CHANNEL: channelOf(0, 0),
    ASKBRIDGE_ROUTES: join(dir, 'routes.json'),
    SLACK_API_URL: fake.apiUrl,
  })
  const aborts = new AbortController()
  const ask = (callId, channel) => {
    const sent = performance.now()
    fetch(`${server.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      signal: aborts.signal,
      body: JSON.stringify({
        callId,
        route: channel,
        questions: [
          { id: 'go', question: `Release ${callId}?`, options: [{ label: 'Yes' }, { label: 'No' }] },
        ],
      }),
    }).catch(() => {}) // left open; aborted at the end
    return { callId, channel, sent }
  }
  try {
    // Warm-up: one card, not counted.
    ask('warm', channelOf(0, MAX - 1))
    await until(() => posted.has('warm'), 'the warm-up card')
    const rows = []
    const results = []
    let run = 0
    for (const n of CONCURRENCY) {
      for (const target of ['distinct channels', 'one channel']) {
        const r = run++
        const channel = (i) => (target === 'one channel' ? channelOf(r, 0) : channelOf(r, i))
        const asks = []
        if (n === 1) {
          // One at a time: each ask once the one before it is posted.
          for (let i = 0; i < SERIAL; i++) {
            const a = ask(`p${r}-${i}`, channel(i))
            asks.push(a)
            await until(() => posted.has(a.callId), `card ${a.callId}`, 120_000)
          }
        } else {
          for (let i = 0; i < n; i++) asks.push(ask(`p${r}-${i}`, channel(i)))
          await until(() => asks.every((a) => posted.has(a.callId)), `${n} cards`, 10 * 60_000)
        }
        const floor = floors(asks, limit)
        const own = floors(asks, pacing)
        const took = asks.map((a) => posted.get(a.callId) - a.sent)
        const over = asks.map((a) => posted.get(a.callId) - a.sent - floor.get(a.callId))
        const work = asks.map((a) => posted.get(a.callId) - a.sent - own.get(a.callId))
        const s = summarize(took)
        const f = summarize([...floor.values()])
        const o = summarize(over)
        const p = summarize([...own.values()])
        const w = summarize(work)
        results.push({ n, target, s, f, o })
        const cell = (x) => `${fmt(x.p50)} / ${fmt(x.p99)} / ${fmt(x.max)}`
        rows.push([
          n === 1 ? `1 (${SERIAL} one after another)` : n,
          target,
          cell(s),
          cell(f),
          cell(o),
          cell(p),
          cell(w),
        ])
        log(`${n} asks, ${target}: p50 ${fmt(s.p50)} ms, p99 ${fmt(s.p99)} ms (floor p99 ${fmt(f.p99)} ms)`)
        await sleep(200)
      }
    }
    const markdown = `Asks sent over \`POST /v1/ask\` to \`askbridge serve\` (its own process, Slack HTTP mode, SQLite with the
default durability): ${CONCURRENCY.map((n) => (n === 1 ? `1 (${SERIAL} asks one after another, each once the card before it is up)` : `${n} at once`)).join(', ')},
each set once to as many distinct channels and once to one channel. The fake Slack enforces Slack's
documented limits at real speed (test/fakes/slack/limits.ts: chat.postMessage ${limit.burst} at once per
channel, then one per ${limit.intervalMs / 1000} s; several hundred a minute per workspace), answering 429 with Retry-After
past them; every run has channels of its own, so it starts on full buckets. "Ask → card" is from sending
the ask to the fake taking the card's post. "The limit's floor" is the earliest the limit lets each card
be posted, from the same send times (a token bucket per channel); "overhead" is each card's time less its
floor: askbridge's own work, and any pacing beyond what the limit needs. "askbridge's pacing" is the same
floor for askbridge's own default bucket (${pacing.burst} at once per channel, then one per ${pacing.intervalMs / 1000} s: it keeps a margin
under a burst size Slack does not publish), and "own work" each card's time less that: what is left once
askbridge's pacing is taken out.

${table(['concurrent asks', 'to', 'ask → card p50 / p99 / max ms', "the limit's floor p50 / p99 / max ms", 'overhead p50 / p99 / max ms', "askbridge's pacing p50 / p99 / max ms", 'own work p50 / p99 / max ms'], rows)}`
    const worst = Math.max(...results.map((r) => r.o.p99))
    return {
      markdown,
      goals: [
        {
          goal: 'ask → card posted: overhead over the limit p99 (every run)',
          figure: `${fmt(worst)} ms at worst (${results.map((r) => `${r.n}/${r.target === 'one channel' ? '1ch' : 'n ch'} ${fmt(r.o.p99)}`).join(', ')})`,
          // Measured and shown; askbridge sets no goal of its own on it yet.
          pass: true,
        },
      ],
    }
  } finally {
    aborts.abort()
    await server.stop()
    await fake.close()
  }
}
