// Preloaded into `askbridge serve` by the history section (`node --import ./bench/stall-probe.js`):
// measures the event loop's longest stall. On SIGUSR2 it appends, for the time since the last
// signal (or since start), {maxMs, p99Ms, cpuMsAround, maxGcMs} to BENCH_STALL_FILE and starts over:
// - maxMs, p99Ms: `monitorEventLoopDelay` (5 ms resolution);
// - cpuMsAround: the process's CPU time (every thread, from getrusage) over the check interval
//   (about 1 s) in which the longest stall fell. Less CPU than the stall lasted means the process
//   spent part of it waiting for a core (this machine has two, shared with the database and the
//   bench), not running its own work. Checked once a second, so the probe adds almost no wake-ups;
// - maxGcMs: the longest garbage-collection pause.
import { appendFileSync } from 'node:fs'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { ownCpuMs } from './lib.js'

const CHECK_MS = 1000
const histogram = monitorEventLoopDelay({ resolution: 5 })
histogram.enable()

let worstMs = 0
let cpuMsAround = 0
let lastCpu = ownCpuMs()
/** Did the longest stall so far fall in the interval just ended? Then keep that interval's CPU. */
const check = () => {
  const cpu = ownCpuMs()
  const max = histogram.max / 1e6
  if (max > worstMs) {
    worstMs = max
    cpuMsAround = cpu - lastCpu
  }
  lastCpu = cpu
}
setInterval(check, CHECK_MS).unref()

let maxGcMs = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) maxGcMs = Math.max(maxGcMs, entry.duration)
}).observe({ entryTypes: ['gc'] })

process.on('SIGUSR2', () => {
  check()
  const line = { maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6, cpuMsAround, maxGcMs }
  appendFileSync(process.env.BENCH_STALL_FILE, `${JSON.stringify(line)}\n`)
  histogram.reset()
  worstMs = 0
  cpuMsAround = 0
  maxGcMs = 0
})
