// Section "click": how long a signed Slack click takes to be acknowledged, askbridge `serve` beside a
// bare Bolt app and the Chat SDK, in the same run. Each server is its own process (askbridge: the real
// `askbridge serve` CLI in Slack HTTP mode, SQLite file, default durability); this process is the fake
// Slack, and the clicker is a process of its own (bench/click-clicker.js). Every askbridge click
// answers an open question on a real card; the peers get the same signed payloads (same size, same
// signature check) and only ack.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { request } from 'undici'
import { BridgeClient } from '../dist/src/cli/client.js'
import { FakeSlack } from '../dist-bench/test/fakes/slack/server.js'
import {
  cpuMs,
  fmt,
  loopSchedstat,
  monotonicMs,
  ownCpuMs,
  percentile,
  pgServerCpuByPid,
  pgServerCpuSince,
  startChild,
  startServe,
  summarize,
  table,
  until,
} from './lib.js'
import { YOUNG_CAP } from './open-asks.js'
import { pgSchema } from './replicas.js'

// 2,000 clicks: the p99 is then the 20th slowest click, not the 10th. Eight clicks are in flight at
// once, so one pause of this shared machine (a GC, a stolen core) slows about eight of them, and at
// 1,000 clicks one or two such pauses decided a server's p99 (a server that only acknowledges, the
// Chat SDK, measured 0.84x to 1.88x Bolt's p99 from run to run).
const CLICKS = Number(process.env.BENCH_CLICKS ?? 2000)
// 80 rounds of 25 clicks: the three servers' turns of a round are a few seconds apart, so a slow
// spell of the machine falls on all three alike, and the bootstrap has twice as many rounds to draw
// than with 40 of 50. The cards posted, and so the section's time, are the same. The runs of each
// are in docs/slack.md, Known limitations (the click).
const ROUNDS = Number(process.env.BENCH_CLICK_ROUNDS ?? 80)
/** Bootstrap resamples of the rounds, for the interval of the p99 ratio. */
const RESAMPLES = 2000
const WARMUP = Number(process.env.BENCH_CLICK_WARMUP ?? 100)
const CONCURRENCY = Number(process.env.BENCH_CLICK_CONCURRENCY ?? 8)
// Cards go to many channels through a routes file: Slack allows about one post per second per channel,
// and the cards a round clicks must be up before it starts (posting is not what this section measures).
const CHANNELS = 50
const channelOf = (i) => `C0BENCH${String(i % CHANNELS).padStart(2, '0')}`
const GOAL_RATIO = 1.3
/** PostgreSQL (one replica): click → answer p99 at most this times SQLite's. */
const GOAL_PG_RATIO = 1.5

/**
 * `askbridge serve` for the click rounds: Slack HTTP mode against `fake`, a SQLite file in `dir`,
 * routes to the bench channels. `checkout`: whose build runs (bench/ab-click.js compares builds);
 * `env`: more of its environment.
 */
export async function startAskbridge(fake, dir, { profileDir, checkout, nodeArgs = [], env = {} } = {}) {
  const routes = Array.from({ length: CHANNELS }, (_, i) => ({
    name: `bench-${i}`,
    match: { route: `bench-${i}` },
    destinations: [{ platform: 'slack', channel: channelOf(i) }],
  }))
  writeFileSync(join(dir, 'routes.json'), JSON.stringify({ routes }))
  return startServe(
    {
      ASKBRIDGE_DB: join(dir, 'click.db'),
      SLACK_BOT_TOKEN: fake.options.botToken,
      SLACK_SIGNING_SECRET: fake.options.signingSecret,
      SLACK_CHANNEL: channelOf(0),
      ASKBRIDGE_ROUTES: join(dir, 'routes.json'),
      SLACK_API_URL: fake.apiUrl,
      ...env,
    },
    [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...nodeArgs],
    checkout,
  )
}

