// Builds side by side: the click section's rounds with two or more `askbridge serve`s beside a bare
// Bolt app, to tell whether a change to the click path helps. Not a section of run.js (it writes no
// doc): one run of the click section cannot tell a 5% change from this machine's noise, two builds
// clicked in the same rotating rounds can.
//   AB_VARIANTS='{"before":{"AB_CHECKOUT":"/tmp/before"},"after":{}}' node bench/ab-click.js
// Each variant is a name and the environment its serve gets; AB_CHECKOUT runs another checkout's
// build (`git worktree add /tmp/before HEAD~1`, link node_modules, `npx tsc -p tsconfig.build.json`
// there); AB_PROFILE names a directory for the serve's V8 CPU profile (`--cpu-prof`, which NODE_OPTIONS
// refuses) and its turns (`turns-<name>.json`, for bench/profile-turns.js); AB_NODE_ARGS, Node flags
// for the serve that NODE_OPTIONS refuses (`--min-semi-space-size=8`, `--single-threaded-gc`),
// space-separated. `npm run bench -- click` (or `npx tsc -p tsconfig.bench.json`) builds dist-bench
// first.
// BENCH_CLICKS (default 1000) clicks per server, AB_PER (default 50) per round. Prints one line a server
// (the ack), one a third of the rounds (each server's ack p99 and loop CPU in it: how much a run drifts
// as V8 warms up and the machine's noise comes and goes), then one a build (click → the waiting agent
// has its answer) beside Bolt's click → its listener runs, which the click section's goal compares it
// with. AB_STORE=1 adds the Bolt app with a durable store (bench/click-peer.js bolt-store), whose
// agent's wait is timed like askbridge's.
// AB_THREADS=1 adds a line a server: its CPU per click during its turns, by thread (the main thread,
// then the others in the order they started: V8's helpers first, SQLite's writer thread later).
// AB_GC=1 logs each build's event-loop collections (bench/gc-log.js) and adds a line a build: the
// collections that fell in its turns (how many, how long in all, the forced ones), then its five
// slowest turns, each with its slowest ack and the collections during it. A run's p99 comes from its
// few slowest turns; this tells whether a pause of the bridge's own made them slow.
// A build on PostgreSQL (ASKBRIDGE_DB=postgres://…?schema=…, a schema of its own, made fresh for
// each run) gets one more line: the local PostgreSQL server's CPU during its turns, per click, by
// process (its backends, the WAL writer, …).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FakeSlack } from '../dist-bench/test/fakes/slack/server.js'
import {
  boltClicks,
  listenerTimes,
  openCards,
  sinceSent,
  startAskbridge,
  startClicker,
  startPeer,
  storeTurns,
} from './click.js'
import {
  fmt,
  loopSchedstat,
  monotonicMs,
  percentile,
  pgServerCpuByPid,
  pgServerCpuDeltas,
  summarize,
  threadCpu,
  until,
} from './lib.js'

const CLICKS = Number(process.env.BENCH_CLICKS ?? 1000)
const PER = Number(process.env.AB_PER ?? 50)
const ROUNDS = Math.ceil(CLICKS / PER)
const WARMUP = 100
const variants = JSON.parse(process.env.AB_VARIANTS ?? '{"A":{},"B":{}}')
const builds = Object.keys(variants)
const store = process.env.AB_STORE === '1'
const names = [...builds, 'bolt', ...(store ? ['store'] : [])]
const threads = process.env.AB_THREADS === '1'
const gcLogs = process.env.AB_GC === '1' ? {} : undefined
const GC_PRELOAD = fileURLToPath(new URL('./gc-log.js', import.meta.url))

