// Section "open-asks": `askbridge serve` holding 10k open timed asks: its RSS, and how long a new
// ask takes then, beside the same figures with none open.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fmt, mib, pool, rssOf, sleep, startServe, summarize, table } from './lib.js'

const OPEN = Number(process.env.BENCH_OPEN_ASKS ?? 10_000)
const PROBES = Number(process.env.BENCH_OPEN_PROBES ?? 300)
const GOAL_MIB = 128
const CONCURRENCY = 16
const question = (i) => ({
  id: 'go',
  question: `Deploy build ${i} to staging?`,
  options: [{ label: 'Yes' }, { label: 'No' }],
})

/** A timed ask whose window closes at once: the answer is `{pending: true}` and the call stays open. */
async function timedAsk(url, callId) {
  const t = performance.now()
  const res = await fetch(`${url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId, timeoutMs: 1, questions: [question(callId)] }),
  })
  const body = await res.json()
  if (res.status !== 200 || body.pending !== true)
    throw new Error(`ask ${callId}: ${res.status} ${JSON.stringify(body)}`)
  return performance.now() - t
}

/** PROBES new asks one after another; their latencies. */
async function probe(url, prefix) {
  const latencies = []
  for (let i = 0; i < PROBES; i++) latencies.push(await timedAsk(url, `${prefix}-${i}`))
  return summarize(latencies)
}

async function settledRss(pid) {
  await sleep(2000)
  return rssOf(pid)
}

export default async function openAsks({ dir, log }) {
  const server = await startServe({ ASKBRIDGE_DB: join(dir, 'open.db') })
  try {
    await probe(server.url, 'warm')
    const emptyRss = await settledRss(server.pid)
    const empty = await probe(server.url, 'empty')
    const started = performance.now()
    const ids = Array.from({ length: OPEN }, (_, i) => `open-${i}`)
    await pool(ids, CONCURRENCY, (id) => timedAsk(server.url, id))
    const openSeconds = (performance.now() - started) / 1000
    log(`${OPEN} asks opened in ${Math.round(openSeconds)} s`)
    const fullRss = await settledRss(server.pid)
    const full = await probe(server.url, 'full')
    const afterRss = rssOf(server.pid)
    const markdown = `\`askbridge serve\` (the CLI, its own process, SQLite with the default durability, the web inbox
as the only destination) is given ${OPEN} timed asks over \`POST /v1/ask\` (${CONCURRENCY} at a time, ${fmt(openSeconds)} s in
all), each with \`timeoutMs: 1\`: each answers \`{"pending": true}\` and its question stays open and answerable
(a late answer still reaches the agent). RSS is read from /proc 2 s after the last ask. "A new ask" is ${PROBES}
more such asks one after another, timed from sending to the whole \`pending\` answer read; the first row is
the same with no other question open.

${table(
  ['open questions', 'RSS MiB', 'new ask p50 ms', 'new ask p99 ms', 'max ms'],
  [
    [0, fmt(mib(emptyRss)), fmt(empty.p50), fmt(empty.p99), fmt(empty.max)],
    [OPEN, fmt(mib(fullRss)), fmt(full.p50), fmt(full.p99), fmt(full.max)],
  ],
)}

RSS after the last probe: ${fmt(mib(afterRss))} MiB.`
    return {
      markdown,
      goals: [
        {
          goal: `${OPEN} open asks under ${GOAL_MIB} MiB RSS`,
          figure: `${fmt(mib(fullRss))} MiB (new ask p99 ${fmt(full.p99)} ms, ${fmt(empty.p99)} ms with none open)`,
          pass: mib(Math.max(fullRss, afterRss)) < GOAL_MIB,
        },
      ],
    }
  } finally {
    await server.stop()
  }
}
