// Shared measuring tools for the bench sections (see run.js for how a section plugs in).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { cpus } from 'node:os'
import { resolve } from 'node:path'

/** The value below which `p` percent of the sorted samples fall (nearest rank). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

/** p50, p99 and max of a list of latencies (ms). */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  }
}

/** A number for a table: 3 decimals under 1, one decimal above. */
export function fmt(n) {
  if (!Number.isFinite(n)) return String(n)
  return n.toFixed(Math.abs(n) < 1 ? 3 : 1)
}

export const mib = (bytes) => bytes / 1024 / 1024

/**
 * The machine's monotonic clock in ms (Linux CLOCK_MONOTONIC through libuv): one clock for every
 * process, so a click sent by one and an answer read by another can be subtracted.
 */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6

export function machine() {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`
}

/** A markdown table from a header row and rows of cells. */
export function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n')
}

/** Run `task` over `items` with at most `limit` in flight. */
export async function pool(items, limit, task) {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      await task(items[i], i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

const root = new URL('..', import.meta.url).pathname

export async function freePort() {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  server.close()
  return port
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Poll `check` every 20 ms until it returns something truthy. */
export async function until(check, what, ms = 60_000) {
  const end = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/**
 * Start `node <args>` in the repository (or, with `command`, that executable file run as it is);
 * resolve once `readUrl(child)` gives its URL.
 */
export async function startChild(name, args, env, readUrl, command = process.execPath) {
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  // Passed through as before; `serve`'s inbox sign-in link is kept for benches that use the inbox.
  let inboxLink
  let stderr = ''
  child.stderr.on('data', (d) => {
    process.stderr.write(d)
    if (inboxLink) return
    stderr += d.toString()
    inboxLink = /Web inbox: (http:\/\/\S+\?login=\S+)/.exec(stderr)?.[1]
  })
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${name} exited with ${code} before it was ready`)
  })
  const url = await Promise.race([readUrl(child), exited])
  void exited.catch(() => {})
  return {
    url,
    pid: child.pid,
    /** The inbox cookie (`name=value`), from the one-time link `serve` printed. */
    async inboxCookie() {
      await until(() => inboxLink, `${name}'s inbox link`)
      const res = await fetch(inboxLink, { redirect: 'manual' })
      return res.headers.get('set-cookie')?.split(';')[0] ?? ''
    },
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    },
  }
}

/**
 * `askbridge serve` (the CLI) as its own process on a free port, warnings and errors only;
 * `checkout`: another checkout's build instead of this one's (its own `dist/`). The command file is
 * run by this node, as the `#!` line of a user's `npx askbridge serve` runs it; `nodeArgs` (a
 * profiler's, V8's) go on that command line, before it (NODE_OPTIONS refuses some of them).
 */
export async function startServe(env, nodeArgs = [], checkout = '.') {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  // Node's own flags go on its command line: some (`--cpu-prof`) are refused in NODE_OPTIONS.
  return startChild(
    'askbridge serve',
    [...nodeArgs, resolve(root, checkout, 'bin/askbridge.js'), 'serve'],
    {
      ASKBRIDGE_PORT: String(port),
      ASKBRIDGE_LOG_LEVEL: 'warn',
      ...env,
    },
    () =>
      until(
        () =>
          fetch(`${url}/healthz`).then(
            (res) => res.ok && url,
            () => false,
          ),
        'askbridge serve to listen',
      ),
  )
}

/**
 * The process's main thread (its event loop, where every request is read) from Linux
 * /proc/PID/schedstat, in ms: `onCpu`, the time it has run; `waiting`, the time it was ready to run
 * but waited for a core (time on a run queue: the other processes and the process's own threads
 * took the cores it wanted). One read, so both are of the same instant.
 */
export function loopSchedstat(pid) {
  const [onCpu, waiting] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')
  return { onCpu: Number(onCpu) / 1e6, waiting: Number(waiting) / 1e6 }
}

/** CPU time the process's main thread has run, in ms (see `loopSchedstat`). */
export function loopCpuMs(pid) {
  return loopSchedstat(pid).onCpu
}

/**
 * CPU time (ms) of each thread of `pid`, from /proc/PID/task/TID/schedstat (ns): "main", then
 * "thread N" for the Nth other thread in the order they started (Node names all its threads
 * "node": V8's helpers start first, a worker thread such as SQLite's writer later).
 */
export function threadCpu(pid) {
  const byThread = new Map()
  const tids = readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .sort((a, b) => a - b)
  for (const [i, tid] of tids.entries()) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      byThread.set(tid === pid ? 'main' : `thread ${i}`, ns / 1e6)
    } catch {
      // The thread ended meanwhile.
    }
  }
  return byThread
}

/**
 * CPU time (ms) of every PostgreSQL server process on this machine, by pid (/proc/PID/stat; the
 * server's own processes, its WAL writer and checkpointer and a backend per connection). Nothing
 * else should use the local server meanwhile.
 */
export function pgServerCpuByPid() {
  const byPid = new Map()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.includes(' (postgres) ')) byPid.set(entry, statCpuMs(stat))
    } catch {
      // Gone meanwhile.
    }
  }
  return byPid
}

/** Each server process's CPU ms from `before` to now: a process started since counts from zero. */
export function pgServerCpuDeltas(before) {
  const deltas = new Map()
  for (const [pid, now] of pgServerCpuByPid()) deltas.set(pid, now - (before.get(pid) ?? 0))
  return deltas
}

/** The server's CPU ms from `before` to now (see {@link pgServerCpuDeltas}). */
export function pgServerCpuSince(before) {
  let ms = 0
  for (const spent of pgServerCpuDeltas(before).values()) ms += spent
  return ms
}

/** CPU time (ms) a process has used, from /proc/<pid>/stat (utime + stime, 100 ticks/s). */
export function cpuMs(pid) {
  return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'))
}

/** utime + stime of a /proc/<pid>/stat line, in ms. */
function statCpuMs(stat) {
  const fields = stat.split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** CPU time (ms) this process has used, all its threads. */
export function ownCpuMs() {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** Resident set size of a process, in bytes (Linux /proc). */
export function rssOf(pid) {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) * 1024
}
