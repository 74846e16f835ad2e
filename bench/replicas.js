// Section "replicas": several `askbridge serve` processes on one PostgreSQL database beside one on
// SQLite, in the same run (issue #10). Each bridge is the real CLI in its own process (Slack HTTP
// mode); this process is the fake Slack, the asking clients and the clicker. A cycle is: a blocking
// ask over the HTTP API to one replica, its card posted to the fake Slack, a signed click on the Yes
// button delivered to a replica (with 3 replicas: another one than the ask's), the answer returned
// to the asking client. Then, on 3 replicas, the cross-replica wake-up: the time from replica B
// committing an answer to the ask waiting on replica A returning it.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { FakeSlack } from '../dist-bench/test/fakes/slack/server.js'
import { fmt, pool, summarize, table } from './lib.js'

const ASKS = Number(process.env.BENCH_REPLICA_ASKS ?? 400)
const WARMUP = Number(process.env.BENCH_REPLICA_WARMUP ?? 50)
const WAKEUPS = Number(process.env.BENCH_REPLICA_WAKEUPS ?? 200)
const CONCURRENCY = 16
const GOAL_WAKE_P99_MS = 50
// A timed wait whose replica is killed turns `continued` by its deadline + this, as the others see it.
const GOAL_TAKEOVER_MS = 5000
const TAKEOVERS = Number(process.env.BENCH_REPLICA_TAKEOVERS ?? 5)
const TAKEOVER_TIMEOUT_MS = 3000
const PG_URL = process.env.ASKBRIDGE_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const root = new URL('..', import.meta.url).pathname
// Slack allows about one post per second per channel and askbridge paces each channel so; every
// cycle gets a channel of its own (through a routes file) so pacing is not what is measured.
const CHANNELS = WARMUP + ASKS + WAKEUPS
const channelOf = (i) => `C0REPL${String(i).padStart(4, '0')}`

