// A preload (`node --import=bench/gc-log.js`) that appends each of the event loop's garbage
// collections to BENCH_GC_LOG as a JSON line: {at: when it began, in ms on the machine's monotonic
// clock (bench/lib.js monotonicMs, which every process reads alike), ms: how long the event loop
// stood still, kind: minor/major/incremental/weak, forced: asked for by the process (gc())}.
// bench/ab-click.js sets it for each build with AB_GC=1, to tell the collections that fell in a
// build's turns. Written as each batch of entries arrives, so a serve that is killed loses none
// already reported.
import { appendFileSync } from 'node:fs'
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { isMainThread } from 'node:worker_threads'

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
}

const file = process.env.BENCH_GC_LOG
// performance.now() and the monotonic clock tick alike; this is where the first starts on the second.
const origin = Number(process.hrtime.bigint()) / 1e6 - performance.now()
if (isMainThread && file) {
  new PerformanceObserver((list) => {
    const lines = list.getEntries().map((e) =>
      JSON.stringify({
        at: origin + e.startTime,
        ms: e.duration,
        kind: KINDS[e.detail.kind] ?? String(e.detail.kind),
        forced: (e.detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0,
      }),
    )
    appendFileSync(file, `${lines.join('\n')}\n`)
  }).observe({ entryTypes: ['gc'] })
}
