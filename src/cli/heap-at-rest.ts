import { performance } from 'node:perf_hooks'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Logger } from '../log.js'

// Hands V8's memory back once `askbridge serve` goes quiet after a burst.
//
// Under load V8 grows its young generation to two 16 MiB semi-spaces and promotes the objects of
// requests in flight to the old generation, where they die. It keeps all of that until it collects
// while allocation is low, and a bridge at rest allocates almost nothing, so it seldom does:
// 10,000 open questions cost about 1 MiB of live heap, yet RSS stayed 30 to 60 MiB above what it
// was before them (docs/capacity.md, Memory). So, once the bridge has been quiet for two whole
// checks in a row and the heap has grown, collections run, one a check (HeapAtRest). Quiet is an
// event loop under 5% busy that also saw no question asked, answered, continued or ended: light,
// bursty use (a few asks and clicks every few seconds) keeps the loop under 5% busy, and a full
// collection forced then stalls the next burst's clicks for 30 to 50 ms. A burst still going never
// sees one, and a bridge at rest runs none once its heap is back down.

/** When the checks run and what counts as quiet. */
export interface HeapAtRestOptions {
  /** How often the event loop and the heap are looked at. @default 5000 */
  checkMs?: number
  /** Checks in a row the event loop must have been quiet for. @default 2 */
  quietChecks?: number
  /** Event-loop utilization below which a check counts as quiet. @default 0.05 */
  quietUtilization?: number
  /**
   * A running count of the bridge's work (questions asked, answered, continued, ended): a check
   * during which it moved is not quiet, however idle the event loop was. @default none counted
   */
  work?: () => number
}

/** The heap as V8 reports it. */
export interface HeapSpaces {
  /** Committed bytes of V8's young generation (both semi-spaces). */
  newSpace: number
  /** Committed bytes of V8's old generation. */
  oldSpace: number
}

/** What a check reads: the heap, the event loop's utilization and the bridge's work since the last. */
export interface HeapReading extends HeapSpaces {
  utilization: number
  /** Questions asked, answered, continued or ended since the last check. */
  work: number
}

const MIB = 1024 * 1024
/** Bytes in MiB, to a tenth (for the log). */
const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10
/** A young generation at or under this is at its start size (V8 starts it at 1 MiB). */
const NEW_SPACE_AT_REST = 4 * MIB
/** Old-generation growth since the last collection that is worth a collection by itself. */
const OLD_SPACE_GROWTH = 16 * MIB

/** What a quiet check does: nothing, a full collection, or a collection of the young generation. */
export type HeapStep = 'none' | 'major' | 'minor'

/** Full collections per growth of the old generation: the second compacts what the first left. */
const MAJORS = 2
/** Young-generation collections tried, one a check, before V8's refusal to shrink it is accepted. */
const MINORS = 3

/**
 * The decision, apart from V8 and the clock: {@link HeapAtRest.check} takes one reading and says
 * what to do now (at most one collection a check, so no check stalls the event loop for more than
 * one); {@link HeapAtRest.collected} takes the reading after it.
 *
 * A full collection frees the dead objects of the old generation, but only empty pages go back to
 * the system: the second, a check later, compacts the pages the first left mostly empty. V8
 * shrinks its young generation in a collection only when allocation has been low for some seconds,
 * and not always in the first: a young-generation collection (about a millisecond once the bridge
 * is quiet) asks again, a few times at most.
 */
export class HeapAtRest {
  private quiet = 0
  private majors = 0
  private minors = MINORS
  private oldFloor: number

  private readonly quietChecks: number
  private readonly quietUtilization: number

  constructor(start: Pick<HeapSpaces, 'oldSpace'>, options: HeapAtRestOptions = {}) {
    this.oldFloor = start.oldSpace + OLD_SPACE_GROWTH
    this.quietChecks = options.quietChecks ?? 2
    this.quietUtilization = options.quietUtilization ?? 0.05
  }

  check(reading: HeapReading): HeapStep {
    this.quiet = reading.utilization < this.quietUtilization && reading.work === 0 ? this.quiet + 1 : 0
    // Back at its start size (in our collection or one V8 ran): when it grows, it is asked again.
    if (reading.newSpace <= NEW_SPACE_AT_REST) this.minors = MINORS
    if (this.quiet < this.quietChecks) return 'none'
    if (this.majors === 0 && reading.oldSpace > this.oldFloor) this.majors = MAJORS
    if (this.majors > 0) return 'major'
    if (reading.newSpace > NEW_SPACE_AT_REST && this.minors > 0) return 'minor'
    return 'none'
  }

  /** After a collection: what it left is where growth is counted from. */
  collected(step: Exclude<HeapStep, 'none'>, after: HeapSpaces): void {
    if (step === 'major') {
      this.majors -= 1
      this.oldFloor = after.oldSpace + OLD_SPACE_GROWTH
    } else {
      this.minors -= 1
    }
  }
}

/** The heap as V8 reports it now. */
export function heapSpaces(): HeapSpaces {
  let newSpace = 0
  let oldSpace = 0
  for (const space of v8.getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') newSpace = space.space_size
    else if (space.space_name === 'old_space') oldSpace = space.space_size
  }
  return { newSpace, oldSpace }
}

/** V8's `gc()`: a full collection, or with `{type: 'minor'}` one of the young generation. */
type Gc = (options?: { type: 'minor' }) => void

/**
 * V8's `gc()`: the global one when node runs with `--expose-gc`; otherwise the flag is set now
 * and the function taken from a new context (V8 installs it only in contexts created after the
 * flag is set, so the process's own global stays as it was). Undefined where V8 refuses the flag.
 */
export function exposedGc(): Gc | undefined {
  const global = (globalThis as { gc?: unknown }).gc
  if (typeof global === 'function') return global as Gc
  v8.setFlagsFromString('--expose-gc')
  const gc: unknown = runInNewContext('typeof gc === "function" ? gc : undefined')
  return typeof gc === 'function' ? (gc as Gc) : undefined
}

/** Start the checks (an unref'd timer: it never keeps the process alive); stop() ends them. */
export function returnHeapAtRest(log: Logger, options: HeapAtRestOptions = {}): { stop(): void } {
  const gc = exposedGc()
  if (gc === undefined) {
    log.warn('V8 refused --expose-gc: memory grown under load is returned only when V8 decides to')
    return { stop() {} }
  }
  const decision = new HeapAtRest(heapSpaces(), options)
  const work = options.work ?? (() => 0)
  let last = performance.eventLoopUtilization()
  let lastWork = work()
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization()
    const done = work()
    const reading = {
      utilization: performance.eventLoopUtilization(now, last).utilization,
      work: done - lastWork,
      ...heapSpaces(),
    }
    last = now
    lastWork = done
    const step = decision.check(reading)
    if (step === 'none') return
    const started = performance.now()
    gc(step === 'major' ? undefined : { type: 'minor' })
    const after = heapSpaces()
    decision.collected(step, after)
    log.debug('heap collected at rest', {
      step,
      ms: Math.round(performance.now() - started),
      newSpaceMiB: [mib(reading.newSpace), mib(after.newSpace)],
      oldSpaceMiB: [mib(reading.oldSpace), mib(after.oldSpace)],
    })
  }, options.checkMs ?? 5000)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