/** One `askbridge serve`; resolves once it listens (port 0: it says where on stderr). */
async function startReplica(env) {
  // The command file itself, as `npx askbridge serve` runs it.
  const child = spawn(join(root, 'bin/askbridge.js'), ['serve'], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ASKBRIDGE_PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d.toString()
      const m = /Web inbox: (http:\/\/\S+)\/inbox/.exec(stderr)
      if (m) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`askbridge serve exited ${code}: ${stderr}`)))
  })
  return {
    url,
    child,
    async stop() {
      // A process killed by a signal has no exit code, only a signal code.
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}

/** Resolves each call's first card as the fake Slack stores it. */
function watchCards(fake) {
  const waiting = new Map()
  const seen = new Map()
  const set = fake.messages.set.bind(fake.messages)
  fake.messages.set = (key, message) => {
    set(key, message)
    const id = message.callId
    if (id && !seen.has(id)) {
      seen.set(id, message)
      waiting.get(id)?.(message)
    }
    return fake.messages
  }
  return (callId) =>
    seen.get(callId) ??
    new Promise((resolve) => waiting.set(callId, resolve)).finally(() => waiting.delete(callId))
}

/**
 * Run one cycle: ask through `asker`, wait for the card, click Yes through `clicker`. Returns the
 * click->answer latency and the moments the click was sent and the answer arrived.
 */
async function cycle(fake, cardOf, asker, clicker, i) {
  const callId = `c${i}`
  const asked = fetch(`${asker.url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      agentId: 'bench',
      callId,
      route: `r${i}`,
      questions: [{ id: 'go', question: `Ship build ${i}?`, options: [{ label: 'Yes' }, { label: 'No' }] }],
    }),
  }).then(async (res) => ({ status: res.status, body: await res.json(), at: performance.now() }))
  const message = await cardOf(callId)
  const yes = fake.liveActionIds(callId).find((id) => id.endsWith('|c|0|0'))
  if (!yes) throw new Error(`no Yes button on ${callId}`)
  const payload = fake.actionPayload({ id: 'U0BENCH', name: 'Bench' }, message, yes)
  const sent = performance.now()
  const click = await fake.sendHttp(payload, { url: `${clicker.url}/slack/events` })
  const acked = performance.now()
  const answer = await asked
  if (click.status !== 200 || answer.status !== 200 || answer.body.answers?.[0]?.selected?.[0] !== 'Yes') {
    throw new Error(
      `cycle ${callId}: click ${click.status}, ask ${answer.status} ${JSON.stringify(answer.body)}`,
    )
  }
  return { callId, latency: answer.at - sent, sent, acked, answered: answer.at }
}

/** A fresh schema of its own, dropped afterwards (the click section uses it too). */
export async function pgSchema(name) {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 2 })
  const schema = `bench_${name}_${process.pid}`
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.query(`CREATE SCHEMA "${schema}"`)
  return {
    schema,
    url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`,
    async drop() {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await admin.end()
    },
  }
}

/**
 * The moment each call's card was last written, as every replica hears it: a LISTEN connection of
 * this process on the schema's channel (the NOTIFY a card write sends once it is committed).
 */
async function listenCards(schema) {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  const written = new Map()
  client.on('notification', (n) => {
    const note = JSON.parse(n.payload ?? '{}')
    if (note.k === 'c') written.set(note.c, [...(written.get(note.c) ?? []), performance.now()])
  })
  await client.query(`LISTEN "askbridge_${schema}"`)
  return { written, close: () => client.end() }
}

/** Throughput and click->answer latency of one set-up; with `wakeups`, the cross-replica phase too. */
async function measure({ name, db, replicas: count, fake, cardOf, dir, log, wakeups, schema }) {
  const env = {
    ASKBRIDGE_DB: db,
    ASKBRIDGE_LOG_LEVEL: 'warn',
    ASKBRIDGE_ROUTES: join(dir, 'routes.json'),
    SLACK_BOT_TOKEN: fake.options.botToken,
    SLACK_SIGNING_SECRET: fake.options.signingSecret,
    SLACK_CHANNEL: channelOf(0),
    SLACK_API_URL: fake.apiUrl,
  }
  // Started one after another: the first migrates an empty schema.
  const replicas = []
  try {
    for (let r = 0; r < count; r++) replicas.push(await startReplica(env))
    const pick = (i, shift = 0) => replicas[(i + shift) % count]
    // The click goes to another replica than the ask whenever there is one.
    const run = (i) => cycle(fake, cardOf, pick(i), pick(i, 1), i)
    await pool(
      Array.from({ length: WARMUP }, (_, i) => i),
      CONCURRENCY,
      (i) => run(i),
    )
    const latencies = []
    const acks = []
    const started = performance.now()
    await pool(
      Array.from({ length: ASKS }, (_, i) => WARMUP + i),
      CONCURRENCY,
      async (i) => {
        const c = await run(i)
        latencies.push(c.latency)
        acks.push(c.acked - c.sent)
      },
    )
    const seconds = (performance.now() - started) / 1000
    log(`${name}: ${ASKS} cycles in ${seconds.toFixed(1)} s`)
    const result = {
      name,
      perSecond: ASKS / seconds,
      ...summarize(latencies),
      ack: summarize(acks),
      late: acks.filter((ms) => ms > 3000).length,
    }
    if (!wakeups) return result

    // One at a time, nothing else in flight: the ask waits on replica A, the click lands on B.
    const heard = await listenCards(schema)
    const wake = []
    const endToEnd = []
    const same = []
    let early = 0
    try {
      for (let k = 0; k < wakeups; k++) {
        const i = WARMUP + ASKS + k
        // Every other sample clicks on the replica holding the ask: the same path without the hop.
        const cross = k % 2 === 0
        const c = await cycle(fake, cardOf, pick(i), cross ? pick(i, 1) : pick(i), i)
        if (!cross) {
          same.push(c.latency)
          continue
        }
        endToEnd.push(c.latency)
        // The answer's card write: the first one heard after the click. This process may read A's
        // response before the notification that arrived with it: that wake-up counts as 0 ms.
        const heardAfter = () => (heard.written.get(c.callId) ?? []).find((t) => t >= c.sent)
        const deadline = performance.now() + 2000
        while (heardAfter() === undefined && performance.now() < deadline)
          await new Promise((r) => setTimeout(r, 5))
        const committed = heardAfter()
        if (committed === undefined) throw new Error(`no card write heard for ${c.callId}`)
        if (committed > c.answered) early++
        wake.push(Math.max(0, c.answered - committed))
      }
    } finally {
      await heard.close()
    }
    return {
      ...result,
      wake: summarize(wake),
      crossEndToEnd: summarize(endToEnd),
      sameEndToEnd: summarize(same),
      early,
    }
  } finally {
    for (const r of replicas) await r.stop()
  }
}

/** The call as replica `r` shows it (`state`, `deadline`), or {} while it does not know it yet. */
async function callView(r, agentId, callId) {
  const res = await fetch(`${r.url}/v1/questions/${callId}?agentId=${agentId}`)
  return res.status === 200 ? await res.json() : {}
}

/** Poll until `check` gives a value; the moment it first does is what the caller measures. */
async function poll(check, what, timeoutMs) {
  const until = performance.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * A timed wait outlives its replica: two replicas on one schema; a timed ask waits on replica A,
 * A is killed (SIGKILL) just before the deadline, when its lease was renewed last, and replica B is
 * polled until it shows the call `continued`. The figure is that moment minus the deadline. A is
 * started again for the next trial.
 */
async function takeovers({ db, log }) {
  const env = { ASKBRIDGE_DB: db, ASKBRIDGE_LOG_LEVEL: 'warn', ASKBRIDGE_PORT: '0' }
  const survivor = await startReplica(env)
  const late = []
  try {
    for (let t = 0; t < TAKEOVERS; t++) {
      const doomed = await startReplica(env)
      const callId = `takeover-${t}`
      try {
        const asking = fetch(`${doomed.url}/v1/ask`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            agentId: 'bench-takeover',
            callId,
            timeoutMs: TAKEOVER_TIMEOUT_MS,
            questions: [{ id: 'go', question: 'Roll back?', options: [{ label: 'Yes' }, { label: 'No' }] }],
          }),
        }).catch(() => undefined)
        const { deadline } = await poll(
          async () => {
            const v = await callView(survivor, 'bench-takeover', callId)
            return v.deadline === undefined ? undefined : v
          },
          'the call recorded',
          10_000,
        )
        while (Date.now() < deadline - 300) await new Promise((r) => setTimeout(r, 10))
        doomed.child.kill('SIGKILL')
        await asking
        await poll(
          async () =>
            (await callView(survivor, 'bench-takeover', callId)).state === 'continued' ? true : undefined,
          `${callId} continued on the surviving replica`,
          30_000,
        )
        late.push(Date.now() - deadline)
      } finally {
        await doomed.stop()
      }
    }
  } finally {
    await survivor.stop()
  }
  log(`takeover: ${late.map((ms) => fmt(ms)).join(', ')} ms after the deadline`)
  return { ...summarize(late), all: late }
}

