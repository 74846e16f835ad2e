// Section "history": does `askbridge serve` cost the same with 1k, 10k and 100k settled calls in its
// history, on SQLite and on PostgreSQL? A template call is asked and answered through the real serve
// (web inbox), then cloned through the store API (events in big transactions, card, post and audit
// rows), so every clone has exactly the rows a real settled call leaves: into a copy of the SQLite
// file, and into a fresh PostgreSQL schema per size (dropped afterwards).
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { PLATFORMS } from '../dist/adapters/platforms.js'
import { parseConfig } from '../dist/src/config/env.js'
import { serve } from '../dist/src/server/serve.js'
import { connectStore, openStore } from '../dist/src/store/index.js'
import { cpuMs, fmt, mib, pool, rssOf, sleep, startServe, summarize, table, until } from './lib.js'

const SIZES = (process.env.BENCH_HISTORY_SIZES ?? '1000,10000,100000').split(',').map(Number)
// Which stores to run, in this order: `sqlite`, `postgres` or both.
const STORES = (process.env.BENCH_HISTORY_STORES ?? 'sqlite,postgres').split(',')
const PG_URL = process.env.ASKBRIDGE_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const IDLE_MS = Number(process.env.BENCH_HISTORY_IDLE_MS ?? 16_000)
const REQUESTS = 50
const GOAL_RATIO = 1.5
const GOAL_STALL_MS = 50
const TEMPLATE = 'histtemplate0000'
const question = { id: 'go', question: 'Ship the release?', options: [{ label: 'Yes' }, { label: 'No' }] }

/** One call asked over the API and answered in the inbox, in a fresh database. */
async function template(dir) {
  const db = join(dir, 'template.db')
  const config = parseConfig(
    { ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: db, ASKBRIDGE_LOG_LEVEL: 'warn' },
    PLATFORMS,
  )
  const bridge = await serve({ config, platforms: PLATFORMS })
  // The inbox opens from its one-time sign-in link, as a person's browser does.
  const login = await fetch(bridge.inboxUrl, { redirect: 'manual' })
  const cookie = login.headers.get('set-cookie')?.split(';')[0] ?? ''
  try {
    const answered = fetch(`${bridge.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callId: TEMPLATE, timeoutMs: 600_000, questions: [question] }),
    }).then((res) => res.json())
    await until(async () => {
      const res = await fetch(`${bridge.url}/inbox/api/cards`, { headers: { cookie } })
      return (await res.json()).cards?.some((c) => c.callId === TEMPLATE)
    }, 'template card')
    const res = await fetch(`${bridge.url}/inbox/api/cards/${TEMPLATE}/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({
        action: { type: 'choose', questionId: 'go', label: 'Yes' },
        person: { name: 'Ana' },
      }),
    })
    if (res.status !== 200) throw new Error(`template answer: ${res.status}`)
    await answered
    await sleep(500)
  } finally {
    await bridge.close()
  }
  const store = openStore(db)
  const [call] = await store.findCalls(TEMPLATE)
  const key = { agentId: call.agentId, callId: TEMPLATE }
  const rows = {
    events: (await store.events({ callId: TEMPLATE })).map(({ seq, at, ...event }) => event),
    card: (await store.getCard(key))?.state,
    posts: (await store.listPosts(key)).map(({ createdAt, ...post }) => post),
    audit: (await store.listAudit({ callId: TEMPLATE })).map(({ seq, at, ...entry }) => entry),
  }
  await store.close()
  if (call.state !== 'settled' || !rows.card) throw new Error(`template call is ${call.state}`)
  return { db, json: JSON.stringify(rows) }
}

/** Write cloned calls as askbridge would have: events, card, post records, audit. */
async function writeClones(store, clones) {
  await store.append(...clones.flatMap((c) => c.events))
  for (const c of clones) {
    const key = { agentId: c.events[0].agentId, callId: c.events[0].callId }
    await store.casCard(key, 0, c.card)
    for (const post of c.posts) await store.addPost({ ...post, createdAt: Date.now() })
    for (const entry of c.audit) await store.audit(entry)
  }
}

/** A copy of the template database with `n` settled calls (the template's rows under new callIds). */
async function seed(dir, tmpl, n) {
  const db = join(dir, `history-${n}.db`)
  copyFileSync(tmpl.db, db)
  const store = openStore(db, { durability: 'normal' })
  const CHUNK = 2000
  for (let start = 1; start < n; start += CHUNK) {
    const clones = []
    for (let i = start; i < Math.min(n, start + CHUNK); i++)
      clones.push(JSON.parse(tmpl.json.replaceAll(TEMPLATE, `hist${String(i).padStart(12, '0')}`)))
    await writeClones(store, clones)
  }
  await store.close()
  return db
}

