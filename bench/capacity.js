// Section "capacity": what one ask and its click cost `askbridge serve`, on SQLite and on PostgreSQL (one
// replica), the figures docs/capacity.md builds its model on: CPU ms per ask+click (the whole process, and
// its main thread), bytes written per ask+click, and on PostgreSQL the round trips, the bytes sent and the
// connections one replica holds. The PostgreSQL connections go through a counting proxy in this process
// (it reads the protocol's message types: a simple Query or an extended-protocol Sync is one round trip).
// The agent asks over `POST /v1/ask` (blocking) and a person answers in the web inbox (the only
// destination), CONCURRENCY cycles at a time.

import { readFileSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import {
  cpuMs,
  fmt,
  loopCpuMs,
  pgServerCpuByPid,
  pgServerCpuSince,
  pool,
  sleep,
  startServe,
  table,
} from './lib.js'
import { pgSchema } from './replicas.js'

const CYCLES = Number(process.env.BENCH_CAPACITY_CYCLES ?? 1000)
const WARMUP = 50
const CONCURRENCY = 8
const PG_URL = process.env.ASKBRIDGE_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test'
const question = (i) => ({
  id: 'go',
  question: `Deploy build ${i}?`,
  options: [{ label: 'Yes' }, { label: 'No' }],
})

/** A TCP proxy to PostgreSQL that counts round trips, bytes and connections. */
async function countingProxy(host, port) {
  const counts = { roundTrips: 0, bytesToServer: 0, bytesFromServer: 0, open: 0, maxOpen: 0, opened: 0 }
  const server = createServer((client) => {
    counts.open++
    counts.opened++
    counts.maxOpen = Math.max(counts.maxOpen, counts.open)
    const upstream = createConnection({ host, port })
    let buffered = Buffer.alloc(0)
    let started = false
    client.on('data', (chunk) => {
      counts.bytesToServer += chunk.length
      buffered = Buffer.concat([buffered, chunk])
      for (;;) {
        if (!started) {
          // The start-up message (and an SSL request before it) has no type byte.
          if (buffered.length < 4) break
          const len = buffered.readInt32BE(0)
          if (buffered.length < len) break
          const code = buffered.readInt32BE(4)
          buffered = buffered.subarray(len)
          if (code !== 80877103) started = true // not an SSLRequest: the start-up itself
          continue
        }
        if (buffered.length < 5) break
        const len = buffered.readInt32BE(1)
        if (buffered.length < 1 + len) break
        const type = String.fromCharCode(buffered[0])
        if (type === 'Q' || type === 'S') counts.roundTrips++
        buffered = buffered.subarray(1 + len)
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      counts.bytesFromServer += chunk.length
      client.write(chunk)
    })
    const close = () => {
      if (client.destroyed && upstream.destroyed) return
      client.destroy()
      upstream.destroy()
      counts.open--
    }
    client.on('close', close)
    upstream.on('close', close)
    client.on('error', () => {})
    upstream.on('error', () => {})
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: server.address().port, counts, close: () => new Promise((r) => server.close(r)) }
}

/** Bytes this process has caused to be written to storage (Linux /proc/PID/io). */
function writeBytes(pid) {
  return Number(/write_bytes:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1])
}

/** Clicks refused because the card was not up yet (they are in the figures too). */
let early = 0

/** One ask and its click: the blocking ask, its card in the inbox, a person's choice. */
async function cycle(url, cookie, callId) {
  const asking = fetch(`${url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId, questions: [question(callId)] }),
  }).then((res) => res.json())
  // The card is in the inbox once the ask is under way; a click before it is refused, and tried again.
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${url}/inbox/api/cards/${callId}/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({
        action: { type: 'choose', questionId: 'go', label: 'Yes' },
        person: { name: 'Ana' },
      }),
    })
    const body = await res.json()
    if (body.ok) {
      early += attempt
      break
    }
    if (attempt > 200) throw new Error(`click on ${callId}: ${JSON.stringify(body)}`)
    await sleep(25)
  }
  const answer = await asking
  if (answer.answers?.[0]?.selected?.[0] !== 'Yes')
    throw new Error(`ask ${callId}: ${JSON.stringify(answer)}`)
}

async function measure({ name, db, prefix, counts, schema }) {
  const server = await startServe({ ASKBRIDGE_DB: db })
  try {
    // The person acts in the inbox, through the sign-in link `serve` printed.
    const cookie = await server.inboxCookie()
    await pool(
      Array.from({ length: WARMUP }, (_, i) => `${prefix}-warm-${i}`),
      CONCURRENCY,
      (id) => cycle(server.url, cookie, id),
    )
    await sleep(500)
    early = 0
    const server0 = schema ? pgServerCpuByPid() : undefined
    const before = {
      cpu: cpuMs(server.pid),
      loop: loopCpuMs(server.pid),
      written: writeBytes(server.pid),
      ...(counts ? { ...counts } : {}),
      ...(schema ? await schemaFigures(schema) : {}),
    }
    await pool(
      Array.from({ length: CYCLES }, (_, i) => `${prefix}-${i}`),
      CONCURRENCY,
      (id) => cycle(server.url, cookie, id),
    )
    // Let the last commits, checkpoints and statistics land.
    await sleep(1500)
    const serverCpu = server0 ? pgServerCpuSince(server0) : undefined
    const after = {
      cpu: cpuMs(server.pid),
      loop: loopCpuMs(server.pid),
      written: writeBytes(server.pid),
      ...(counts ? { ...counts } : {}),
      ...(schema ? await schemaFigures(schema) : {}),
    }
    const per = (key) => (after[key] - before[key]) / CYCLES
    return {
      name,
      early: early / CYCLES,
      cpu: per('cpu'),
      loop: per('loop'),
      written: per('written'),
      ...(counts
        ? {
            roundTrips: per('roundTrips'),
            bytesToServer: per('bytesToServer'),
            bytesFromServer: per('bytesFromServer'),
            connections: counts.maxOpen,
          }
        : {}),
      ...(schema ? { rows: per('rows'), stored: per('stored'), serverCpu: serverCpu / CYCLES } : {}),
    }
  } finally {
    await server.stop()
  }
}

/** Rows written (inserted or updated) in the schema's tables, and their size on disk. */
async function schemaFigures(schema) {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    const { rows } = await client.query(
      `SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0)::bigint AS rows,
              coalesce(sum(pg_total_relation_size(relid)), 0)::bigint AS stored
       FROM pg_stat_user_tables WHERE schemaname = $1`,
      [schema],
    )
    return { rows: Number(rows[0].rows), stored: Number(rows[0].stored) }
  } finally {
    await client.end()
  }
}

export default async function capacity({ dir, log }) {
  const sqlite = await measure({ name: 'SQLite', db: join(dir, 'capacity.db'), prefix: 's' })
  log(`SQLite: ${fmt(sqlite.cpu)} CPU ms per ask+click`)
  const schema = await pgSchema('capacity')
  const target = new URL(PG_URL)
  const proxy = await countingProxy(target.hostname, Number(target.port || 5432))
  let postgres
  try {
    const url = new URL(schema.url)
    url.host = `127.0.0.1:${proxy.port}`
    postgres = await measure({
      name: 'PostgreSQL (one replica)',
      db: url.toString(),
      prefix: 'p',
      counts: proxy.counts,
      schema: schema.schema,
    })
    log(`PostgreSQL: ${fmt(postgres.cpu)} CPU ms, ${fmt(postgres.roundTrips)} round trips per ask+click`)
  } finally {
    await proxy.close()
    await schema.drop()
  }
  const markdown = `${CYCLES} ask+click cycles per store after ${WARMUP} warm-up ones, ${CONCURRENCY} at a time: a blocking
\`POST /v1/ask\` to \`askbridge serve\` (its own process, the web inbox as the only destination) and a
person's choice in the inbox answering it; each cycle ends when the agent has its answer. CPU is the
process's user+system time (every thread) and its main thread's alone (/proc/PID/stat and schedstat);
"written" is what the process caused to be written to storage (/proc/PID/io \`write_bytes\`: on SQLite the
WAL, its syncs and checkpoints; on PostgreSQL the server writes, not the bridge). On PostgreSQL every
connection goes through a counting proxy: a round trip is a simple Query or an extended-protocol Sync the
bridge sends; the server's CPU is that of every PostgreSQL process on this machine (/proc/PID/stat:
the replica's backends, the WAL writer, the checkpointer; nothing else uses the server meanwhile); rows are the schema's inserted and updated rows (pg_stat_user_tables) and "stored" the
growth of its tables and indexes on disk; connections are the most the replica held at once (its pool
and its LISTEN connection).

${table(
  ['per ask+click', 'SQLite', 'PostgreSQL (one replica)'],
  [
    ['CPU ms (process)', fmt(sqlite.cpu), fmt(postgres.cpu)],
    ['clicks refused as too early (card not up yet; in the figures)', fmt(sqlite.early), fmt(postgres.early)],
    ['CPU ms (main thread)', fmt(sqlite.loop), fmt(postgres.loop)],
    ['bytes written by the bridge process', fmt(sqlite.written), fmt(postgres.written)],
    ['CPU ms of the PostgreSQL server (all its processes)', '', fmt(postgres.serverCpu)],
    ['PostgreSQL round trips', '', fmt(postgres.roundTrips)],
    [
      'bytes sent to PostgreSQL / received',
      '',
      `${fmt(postgres.bytesToServer)} / ${fmt(postgres.bytesFromServer)}`,
    ],
    ['rows inserted or updated', '', fmt(postgres.rows)],
    ['bytes stored (tables and indexes)', '', fmt(postgres.stored)],
    ['connections held by the replica (most at once)', '', String(postgres.connections)],
  ],
)}`
  return {
    markdown,
    goals: [
      {
        goal: 'capacity figures measured (docs/capacity.md)',
        figure: `SQLite ${fmt(sqlite.cpu)} CPU ms, PostgreSQL ${fmt(postgres.cpu)} CPU ms (the server ${fmt(postgres.serverCpu)} more) and ${fmt(postgres.roundTrips)} round trips per ask+click`,
        pass: true,
      },
    ],
  }
}
