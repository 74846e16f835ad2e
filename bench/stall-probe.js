// Preloaded into `askbridge serve` by the history section (`node --import ./bench/stall-probe.js`):
// measures the event loop's longest stall. On SIGUSR2 it appends {maxMs, p99Ms} since the last
// signal (or since start) to BENCH_STALL_FILE and starts over.
import { appendFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const histogram = monitorEventLoopDelay({ resolution: 5 })
histogram.enable()
process.on('SIGUSR2', () => {
  const line = { maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6 }
  appendFileSync(process.env.BENCH_STALL_FILE, `${JSON.stringify(line)}\n`)
  histogram.reset()
})