/** A fresh PostgreSQL schema holding `n` settled calls (the template's rows, the template among them). */
async function seedPg(tmpl, n) {
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 })
  const schema = `bench_history_${n}_${process.pid}`
  const drop = async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await admin.end()
  }
  try {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await admin.query(`CREATE SCHEMA "${schema}"`)
    const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`
    const store = await connectStore(url)
    try {
      // Each append takes one advisory lock per call until it commits: chunks of 500 calls, 4 at
      // a time, stay well inside the server's lock table.
      const CHUNK = 500
      const starts = []
      for (let start = 0; start < n; start += CHUNK) starts.push(start)
      await pool(starts, 4, async (start) => {
        const clones = []
        for (let i = start; i < Math.min(n, start + CHUNK); i++) {
          const id = i === 0 ? TEMPLATE : `hist${String(i).padStart(12, '0')}`
          clones.push(JSON.parse(tmpl.json.replaceAll(TEMPLATE, id)))
        }
        await writeClones(store, clones)
      })
    } finally {
      await store.close()
    }
    // What autovacuum does to a database that grew over time, done now rather than during the
    // measurement: planner statistics and the visibility map for the seeded rows.
    const tables = ['events', 'calls', 'cards', 'posts', 'audit'].map((t) => `"${schema}".askbridge_${t}`)
    await admin.query(`VACUUM ANALYZE ${tables.join(', ')}`)
    // Seeding wrote minutes of rows; the server would flush them in a spread checkpoint during the
    // measurement, on the same two cores. A database that grew over months has no such backlog.
    await admin.query('CHECKPOINT')
    return { url, schema, drop }
  } catch (error) {
    await drop().catch(() => {})
    throw error
  }
}

/**
 * `REQUESTS` of one request to every server in turn (1k, 10k, 100k, 1k, …), so a noisy moment of
 * this shared machine falls on every size alike rather than on whichever size it was measuring.
 */
async function latencies(servers, path, init) {
  const samples = servers.map(() => [])
  const bytes = servers.map(() => 0)
  for (let i = 0; i < REQUESTS; i++) {
    for (const [k, server] of servers.entries()) {
      const t = performance.now()
      const res = await fetch(`${server.url}${typeof path === 'function' ? path(i) : path}`, init?.(i, k))
      const body = await res.arrayBuffer()
      samples[k].push(performance.now() - t)
      bytes[k] = body.byteLength
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
    }
  }
  return samples.map((list, k) => ({ ...summarize(list), bytes: bytes[k] }))
}

/** Start one serve with the stall probe; its start-up time and the stall during start-up. */
async function startProbed(dir, store, db, n) {
  const stallFile = join(dir, `stall-${store}-${n}.jsonl`)
  writeFileSync(stallFile, '')
  const t = performance.now()
  const server = await startServe({ ASKBRIDGE_DB: db, BENCH_STALL_FILE: stallFile }, [
    '--import',
    './bench/stall-probe.js',
  ])
  const startup = performance.now() - t
  const stalls = async () => {
    const before = readFileSync(stallFile, 'utf8').split('\n').filter(Boolean).length
    process.kill(server.pid, 'SIGUSR2')
    await until(
      () => readFileSync(stallFile, 'utf8').split('\n').filter(Boolean).length > before,
      'stall probe',
    )
    return JSON.parse(readFileSync(stallFile, 'utf8').trim().split('\n').at(-1))
  }
  try {
    return { n, server, startup, startupStall: await stalls(), stalls }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/**
 * Every size's serve at once: started one after another (each start-up timed alone), then idle
 * together, then served in turn (`latencies`).
 */
async function measureAll(dir, store, dbs, log) {
  const up = []
  try {
    for (const { n, db } of dbs) up.push(await startProbed(dir, store, db, n))
    await sleep(1000)
    const rss = up.map((u) => rssOf(u.server.pid))
    const cpu0 = up.map((u) => cpuMs(u.server.pid))
    await sleep(IDLE_MS)
    const idleCpu = up.map((u, k) => cpuMs(u.server.pid) - cpu0[k])
    const idleStall = []
    for (const u of up) idleStall.push(await u.stalls())
    for (const [k, u] of up.entries())
      log(
        `${store} ${u.n}: up in ${Math.round(u.startup)} ms, idle ${idleCpu[k]} ms CPU in ${IDLE_MS / 1000} s`,
      )
    const servers = up.map((u) => u.server)
    const questions = await latencies(servers, '/v1/questions')
    const cookies = await Promise.all(servers.map((server) => server.inboxCookie()))
    const inbox = await latencies(servers, '/inbox/api/cards', (_i, k) => ({
      headers: { cookie: cookies[k] },
    }))
    const metrics = await latencies(servers, '/metrics')
    const ask = await latencies(servers, '/v1/ask', (i) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callId: `new-${i}`, timeoutMs: 1, questions: [question] }),
    }))
    const servingStall = []
    for (const u of up) servingStall.push(await u.stalls())
    return up.map((u, k) => ({
      n: u.n,
      startup: u.startup,
      rss: rss[k],
      idleCpu: idleCpu[k],
      startupStall: u.startupStall,
      idleStall: idleStall[k],
      servingStall: servingStall[k],
      questions: questions[k],
      inbox: inbox[k],
      metrics: metrics[k],
      ask: ask[k],
    }))
  } finally {
    for (const u of up) await u.server.stop()
  }
}

const NAMES = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

/** Seed every size on one store, then measure them side by side. */
async function run(dir, tmpl, store, log) {
  const dbs = []
  try {
    for (const n of SIZES) {
      const t = performance.now()
      if (store === 'sqlite') {
        dbs.push({ n, db: await seed(dir, tmpl, n) })
        log(`sqlite: seeded ${n} settled calls in ${Math.round((performance.now() - t) / 1000)} s`)
      } else {
        const schema = await seedPg(tmpl, n)
        const seeded = (performance.now() - t) / 1000
        dbs.push({ n, db: schema.url, seeded, drop: schema.drop })
        log(`postgres: seeded ${n} settled calls in ${Math.round(seeded)} s`)
      }
    }
    const results = await measureAll(dir, store, dbs, log)
    return results.map((r, k) => (dbs[k].seeded === undefined ? r : { ...r, seeded: dbs[k].seeded }))
  } finally {
    for (const d of dbs) await d.drop?.()
  }
}

/** One store's tables and goal rows. */
function report(store, results) {
  const name = NAMES[store]
  const first = results[0]
  const last = results.at(-1)
  // Ratios use each figure's resolution as a floor: CPU is counted in 10 ms ticks, latencies in ms.
  const figures = [
    ['start-up ms', (r) => r.startup, 1],
    ['RSS after start MiB', (r) => mib(r.rss), 1],
    [`idle CPU ms in ${IDLE_MS / 1000} s`, (r) => r.idleCpu, 10],
    ['GET /v1/questions p50 ms', (r) => r.questions.p50, 1],
    ['inbox feed (GET /inbox/api/cards) p50 ms', (r) => r.inbox.p50, 1],
    ['GET /metrics p50 ms', (r) => r.metrics.p50, 1],
    ['a new ask (timed, 1 ms window) p50 ms', (r) => r.ask.p50, 1],
  ]
  const ratio = (get, floor) => Math.max(get(last), floor) / Math.max(get(first), floor)
  const rows = figures.map(([figure, get, floor]) => [
    figure,
    ...results.map((r) => fmt(get(r))),
    `${ratio(get, floor).toFixed(2)}×`,
  ])
  const stallRows = [
    ['longest stall during start-up ms', (r) => r.startupStall.maxMs],
    [`longest stall while idle (${IDLE_MS / 1000} s) ms`, (r) => r.idleStall.maxMs],
    ['longest stall while serving the requests above ms', (r) => r.servingStall.maxMs],
  ].map(([figure, get]) => [figure, ...results.map((r) => fmt(get(r))), ''])
  // What the worst moments were made of: busy (CPU, a GC) or waiting for a core.
  const insideRows = [
    ['idle', (r) => r.idleStall],
    ['serving', (r) => r.servingStall],
  ].map(([phase, get]) => [
    `${phase}: process CPU in the second of the longest stall ms / longest GC ms`,
    ...results.map((r) => `${fmt(get(r).cpuMsAround)} / ${fmt(get(r).maxGcMs)}`),
    '',
  ])
  const sizeRows = [
    ['GET /v1/questions bytes', (r) => r.questions.bytes],
    ['inbox feed bytes', (r) => r.inbox.bytes],
    ['/metrics bytes', (r) => r.metrics.bytes],
    ['GET /v1/questions p99 ms', (r) => r.questions.p99],
    ['inbox feed p99 ms', (r) => r.inbox.p99],
    ['GET /metrics p99 ms', (r) => r.metrics.p99],
    ['a new ask p99 ms', (r) => r.ask.p99],
  ].map(([figure, get]) => [figure, ...results.map((r) => String(Math.round(get(r) * 10) / 10)), ''])
  const seedRows =
    store === 'postgres'
      ? [['seeding through the store API s', ...results.map((r) => String(Math.round(r.seeded))), '']]
      : []
  const worst = Math.max(...figures.map(([, get, floor]) => ratio(get, floor)))
  const worstName = figures.find(([, get, floor]) => ratio(get, floor) === worst)[0]
  const maxStall = Math.max(...results.flatMap((r) => [r.idleStall.maxMs, r.servingStall.maxMs]))
  const maxStartupStall = Math.max(...results.map((r) => r.startupStall.maxMs))
  const sizes = results.map((r) => `${r.n} calls`)
  const markdown = `### ${name}

${table(['figure', ...sizes, `${last.n} / ${first.n}`], rows)}

${table(['also', ...sizes, ''], [...stallRows, ...insideRows, ...sizeRows, ...seedRows])}`
  return {
    markdown,
    goals: [
      {
        goal: `${name}: every history figure within ${GOAL_RATIO}× from ${first.n} to ${last.n} settled calls`,
        figure: `worst: ${worstName} ${worst.toFixed(2)}×`,
        pass: worst <= GOAL_RATIO,
      },
      {
        goal: `${name}: no event-loop stall over ${GOAL_STALL_MS} ms (idle and serving, up to ${last.n} calls)`,
        figure: `${fmt(maxStall)} ms (start-up: ${fmt(maxStartupStall)} ms)`,
        pass: maxStall <= GOAL_STALL_MS,
      },
    ],
  }
}

export default async function history({ dir, log }) {
  const unknown = STORES.filter((store) => !NAMES[store])
  if (unknown.length > 0)
    throw new Error(`BENCH_HISTORY_STORES: unknown ${unknown.join(', ')} (sqlite, postgres)`)
  const tmpl = await template(dir)
  const reports = []
  for (const store of STORES) reports.push(report(store, await run(dir, tmpl, store, log)))
  const first = SIZES[0]
  const last = SIZES.at(-1)
  const markdown = `\`askbridge serve\` (the CLI, its own process, web inbox only) started on a database holding
${SIZES.join(', ')} settled calls: ${STORES.map((s) => NAMES[s]).join(', then ')}. SQLite is a file with the default
durability; PostgreSQL is the local server (loopback, its defaults), a fresh schema per size
(\`ASKBRIDGE_DB=postgres://...?schema=NAME\`), dropped after the store is measured. Each settled call is a
clone of one timed call (so it is in the protocol's projection, \`GET /v1/questions\`) asked over the API
and answered in the inbox within its window (its events, call row, card, post and audit rows), written
through the store API: on SQLite into a copy of the template's file, 2000 calls' events per transaction;
on PostgreSQL through \`connectStore\`, 500 calls' events per transaction (each holds an advisory lock
per call), 4 such batches at a time, each followed by its calls' card, post and audit rows; then \`VACUUM ANALYZE\` of the seeded tables
(what autovacuum does to a database that grew over time, done before the measurement rather than
during it) and a \`CHECKPOINT\` (the seeding's writes flushed before, not during, the measurement). Every size is seeded first, then
one serve per size is started, one after another; start-up is from spawning the process to
\`/healthz\` answering (on PostgreSQL it includes connecting and checking the migrations). The
servers then run side by side: RSS is read from /proc 1 s later; idle CPU is each process's CPU time
over the same ${IDLE_MS / 1000} s of nothing (the escalation tick runs every 15 s); then ${REQUESTS} of each request,
one at a time, to each size in turn (1k, 10k, 100k, 1k, …), so a noisy moment of this shared machine
falls on every size alike. The longest event-loop stall is \`perf_hooks.monitorEventLoopDelay\` (5 ms resolution),
preloaded into serve by bench/stall-probe.js, which also reports the process's CPU time (every
thread) over the second in which each phase's longest stall fell, and the longest GC pause: less CPU
than the stall lasted means the process spent part of it waiting for one of this machine's two cores
(shared with the database and the bench), not running its own work; the goal counts the stall either
way. Ratios compare ${last} with ${first}, with floors at the
figures' resolution (10 ms of CPU, 1 ms of latency).

${reports.map((r) => r.markdown).join('\n\n')}`
  return { markdown, goals: reports.flatMap((r) => r.goals) }
}