/** A peer of bench/click-peer.js; `env`: more of its environment (BENCH_STORE for bolt-store). */
export function startPeer(kind, fake, env = {}) {
  return startChild(
    kind,
    ['bench/click-peer.js', kind],
    {
      SLACK_BOT_TOKEN: fake.options.botToken,
      SLACK_SIGNING_SECRET: fake.options.signingSecret,
      SLACK_API_URL: fake.apiUrl,
      ...env,
    },
    async (child) => {
      for await (const line of createInterface({ input: child.stdout })) return JSON.parse(line).url
      throw new Error(`${kind} printed no URL`)
    },
  )
}

/** A signed click as Slack sends it: the form body (the clicker signs it when it sends it). */
function signed(payload) {
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`
}

/** The clicker process: nothing else shares its event loop, so it times only the servers. */
export function startClicker(secret) {
  const child = fork(new URL('./click-clicker.js', import.meta.url).pathname, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return {
    pid: child.pid,
    /** Click every body, CONCURRENCY at a time; the latency of each, from send to the whole ack read. */
    async clickAll(url, bodies) {
      const reply = once(child, 'message')
      child.send({ url, bodies, secret, concurrency: CONCURRENCY })
      const [result] = await reply
      return result
    },
    stop() {
      child.kill()
    },
  }
}

/**
 * Open `n` blocking asks on askbridge and wait for their cards; the signed clicks that answer them.
 * The agents ask through askbridge's own client (what `askbridge ask`, the hook and `askbridge mcp`
 * use), so what reading an answer costs an agent is the product's, measured.
 */
export async function openCards(fake, url, prefix, n) {
  const client = new BridgeClient({ url })
  const answers = []
  for (let i = 0; i < n; i++) {
    const callId = `${prefix}-${i}`
    const asked = client.ask({
      callId,
      route: `bench-${i % CHANNELS}`,
      questions: [
        { id: 'go', question: `Ship build ${callId}?`, options: [{ label: 'Yes' }, { label: 'No' }] },
      ],
    })
    // The agent has its answer once the whole response is read.
    answers.push(
      asked.then(
        (body) => ({ callId, status: 200, body, at: monotonicMs() }),
        (error) => ({ callId, status: error.status ?? 0, body: { error: error.message }, at: monotonicMs() }),
      ),
    )
  }
  const byCall = new Map()
  await until(() => {
    for (const m of fake.messages.values()) if (m.callId?.startsWith(`${prefix}-`)) byCall.set(m.callId, m)
    return byCall.size === n
  }, `${n} cards posted`)
  // Let askbridge record the posts it just made before the first click.
  await new Promise((resolve) => setTimeout(resolve, 300))
  const user = { id: 'U0BENCH', name: 'Bench' }
  const requests = []
  const payloads = []
  for (let i = 0; i < n; i++) {
    const message = byCall.get(`${prefix}-${i}`)
    const yes = fake.liveActionIds(message.callId).find((id) => id.endsWith('|c|0|0'))
    if (!yes) throw new Error(`no Yes button on ${message.callId}`)
    const payload = fake.actionPayload(user, message, yes)
    payloads.push(payload)
    requests.push(signed(payload))
  }
  return { requests, payloads, answers, callIds: Array.from({ length: n }, (_, i) => `${prefix}-${i}`) }
}

let actionSeq = 0
/** Clicks for the bare Bolt App: warm-up payloads, each with an action_ts of its own to match its listener run. */
export function boltClicks(payloads, n) {
  const actionTs = []
  const requests = []
  for (let i = 0; i < n; i++) {
    const template = payloads[i % payloads.length]
    const ts = `${Math.floor(Date.now() / 1000)}.${String(++actionSeq).padStart(6, '0')}`
    const [action, ...rest] = template.actions
    actionTs.push(ts)
    requests.push(signed({ ...template, actions: [{ ...action, action_ts: ts }, ...rest] }))
  }
  return { requests, actionTs }
}

/**
 * Per Bolt click of `bolt` (boltClicks), ms from its sending (`sent`, the clicker's) to its listener
 * starting, as the Bolt process recorded it; the record is handed over and cleared.
 */
export async function listenerTimes(boltServer, bolt, sent) {
  const listened = await (await fetch(`${boltServer.url}/listened`)).json()
  return sinceSent(
    sent,
    bolt.actionTs.map((ts) => listened[ts]),
  )
}

/**
 * The bolt-store peer's turns: its agents wait before its clicks come (as askbridge's cards are up
 * before theirs), and a turn ends once it has updated every card it was clicked on, so that work is
 * not timed as the next server's.
 */
export function storeTurns(server) {
  const state = async () => (await fetch(`${server.url}/state`)).json()
  let updates = 0
  return {
    /**
     * One blocking `POST /ask` per click of `clicks` (boltClicks); resolves, once the peer holds
     * them all, to `{ answered }`: a promise of when each had read its whole answer (undefined: none
     * came).
     */
    async wait(clicks) {
      // Read as askbridge's client reads its answers (undici's request, not fetch), so both
      // agents' reading costs the same.
      const answers = clicks.actionTs.map((ts) =>
        request(`${server.url}/ask?key=${ts}`, { method: 'POST' }).then(async (res) => {
          await res.body.arrayBuffer()
          return res.statusCode === 200 ? monotonicMs() : undefined
        }),
      )
      await until(async () => (await state()).waiting >= answers.length, 'the agents waiting')
      return { answered: Promise.all(answers) }
    },
    /** After the clicks: when each agent had its answer, once the cards are updated. */
    async done(clicks, { answered }) {
      const at = await answered
      updates += clicks.actionTs.length
      await until(async () => (await state()).updated >= updates, 'the bolt-store cards updated')
      return at
    },
    /** `n` warm-up clicks on `url` (untimed), each answering a waiting agent as the timed ones do. */
    async warmUp(clicker, url, payloads, n) {
      const clicks = boltClicks(payloads, n)
      const answers = await this.wait(clicks)
      await clicker.clickAll(url, clicks.requests)
      await this.done(clicks, answers)
    },
  }
}

/** Per click, ms from its sending to `at[i]` (undefined `at`: not reached, left out). */
export function sinceSent(sent, at) {
  return sent.flatMap((t, i) => (at[i] === undefined ? [] : [at[i] - t]))
}

/**
 * The 5th-95th percentile interval of p99(name) / p99(base) over bootstrap resamples of the rounds
 * (a seeded generator, so the same run gives the same interval).
 */
function bootstrapRatio(rounds, name, base) {
  let seed = 0x9e3779b9
  const random = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0
    return seed / 2 ** 32
  }
  const p99 = (samples) => summarize(samples).p99
  const ratios = []
  for (let r = 0; r < RESAMPLES; r++) {
    const a = []
    const b = []
    for (let i = 0; i < rounds.length; i++) {
      const round = rounds[Math.floor(random() * rounds.length)]
      a.push(...round[name])
      b.push(...round[base])
    }
    ratios.push(p99(a) / p99(b))
  }
  ratios.sort((x, y) => x - y)
  return `${percentile(ratios, 5).toFixed(2)}–${percentile(ratios, 95).toFixed(2)}×`
}

export default async function click({ dir, log }) {
  // Posting and card updates are not what this section measures: the fake's rate limits are off, so
  // the cards it needs are up in seconds (askbridge still paces itself).
  const fake = await FakeSlack.start({ rateLimits: false })
  const servers = {}
  const clicker = startClicker(fake.options.signingSecret)
  const schema = await pgSchema('click')
  try {
    servers.askbridge = await startAskbridge(fake, dir, { profileDir: process.env.BENCH_CLICK_PROFILE })
    servers['askbridge-pg'] = await startAskbridge(fake, dir, { env: { ASKBRIDGE_DB: schema.url } })
    // The same SQLite serve with V8's young generation capped, as docs/capacity.md suggests.
    servers['askbridge-capped'] = await startAskbridge(fake, dir, {
      env: { ASKBRIDGE_DB: join(dir, 'capped.db'), NODE_OPTIONS: YOUNG_CAP },
    })
    servers.bolt = await startPeer('bolt', fake)
    servers.chat = await startPeer('chat', fake)
    servers['bolt-store'] = await startPeer('bolt-store', fake, { BENCH_STORE: join(dir, 'bolt-store.db') })
    const urls = {
      askbridge: `${servers.askbridge.url}/slack/events`,
      'askbridge-pg': `${servers['askbridge-pg'].url}/slack/events`,
      'askbridge-capped': `${servers['askbridge-capped'].url}/slack/events`,
      bolt: `${servers.bolt.url}/slack/events`,
      chat: `${servers.chat.url}/api/webhooks/slack`,
      'bolt-store': `${servers['bolt-store'].url}/slack/events`,
    }
    const names = ['askbridge', 'askbridge-pg', 'askbridge-capped', 'bolt', 'chat', 'bolt-store']
    const bridges = ['askbridge', 'askbridge-pg', 'askbridge-capped']
    const prefix = { askbridge: '', 'askbridge-pg': 'pg-', 'askbridge-capped': 'cap-' }

    // Warm-up (not counted): each askbridge answers WARMUP cards; the peers take the same payloads.
    let templates
    let payloads
    for (const name of bridges) {
      const warm = await openCards(fake, servers[name].url, `${prefix[name]}warm`, WARMUP)
      templates ??= warm.requests
      payloads ??= warm.payloads
      await clicker.clickAll(urls[name], warm.requests)
      for (const r of await Promise.all(warm.answers))
        if (r.status !== 200) throw new Error(`warm-up ask ${r.callId} on ${name}: ${r.status}`)
    }
    for (const name of ['bolt', 'chat']) await clicker.clickAll(urls[name], templates)
    await fetch(`${servers.bolt.url}/listened`).then((res) => res.arrayBuffer())
    const store = storeTurns(servers['bolt-store'])
    await store.warmUp(clicker, urls['bolt-store'], payloads, WARMUP)

    const perRound = Math.ceil(CLICKS / ROUNDS)
    const latencies = Object.fromEntries(names.map((name) => [name, []]))
    // Click → the waiting agent has the answer (askbridge), click → the listener runs (Bolt).
    const toAnswer = { askbridge: [], 'askbridge-pg': [], 'askbridge-capped': [], bolt: [], 'bolt-store': [] }
    // Each round's latencies by server, for the bootstrap: a round's turns are minutes apart from
    // the next round's, seconds apart from each other, so rounds are resampled whole.
    const byRound = []
    const failed = Object.fromEntries(names.map((name) => [name, 0]))
    const cpu = Object.fromEntries(names.map((name) => [name, 0]))
    const waited = Object.fromEntries(names.map((name) => [name, 0]))
    // All of each server's threads (its disk syncs and V8's helpers too), and this process (the
    // agents, the fake) and the clicker during each server's turns: what shares the machine's cores.
    const processCpu = Object.fromEntries(names.map((name) => [name, 0]))
    const agentCpu = Object.fromEntries(names.map((name) => [name, 0]))
    const clickerCpu = Object.fromEntries(names.map((name) => [name, 0]))
    // The PostgreSQL server's processes (the PostgreSQL bridge's backends, its WAL writer).
    const pgCpu = Object.fromEntries(names.map((name) => [name, 0]))
    const wall = Object.fromEntries(names.map((name) => [name, 0]))
    let answered = 0
    let wrong = 0
    for (let round = 0; round < ROUNDS; round++) {
      // Cards for this round first, so posting them is not measured.
      // Each bridge paces its own posts (Slack's workspace limit), so they post side by side.
      const opened = await Promise.all(
        bridges.map((name) => openCards(fake, servers[name].url, `${prefix[name]}r${round}`, perRound)),
      )
      const cards = Object.fromEntries(bridges.map((name, i) => [name, opened[i]]))
      const bolt = boltClicks(payloads, perRound)
      const storeClicks = boltClicks(payloads, perRound)
      const order = names.map((_, i) => names[(i + round) % names.length])
      const thisRound = {}
      byRound.push(thisRound)
      for (const name of order) {
        const requests = cards[name]
          ? cards[name].requests
          : name === 'bolt'
            ? bolt.requests
            : name === 'bolt-store'
              ? storeClicks.requests
              : Array.from({ length: perRound }, (_, i) => templates[i % templates.length])
        const storeAnswers = name === 'bolt-store' ? await store.wait(storeClicks) : undefined
        const loopBefore = loopSchedstat(servers[name].pid)
        const before = {
          process: cpuMs(servers[name].pid),
          agent: ownCpuMs(),
          clicker: cpuMs(clicker.pid),
          pg: pgServerCpuByPid(),
        }
        const startedAt = monotonicMs()
        const result = await clicker.clickAll(urls[name], requests)
        wall[name] += monotonicMs() - startedAt
        const loopAfter = loopSchedstat(servers[name].pid)
        cpu[name] += loopAfter.onCpu - loopBefore.onCpu
        waited[name] += loopAfter.waiting - loopBefore.waiting
        processCpu[name] += cpuMs(servers[name].pid) - before.process
        agentCpu[name] += ownCpuMs() - before.agent
        clickerCpu[name] += cpuMs(clicker.pid) - before.clicker
        pgCpu[name] += pgServerCpuSince(before.pg)
        latencies[name].push(...result.latencies)
        thisRound[name] = result.latencies
        failed[name] += result.failed
        if (cards[name]) {
          // The round's answers are back before the next server's turn.
          const answers = await Promise.all(cards[name].answers)
          for (const r of answers) {
            if (r.status === 200 && r.body.answers?.[0]?.selected?.[0] === 'Yes') answered++
            else wrong++
          }
          const times = sinceSent(
            result.sent,
            answers.map((r) => r.at),
          )
          toAnswer[name].push(...times)
          thisRound[`${name}:answer`] = times
          // askbridge's own work after its acks (every card updated to its answer) is done before
          // the next server's turn, so it is not timed as theirs.
          await until(
            () => cards[name].callIds.every((id) => fake.liveActionIds(id).length === 0),
            'the answered cards updated',
          )
        }
        if (name === 'bolt') {
          const times = await listenerTimes(servers.bolt, bolt, result.sent)
          toAnswer.bolt.push(...times)
          thisRound['bolt:answer'] = times
        }
        if (storeAnswers) {
          const times = sinceSent(result.sent, await store.done(storeClicks, storeAnswers))
          toAnswer['bolt-store'].push(...times)
          thisRound['bolt-store:answer'] = times
        }
      }
      log(`round ${round + 1}/${ROUNDS}: ${order.join(', ')}`)
    }

    const stats = Object.fromEntries(names.map((name) => [name, summarize(latencies[name])]))
    const answerStats = Object.fromEntries(Object.entries(toAnswer).map(([k, v]) => [k, summarize(v)]))
    const ratio = (name, key) => stats[name][key] / stats.bolt[key]
    const answerRatio = (name, key) => answerStats[name][key] / answerStats.bolt[key]
    const goalRatio = ratio('askbridge', 'p99')
    const goalAnswer = answerRatio('askbridge', 'p99')
    const pgRatio = answerStats['askbridge-pg'].p99 / answerStats.askbridge.p99
    const interval = (name, base = 'bolt') => bootstrapRatio(byRound, name, base)
    const label = {
      askbridge: 'askbridge serve, SQLite',
      'askbridge-pg': 'askbridge serve, PostgreSQL (one replica)',
      'askbridge-capped': `askbridge serve, SQLite, NODE_OPTIONS=${YOUNG_CAP}`,
      bolt: 'bare Bolt App',
      chat: 'Chat SDK',
      'bolt-store': 'Bolt App with a durable store',
    }
    const rows = names.map((name) => [
      label[name],
      stats[name].n,
      failed[name],
      fmt(stats[name].p50),
      fmt(stats[name].p99),
      fmt(stats[name].max),
      `${ratio(name, 'p50').toFixed(2)}×`,
      `${ratio(name, 'p99').toFixed(2)}×`,
      name === 'bolt' ? '' : interval(name),
      fmt(cpu[name] / stats[name].n),
      fmt(waited[name] / stats[name].n),
    ])
    const storeRatio = answerStats.askbridge.p99 / answerStats['bolt-store'].p99
    const answerRows = ['askbridge', 'askbridge-pg', 'askbridge-capped', 'bolt', 'bolt-store'].map((name) => [
      name === 'bolt'
        ? 'bare Bolt App: click → its listener runs'
        : `${label[name]}: click → the agent has the answer`,
      answerStats[name].n,
      fmt(answerStats[name].p50),
      fmt(answerStats[name].p99),
      fmt(answerStats[name].max),
      `${answerRatio(name, 'p99').toFixed(2)}×`,
      name === 'bolt' ? '' : interval(`${name}:answer`, 'bolt:answer'),
    ])
    const perClick = (ms, name) => fmt(ms[name] / stats[name].n)
    const cpuRows = names.map((name) => {
      const total = processCpu[name] + agentCpu[name] + clickerCpu[name] + pgCpu[name]
      return [
        label[name],
        perClick(cpu, name),
        perClick(processCpu, name),
        perClick(agentCpu, name),
        perClick(clickerCpu, name),
        perClick(pgCpu, name),
        fmt(total / stats[name].n),
        (total / wall[name]).toFixed(2),
      ]
    })
    const markdown = `${CLICKS} signed \`block_actions\` clicks per server, ${CONCURRENCY} at a time over HTTP keep-alive,
in ${ROUNDS} rounds whose order rotates (askbridge on SQLite, askbridge on PostgreSQL, askbridge on SQLite
with V8's young generation capped, Bolt, Chat SDK, Bolt with a durable store; then the same shifted by one; …) after ${WARMUP} warm-up clicks each; short rounds, so a noisy moment of this
shared machine falls on every server alike. The ack is timed from sending the signed request to reading
the whole ack.
askbridge is \`askbridge serve\` (the CLI, Slack HTTP mode), once on a SQLite file with the default
durability, once on PostgreSQL (one replica, a schema of its own on the local server), and once more on
SQLite started with \`NODE_OPTIONS=${YOUNG_CAP}\` (the goals are judged on the first), and each click
answers an open blocking \`POST /v1/ask\` on its card: the ack comes once the answer is durable. The bare
Bolt App (\`@slack/bolt\` HTTP receiver, one listener that acks) and the Chat SDK (\`chat\` +
\`@chat-adapter/slack\`, in-memory state, one \`onAction\` handler, behind a \`node:http\` server) get the
same signed payloads and only acknowledge. The Bolt App with a durable store is what a user would
build instead of askbridge to make the same promise (bench/click-peer.js \`bolt-store\`): the same Bolt
App, whose listener stores the answer in SQLite (better-sqlite3, WAL, \`synchronous = FULL\`, on its
event loop), answers the agent's waiting request, acks, then updates the card with \`chat.update\`.
Every server is its own process, and so is the clicker
(bench/click-clicker.js): the fake Slack, which also serves askbridge's card updates, runs in the bench
process, and a clicker sharing its event loop would count the fake's work as the server's. The cards
are spread over ${CHANNELS} channels and the fake's rate limits are off here (posting is measured in the
post section), so the cards a round clicks are up before it starts, and after askbridge's turn the
next server waits until every answered card shows its answer (askbridge's work after the ack is not
timed as the next server's).

${table(['server', 'clicks', 'non-200', 'ack p50 ms', 'ack p99 ms', 'max ms', 'p50 / Bolt', 'p99 / Bolt', 'p99 / Bolt, 90% interval', 'loop CPU ms / click', 'loop waited ms / click'], rows)}

What the agent waits for, in the same rounds: from the clicker sending the click to the bench process
(the agent) having read the whole answer of its blocking \`POST /v1/ask\` through askbridge's own
client (\`BridgeClient\`, which \`askbridge ask\`, the hook and \`askbridge mcp\` use; the durable Bolt
App's agents read theirs as it does, with undici's \`request\`), beside the bare Bolt App's
click → its listener starting (Bolt's listener is where an app would start handing the answer on). Both
are read on the machine's monotonic clock, which the clicker, the agent and the Bolt process share.

${table(['what', 'clicks', 'p50 ms', 'p99 ms', 'max ms', 'p99 / Bolt', 'p99 / Bolt, 90% interval'], answerRows)}

askbridge's click → answer p99 is ${storeRatio.toFixed(2)}× the Bolt App with a durable store's (90% interval ${interval('askbridge:answer', 'bolt-store:answer')}).

PostgreSQL's click → answer p99 is ${pgRatio.toFixed(2)}× SQLite's (90% interval ${interval('askbridge-pg:answer', 'askbridge:answer')}).

The interval says how far a p99 ratio moves with the luck of the run: ${RESAMPLES} bootstrap
resamples of the ${ROUNDS} rounds (drawn whole, with replacement, the same rounds for both servers),
the ratio of the p99s in each, and the 5th and 95th percentiles of those ratios. The goals are judged
on the measured ratios, not on the intervals.

Loop CPU is the time the server's main thread (its event loop, which reads every click) ran on a
core during its rounds, from Linux's /proc/PID/schedstat, divided by its clicks: askbridge's loop
decides each click; its commits and disk syncs run on its writer thread and are not in it.
Loop waited is the time the same thread was ready to run but waited for a core (schedstat's second
field, time on a run queue), divided by its clicks: a click's work on the loop takes the two added
together, and the other processes and the server's own threads are what it waits behind.

What shares this machine's two cores during each server's turns, in CPU ms per click (the servers'
and the clicker's from /proc/PID/stat, in steps of 10 ms summed over all the rounds; this process's
from \`process.cpuUsage()\`): the server's main
thread and all its threads (its writer, V8's helpers), this process (the agents waiting and the fake
Slack), the clicker, and the local PostgreSQL server (every process of it, from /proc/PID/stat: the
PostgreSQL bridge's backends, the WAL writer; what it does in the other servers' turns is the
bridge's work left from its own, and close to nothing); "cores busy" is their sum over the turns' time. With ${CONCURRENCY} clicks in flight
and the next sent as each ack comes back, the cores are busy most of each turn (the turns' ends, with
fewer clicks left in flight, count too), so a click mostly waits for the other clicks' work, in the
server and beside it: the more CPU a server needs per click, the longer each of its clicks waits, and
the latencies above follow the total.

${table(['server', 'main thread', 'all its threads', 'this process (agents, fake Slack)', 'clicker', 'PostgreSQL server', 'total', 'cores busy'], cpuRows)}

askbridge asks answered by these clicks: ${answered} with the clicked option, ${wrong} otherwise.`
    return {
      markdown,
      goals: [
        {
          goal: `click ack p99 ≤ ${GOAL_RATIO}× bare Bolt's ack p99, same run`,
          figure: `${fmt(stats.askbridge.p99)} ms vs ${fmt(stats.bolt.p99)} ms: ${goalRatio.toFixed(2)}× (90% interval ${interval('askbridge')}; Chat SDK ${ratio('chat', 'p99').toFixed(2)}×)`,
          pass: goalRatio <= GOAL_RATIO && failed.askbridge === 0 && wrong === 0,
        },
        {
          goal: `click → answer to the agent p99 ≤ ${GOAL_RATIO}× Bolt's click → listener p99 (SQLite)`,
          figure: `${fmt(answerStats.askbridge.p99)} ms vs ${fmt(answerStats.bolt.p99)} ms: ${goalAnswer.toFixed(2)}× (90% interval ${interval('askbridge:answer', 'bolt:answer')})`,
          pass: goalAnswer <= GOAL_RATIO && answerStats.askbridge.n === answerStats.bolt.n,
        },
        {
          goal: `PostgreSQL (one replica): click → answer p99 ≤ ${GOAL_PG_RATIO}× SQLite's`,
          figure: `${fmt(answerStats['askbridge-pg'].p99)} ms vs ${fmt(answerStats.askbridge.p99)} ms: ${pgRatio.toFixed(2)}×`,
          pass: pgRatio <= GOAL_PG_RATIO && failed['askbridge-pg'] === 0,
        },
      ],
    }
  } finally {
    clicker.stop()
    for (const server of Object.values(servers)) await server.stop()
    await fake.close()
    await schema.drop()
  }
}