export default async function replicas({ dir, log }) {
  const routes = Array.from({ length: CHANNELS }, (_, i) => ({
    name: `r${i}`,
    match: { route: `r${i}` },
    destinations: [{ platform: 'slack', channel: channelOf(i) }],
  }))
  writeFileSync(join(dir, 'routes.json'), JSON.stringify({ routes }))
  const load = loadavg()[0]
  const results = []
  for (const setup of [
    { name: 'SQLite, 1 process', replicas: 1 },
    { name: 'PostgreSQL, 1 replica', replicas: 1, pg: 'one' },
    { name: 'PostgreSQL, 3 replicas', replicas: 3, pg: 'three', wakeups: WAKEUPS },
  ]) {
    // A fresh fake Slack per set-up: no channel history carried over. Its rate limits are off:
    // Slack's workspace limits on card updates are not what this section measures. A click acked
    // after Slack's 3 s is counted (Slack would have retried it), not given up on.
    const fake = await FakeSlack.start({ rateLimits: false, ackTimeoutMs: 60_000 })
    const schema = setup.pg ? await pgSchema(setup.pg) : undefined
    try {
      results.push(
        await measure({
          ...setup,
          db: schema ? schema.url : join(dir, 'replicas.db'),
          schema: schema?.schema,
          fake,
          cardOf: watchCards(fake),
          dir,
          log,
        }),
      )
    } finally {
      await fake.close()
      await schema?.drop()
    }
  }
  const three = results[2]
  const schema = await pgSchema('takeover')
  let takeover
  try {
    takeover = await takeovers({ db: schema.url, log })
  } finally {
    await schema.drop()
  }
  const rows = results.map((r) => [
    r.name,
    fmt(r.perSecond),
    fmt(r.p50),
    fmt(r.p99),
    fmt(r.max),
    fmt(r.ack.p50),
    fmt(r.ack.p99),
    r.late,
  ])
  const pass = three.wake.p99 < GOAL_WAKE_P99_MS
  const markdown = `Each set-up runs real \`askbridge serve\` processes (the CLI, Slack HTTP mode) against the
fake Slack, which runs in the bench process with the asking clients. ${WARMUP} warm-up cycles, then
${ASKS} measured cycles, ${CONCURRENCY} in flight. A cycle: a blocking \`POST /v1/ask\` to a replica
(round robin), its card posted (each cycle has a channel of its own, so Slack's per-channel pacing
is not measured, and the fake enforces no rate limits), a signed \`block_actions\` click on Yes sent
to the next replica (with 3 replicas always another one than the ask's), and the answer returned to
the asking client. askbridge still keeps to Slack's workspace-wide 300 posts a minute (after a burst
of 150): that bounds one replica's asks/s, and each replica keeps its own bucket (see docs/replicas.md,
"Rate limits are paced per replica"), so 3 replicas are not bound by it here. SQLite uses the
default durability (fsync per commit); PostgreSQL is the local server (loopback), its defaults.
The machine was shared: load average ${load.toFixed(1)} when the section started, ${loadavg()[0].toFixed(1)} at its end.

${table(
  [
    'set-up',
    'asks/s (answered cycles)',
    'click->answer p50 ms',
    'p99 ms',
    'max ms',
    'click ack p50 ms',
    'ack p99 ms',
    'acks > 3 s',
  ],
  rows,
)}

Cross-replica wake-up, 3 replicas on PostgreSQL, ${WAKEUPS} cycles one at a time, nothing else in
flight: half click on replica B while the ask waits on replica A, half click on replica A itself.
"B's answer committed -> A returns" starts when this process hears the NOTIFY of the answered card
write (the same notification replica A waits for) and ends when A's HTTP response arrives
(${three.early} of ${three.wake.n} responses were read before the notification that came with them: 0 ms).

${table(
  ['measure', 'n', 'p50 ms', 'p99 ms', 'max ms'],
  [
    ['B commits the answer -> ask on A returns', three.wake],
    ['click sent to B -> ask on A returns', three.crossEndToEnd],
    ['click sent to A -> ask on A returns', three.sameEndToEnd],
  ].map(([what, s]) => [what, s.n, fmt(s.p50), fmt(s.p99), fmt(s.max)]),
)}

A timed wait whose replica dies: two replicas on one PostgreSQL schema, ${TAKEOVERS} trials. A
blocking ask with \`timeoutMs: ${TAKEOVER_TIMEOUT_MS}\` waits on replica A; A is killed with SIGKILL
300 ms before the deadline (its lease was renewed last then), and replica B is polled every 20 ms
until \`GET /v1/questions/:id\` shows the call \`continued\`. The lease lasts 3 s and is renewed
every second; every replica sweeps for lapsed leases every second. Milliseconds after the deadline:
${takeover.all.map((ms) => fmt(ms)).join(', ')} (max ${fmt(takeover.max)}).`
  return {
    markdown,
    goals: [
      {
        goal: `cross-replica wake-up p99 < ${GOAL_WAKE_P99_MS} ms (loopback)`,
        figure: `p50 ${fmt(three.wake.p50)} ms, p99 ${fmt(three.wake.p99)} ms (click on B -> answer on A: p99 ${fmt(three.crossEndToEnd.p99)} ms)`,
        pass,
      },
      {
        goal: `a timed wait whose replica is killed turns continued by deadline + ${GOAL_TAKEOVER_MS / 1000} s`,
        figure: `worst of ${takeover.n}: deadline + ${fmt(takeover.max)} ms (p50 ${fmt(takeover.p50)} ms)`,
        pass: takeover.n === TAKEOVERS && takeover.max <= GOAL_TAKEOVER_MS,
      },
    ],
  }
}