const fake = await FakeSlack.start({ rateLimits: false })
const clicker = startClicker(fake.options.signingSecret)
const servers = {}
const dirs = []
try {
  for (const [name, { AB_CHECKOUT, AB_PROFILE, AB_NODE_ARGS, ...env }] of Object.entries(variants)) {
    const dir = mkdtempSync(join(tmpdir(), `askbridge-ab-${name}-`))
    dirs.push(dir)
    const nodeArgs = AB_NODE_ARGS ? AB_NODE_ARGS.split(' ') : []
    if (gcLogs) {
      gcLogs[name] = join(dir, 'gc.log')
      nodeArgs.push(`--import=${GC_PRELOAD}`)
      env.BENCH_GC_LOG = gcLogs[name]
    }
    servers[name] = await startAskbridge(fake, dir, {
      checkout: AB_CHECKOUT,
      profileDir: AB_PROFILE,
      nodeArgs,
      env,
    })
  }
  servers.bolt = await startPeer('bolt', fake)
  if (store) {
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-ab-store-'))
    dirs.push(dir)
    servers.store = await startPeer('bolt-store', fake, { BENCH_STORE: join(dir, 'store.db') })
  }
  const url = (name) => `${servers[name].url}/slack/events`
  const latencies = Object.fromEntries(names.map((name) => [name, []]))
  const cpu = Object.fromEntries(names.map((name) => [name, 0]))
  const waited = Object.fromEntries(names.map((name) => [name, 0]))
  // The PostgreSQL server's CPU during each server's turns, by what its processes do.
  const pgCpu = Object.fromEntries(names.map((name) => [name, new Map()]))
  // With AB_THREADS=1: each server's CPU during its turns, by thread.
  const byThread = Object.fromEntries(names.map((name) => [name, new Map()]))
  // Click → the waiting agent has read its answer (each build's blocking `POST /v1/ask`).
  const toAnswer = Object.fromEntries(names.map((name) => [name, []]))
  // Each turn's acks and loop CPU, to compare the run's thirds (warm-up, drift within a run), and
  // when it began and ended on the monotonic clock (that of the GC log and of CPU profiles).
  const turnsByRound = []
  let templates
  let payloads
  for (const name of builds) {
    const warm = await openCards(fake, servers[name].url, `${name}-warm`, WARMUP)
    templates ??= warm.requests
    payloads ??= warm.payloads
    await clicker.clickAll(url(name), warm.requests)
    await Promise.all(warm.answers)
  }
  await clicker.clickAll(url('bolt'), templates)
  const turns = store ? storeTurns(servers.store) : undefined
  await turns?.warmUp(clicker, url('store'), payloads, WARMUP)
  await fetch(`${servers.bolt.url}/listened`).then((res) => res.arrayBuffer())
  for (let round = 0; round < ROUNDS; round++) {
    // Every build's cards for the round first (each serve paces its own posts), then the turns.
    const cards = Object.fromEntries(
      await Promise.all(
        builds.map(async (name) => [
          name,
          await openCards(fake, servers[name].url, `${name}-r${round}`, PER),
        ]),
      ),
    )
    // Bolt's clicks carry an action_ts each, to match each with its listener run.
    const bolt = boltClicks(payloads, PER)
    const storeClicks = boltClicks(payloads, PER)
    const order = names.map((_, i) => names[(i + round) % names.length])
    for (const name of order) {
      const requests = cards[name]?.requests ?? (name === 'store' ? storeClicks : bolt).requests
      const storeAnswers = name === 'store' ? await turns.wait(storeClicks) : undefined
      const before = loopSchedstat(servers[name].pid)
      const pgBefore = pgServerCpuByPid()
      const threadsBefore = threads ? threadCpu(servers[name].pid) : undefined
      const from = monotonicMs()
      const result = await clicker.clickAll(url(name), requests)
      const to = monotonicMs()
      const after = loopSchedstat(servers[name].pid)
      const spentCpu = after.onCpu - before.onCpu
      cpu[name] += spentCpu
      waited[name] += after.waiting - before.waiting
      turnsByRound.push({ round, name, latencies: result.latencies, cpu: spentCpu, from, to })
      if (threadsBefore) {
        for (const [thread, ms] of threadCpu(servers[name].pid)) {
          const spent = ms - (threadsBefore.get(thread) ?? 0)
          byThread[name].set(thread, (byThread[name].get(thread) ?? 0) + spent)
        }
      }
      for (const [pid, spent] of pgServerCpuDeltas(pgBefore)) {
        if (spent > 0) {
          const role = pgRole(pid)
          pgCpu[name].set(role, (pgCpu[name].get(role) ?? 0) + spent)
        }
      }
      latencies[name].push(...result.latencies)
      if (result.failed) console.error(`${name}: ${result.failed} clicks failed`)
      if (cards[name]) {
        const answers = await Promise.all(cards[name].answers)
        toAnswer[name].push(
          ...sinceSent(
            result.sent,
            answers.map((r) => r.at),
          ),
        )
        await until(
          () => cards[name].callIds.every((id) => fake.liveActionIds(id).length === 0),
          'the answered cards updated',
        )
      } else if (storeAnswers) {
        toAnswer.store.push(...sinceSent(result.sent, await turns.done(storeClicks, storeAnswers)))
      } else {
        toAnswer.bolt.push(...(await listenerTimes(servers.bolt, bolt, result.sent)))
      }
    }
    console.error(`round ${round + 1}/${ROUNDS}: ${order.join(', ')}`)
  }
  for (const [name, { AB_PROFILE }] of Object.entries(variants)) {
    if (!AB_PROFILE) continue
    const turns = turnsByRound.filter((t) => t.name === name).map((t) => [t.from, t.to])
    writeFileSync(join(AB_PROFILE, `turns-${name}.json`), JSON.stringify(turns))
  }
  const bolt = summarize(latencies.bolt)
  for (const name of names) {
    const s = summarize(latencies[name])
    const p90 = percentile(
      [...latencies[name]].sort((a, b) => a - b),
      90,
    )
    console.log(
      `${name.padEnd(8)} n ${s.n}  p50 ${fmt(s.p50)}  p90 ${fmt(p90)}  p99 ${fmt(s.p99)}  max ${fmt(s.max)}  ` +
        `p50/Bolt ${(s.p50 / bolt.p50).toFixed(2)}  p99/Bolt ${(s.p99 / bolt.p99).toFixed(2)}  ` +
        `loop CPU ms/click ${fmt(cpu[name] / s.n)}  loop waited for a core ms/click ${fmt(waited[name] / s.n)}`,
    )
  }
  for (let third = 0; third < 3; third++) {
    const inThird = turnsByRound.filter((t) => Math.floor((t.round * 3) / ROUNDS) === third)
    const of = (name) => {
      const mine = inThird.filter((t) => t.name === name)
      const acks = mine.flatMap((t) => t.latencies)
      return { p99: summarize(acks).p99, cpu: mine.reduce((sum, t) => sum + t.cpu, 0) / acks.length }
    }
    const boltThird = of('bolt')
    console.log(
      `third ${third + 1} of the rounds: ` +
        names
          .map((name) => {
            const t = of(name)
            return `${name} ack p99 ${fmt(t.p99)} (${(t.p99 / boltThird.p99).toFixed(2)}× Bolt's), loop CPU ms/click ${fmt(t.cpu)}`
          })
          .join('; '),
    )
  }
  const listener = summarize(toAnswer.bolt)
  for (const name of names) {
    const s = summarize(toAnswer[name])
    const what = name === 'bolt' ? 'click → listener' : 'click → answer  '
    console.log(
      `${name.padEnd(8)} ${what}  n ${s.n}  p50 ${fmt(s.p50)}  p99 ${fmt(s.p99)}  max ${fmt(s.max)}  ` +
        `p99/Bolt's listener ${(s.p99 / listener.p99).toFixed(2)}`,
    )
  }
  for (const name of names) {
    const total = [...pgCpu[name].values()].reduce((a, b) => a + b, 0)
    if (total === 0) continue
    const roles = [...pgCpu[name]].sort((a, b) => b[1] - a[1])
    console.log(
      `${name.padEnd(8)} PostgreSQL server CPU ms/click ${fmt(total / latencies[name].length)}: ` +
        roles.map(([role, ms]) => `${role} ${fmt(ms / latencies[name].length)}`).join(', '),
    )
  }
  for (const name of threads ? names : []) {
    const perClick = [...byThread[name]].sort((a, b) => b[1] - a[1])
    const total = perClick.reduce((sum, [, ms]) => sum + ms, 0)
    console.log(
      `${name.padEnd(8)} CPU ms/click by thread ${fmt(total / latencies[name].length)}: ` +
        perClick.map(([thread, ms]) => `${thread} ${fmt(ms / latencies[name].length)}`).join(', '),
    )
  }
  for (const name of gcLogs ? builds : []) console.log(gcInTurns(name, gcLogs[name], turnsByRound))
} finally {
  clicker.stop()
  for (const server of Object.values(servers)) await server.stop()
  await fake.close()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}

