// Section "history": does `askbridge serve` cost the same with 1k, 10k and 100k settled calls in its
// history? A template call is asked and answered through the real serve (web inbox), then cloned into
// the SQLite file through the store API (events in big transactions, card, post and audit rows), so
// every clone has exactly the rows a real settled call leaves.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { buildAdapters } from '../dist/adapters/compose.js'
import { parseConfig } from '../dist/src/config/env.js'
import { serve } from '../dist/src/server/serve.js'
import { openStore } from '../dist/src/store/index.js'
import { fmt, mib, rssOf, sleep, startServe, summarize, table, until } from './lib.js'

const SIZES = (process.env.BENCH_HISTORY_SIZES ?? '1000,10000,100000').split(',').map(Number)
const IDLE_MS = Number(process.env.BENCH_HISTORY_IDLE_MS ?? 16_000)
const REQUESTS = 30
const GOAL_RATIO = 1.5
const GOAL_STALL_MS = 50
const TEMPLATE = 'histtemplate0000'
const question = { id: 'go', question: 'Ship the release?', options: [{ label: 'Yes' }, { label: 'No' }] }

/** One call asked over the API and answered in the inbox, in a fresh database. */
async function template(dir) {
  const db = join(dir, 'template.db')
  const config = parseConfig({ ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: db, ASKBRIDGE_LOG_LEVEL: 'warn' })
  const bridge = await serve({ config, buildAdapters })
  try {
    const answered = fetch(`${bridge.url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callId: TEMPLATE, timeoutMs: 600_000, questions: [question] }),
    }).then((res) => res.json())
    await until(async () => {
      const res = await fetch(`${bridge.url}/inbox/api/cards`)
      return (await res.json()).cards?.some((c) => c.callId === TEMPLATE)
    }, 'template card')
    const res = await fetch(`${bridge.url}/inbox/api/cards/${TEMPLATE}/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
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
    await store.append(...clones.flatMap((c) => c.events))
    for (const c of clones) {
      const key = { agentId: c.events[0].agentId, callId: c.events[0].callId }
      await store.casCard(key, 0, c.card)
      for (const post of c.posts) await store.addPost({ ...post, createdAt: Date.now() })
      for (const entry of c.audit) await store.audit(entry)
    }
  }
  await store.close()
  return db
}

/** CPU time (ms) a process has used, from /proc/<pid>/stat (utime + stime, 100 ticks/s). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

async function latency(url, path, init) {
  const samples = []
  let bytes = 0
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now()
    const res = await fetch(`${url}${typeof path === 'function' ? path(i) : path}`, init?.(i))
    const body = await res.arrayBuffer()
    samples.push(performance.now() - t)
    bytes = body.byteLength
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
  }
  return { ...summarize(samples), bytes }
}

async function measure(dir, db, n, log) {
  const stallFile = join(dir, `stall-${n}.jsonl`)
  writeFileSync(stallFile, '')
  const stalls = async (pid) => {
    const before = readFileSync(stallFile, 'utf8').split('\n').filter(Boolean).length
    process.kill(pid, 'SIGUSR2')
    await until(
      () => readFileSync(stallFile, 'utf8').split('\n').filter(Boolean).length > before,
      'stall probe',
    )
    return JSON.parse(readFileSync(stallFile, 'utf8').trim().split('\n').at(-1))
  }
  const t = performance.now()
  const server = await startServe({ ASKBRIDGE_DB: db, BENCH_STALL_FILE: stallFile }, [
    '--import',
    './bench/stall-probe.js',
  ])
  const startup = performance.now() - t
  try {
    const startupStall = await stalls(server.pid)
    await sleep(1000)
    const rss = rssOf(server.pid)
    const cpu0 = cpuMs(server.pid)
    await sleep(IDLE_MS)
    const idleCpu = cpuMs(server.pid) - cpu0
    const idleStall = await stalls(server.pid)
    log(`${n}: up in ${Math.round(startup)} ms, idle ${idleCpu} ms CPU in ${IDLE_MS / 1000} s`)
    const questions = await latency(server.url, '/v1/questions')
    const inbox = await latency(server.url, '/inbox/api/cards')
    const metrics = await latency(server.url, '/metrics')
    const ask = await latency(server.url, '/v1/ask', (i) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callId: `new-${i}`, timeoutMs: 1, questions: [question] }),
    }))
    const servingStall = await stalls(server.pid)
    return { n, startup, rss, idleCpu, startupStall, idleStall, servingStall, questions, inbox, metrics, ask }
  } finally {
    await server.stop()
  }
}

export default async function history({ dir, log }) {
  const tmpl = await template(dir)
  const results = []
  for (const n of SIZES) {
    const t = performance.now()
    const db = await seed(dir, tmpl, n)
    log(`seeded ${n} settled calls in ${Math.round((performance.now() - t) / 1000)} s`)
    results.push(await measure(dir, db, n, log))
  }
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
  const rows = figures.map(([name, get, floor]) => [
    name,
    ...results.map((r) => fmt(get(r))),
    `${ratio(get, floor).toFixed(2)}×`,
  ])
  const stallRows = [
    ['longest stall during start-up ms', (r) => r.startupStall.maxMs],
    [`longest stall while idle (${IDLE_MS / 1000} s) ms`, (r) => r.idleStall.maxMs],
    ['longest stall while serving the requests above ms', (r) => r.servingStall.maxMs],
  ].map(([name, get]) => [name, ...results.map((r) => fmt(get(r))), ''])
  const sizeRows = [
    ['GET /v1/questions bytes', (r) => r.questions.bytes],
    ['inbox feed bytes', (r) => r.inbox.bytes],
    ['/metrics bytes', (r) => r.metrics.bytes],
    ['GET /v1/questions p99 ms', (r) => r.questions.p99],
    ['inbox feed p99 ms', (r) => r.inbox.p99],
    ['GET /metrics p99 ms', (r) => r.metrics.p99],
    ['a new ask p99 ms', (r) => r.ask.p99],
  ].map(([name, get]) => [name, ...results.map((r) => String(Math.round(get(r) * 10) / 10)), ''])
  const worst = Math.max(...figures.map(([, get, floor]) => ratio(get, floor)))
  const worstName = figures.find(([, get, floor]) => ratio(get, floor) === worst)[0]
  const maxStall = Math.max(...results.flatMap((r) => [r.idleStall.maxMs, r.servingStall.maxMs]))
  const maxStartupStall = Math.max(...results.map((r) => r.startupStall.maxMs))
  const markdown = `\`askbridge serve\` (the CLI, its own process, SQLite with the default durability, web inbox only)
started on a database holding ${SIZES.join(', ')} settled calls. Each settled call is a clone of one timed call
(so it is in the protocol's projection, \`GET /v1/questions\`) asked over the API and answered in the
inbox within its window (its events, call row, card, post and audit rows). Start-up
is from spawning the process to \`/healthz\` answering; RSS is read from /proc 1 s later; idle CPU is the
process's CPU time over ${IDLE_MS / 1000} s of nothing (the escalation tick runs every 15 s); then ${REQUESTS} of each request
one after another. The longest event-loop stall is \`perf_hooks.monitorEventLoopDelay\` (5 ms resolution),
preloaded into serve by bench/stall-probe.js. Ratios compare ${last.n} with ${first.n}, with floors at the
figures' resolution (10 ms of CPU, 1 ms of latency).

${table(['figure', ...results.map((r) => `${r.n} calls`), `${last.n} / ${first.n}`], rows)}

${table(['also', ...results.map((r) => `${r.n} calls`), ''], [...stallRows, ...sizeRows])}`
  return {
    markdown,
    goals: [
      {
        goal: `every history figure within ${GOAL_RATIO}× from ${first.n} to ${last.n} settled calls`,
        figure: `worst: ${worstName} ${worst.toFixed(2)}×`,
        pass: worst <= GOAL_RATIO,
      },
      {
        goal: `no event-loop stall over ${GOAL_STALL_MS} ms (idle and serving, up to ${last.n} calls)`,
        figure: `${fmt(maxStall)} ms (start-up: ${fmt(maxStartupStall)} ms)`,
        pass: maxStall <= GOAL_STALL_MS,
      },
    ],
  }
}