/** A build's collections (bench/gc-log.js) that overlapped its turns, and its five slowest turns with theirs. */
function gcInTurns(name, file, turns) {
  const gcs = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
  const mine = turns.filter((t) => t.name === name)
  const during = (t) => gcs.filter((gc) => gc.at <= t.to && gc.at + gc.ms >= t.from)
  const inTurns = mine.flatMap(during)
  const sum = (list) => fmt(list.reduce((ms, gc) => ms + gc.ms, 0))
  const full = inTurns.filter((gc) => gc.kind !== 'minor')
  const forced = inTurns.filter((gc) => gc.forced)
  const slowest = [...mine].sort((a, b) => Math.max(...b.latencies) - Math.max(...a.latencies)).slice(0, 5)
  const describe = (t) => {
    const list = during(t).map((gc) => `${gc.kind}${gc.forced ? ' (forced)' : ''} ${fmt(gc.ms)}`)
    return `round ${t.round + 1} ${fmt(Math.max(...t.latencies))} ms: ${list.join(', ') || 'no collection'}`
  }
  return (
    `${name.padEnd(8)} collections in its turns: ${inTurns.length - full.length} minor (${sum(inTurns.filter((gc) => gc.kind === 'minor'))} ms), ` +
    `${full.length} other (${sum(full)} ms), ${forced.length} forced; of ${gcs.length} in the run ` +
    `(${gcs.filter((gc) => gc.forced).length} forced). ` +
    `Slowest turns: ${slowest.map(describe).join('; ')}`
  )
}

/** What a PostgreSQL process does, from its title: a backend's client address and port are dropped. */
function pgRole(pid) {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
    return title.replace(/^postgres: (\d+\/main: )?/, '').replace(/ \d+\.\d+\.\d+\.\d+\(\d+\).*$/, ' backend')
  } catch {
    return 'gone'
  }
}
