/** `askbridge serve` hands V8's memory back once it goes quiet after a burst, and only then. */
import { setImmediate as tick } from 'node:timers/promises'
import { expect, test } from 'vitest'
import {
  exposedGc,
  HeapAtRest,
  type HeapSpaces,
  heapSpaces,
  returnHeapAtRest,
} from '../../src/cli/heap-at-rest.js'
import type { Logger } from '../../src/log.js'

const MIB = 1024 * 1024
const reading = (utilization: number, newSpace: number, oldSpace: number, work = 0) => ({
  utilization,
  work,
  newSpace: newSpace * MIB,
  oldSpace: oldSpace * MIB,
})

test('collects after two quiet checks in a row once the young generation has grown, not before', () => {
  const d = new HeapAtRest({ oldSpace: 20 * MIB })
  expect(d.check(reading(0.9, 32, 30))).toBe('none') // busy
  expect(d.check(reading(0.01, 32, 30))).toBe('none') // quiet once
  expect(d.check(reading(0.3, 32, 30))).toBe('none') // busy again: starts over
  expect(d.check(reading(0.01, 32, 30))).toBe('none')
  expect(d.check(reading(0.049, 32, 30))).toBe('minor')
})

test('light, bursty work is not rest: a check that saw questions asked or answered starts over', () => {
  const d = new HeapAtRest({ oldSpace: 20 * MIB })
  // A few asks and clicks every few seconds: the event loop 2% busy, the heap grown.
  for (let i = 0; i < 10; i++) expect(d.check(reading(0.02, 32, 40, 50))).toBe('none')
  expect(d.check(reading(0.02, 32, 40, 0))).toBe('none')
  expect(d.check(reading(0.02, 32, 40, 1))).toBe('none') // one answer: starts over
  expect(d.check(reading(0.02, 32, 40, 0))).toBe('none')
  expect(d.check(reading(0.02, 32, 40, 0))).toBe('major')
})

test('a heap that has not grown is left alone however long the bridge is quiet', () => {
  const d = new HeapAtRest({ oldSpace: 20 * MIB })
  for (let i = 0; i < 10; i++) expect(d.check(reading(0, 4, 35.9))).toBe('none')
})

test('an old generation grown by more than 16 MiB gets two full collections, one a check', () => {
  const d = new HeapAtRest({ oldSpace: 20 * MIB })
  d.check(reading(0, 1, 36.1))
  expect(d.check(reading(0, 1, 36.1))).toBe('major')
  d.collected('major', reading(0, 1, 30))
  // The second compacts what the first left, though the heap is no longer 16 MiB over.
  expect(d.check(reading(0, 1, 30))).toBe('major')
  d.collected('major', reading(0, 1, 21))
  for (let i = 0; i < 5; i++) expect(d.check(reading(0, 1, 36.9))).toBe('none')
  expect(d.check(reading(0, 1, 37.1))).toBe('major') // grown 16 MiB past what they left
})

test('a young generation V8 will not shrink is asked three times, and again once it has shrunk', () => {
  const d = new HeapAtRest({ oldSpace: 20 * MIB })
  d.check(reading(0, 32, 20))
  for (let i = 0; i < 3; i++) {
    expect(d.check(reading(0, 32, 20))).toBe('minor')
    d.collected('minor', reading(0, 32, 20))
  }
  for (let i = 0; i < 5; i++) expect(d.check(reading(0, 32, 20))).toBe('none')
  // It shrank in a collection V8 ran itself; when it grows again, it is asked again.
  expect(d.check(reading(0, 1, 20))).toBe('none')
  expect(d.check(reading(0, 16, 20))).toBe('minor')
})

test("exposedGc is V8's own full collection, without putting gc on this process's global", async () => {
  const gc = exposedGc()
  expect(gc).toBeTypeOf('function')
  expect((globalThis as { gc?: unknown }).gc).toBeUndefined()
  let ref: WeakRef<object> | undefined
  ;(() => {
    ref = new WeakRef({ garbage: 'x'.repeat(1000) })
  })()
  await tick() // a WeakRef's target lives until the job that made it ends
  gc?.()
  expect(ref?.deref()).toBeUndefined()
})

/** A logger that keeps its debug lines; `collected` resolves at the first, after `onLine`. */
function debugLines(onLine: () => void = () => {}) {
  const lines: Array<{ message: string; fields?: Record<string, unknown> }> = []
  let first: (() => void) | undefined
  const collected = new Promise<void>((resolve) => {
    first = resolve
  })
  const log: Logger = {
    debug: (message, fields) => {
      lines.push({ message, ...(fields ? { fields } : {}) })
      onLine()
      first?.()
    },
    info() {},
    warn() {},
    error() {},
  }
  return { log, lines, collected }
}

/** A burst that leaves garbage in the old generation: more than 16 MiB promoted, dropped on return. */
async function burstOfGarbage(before: HeapSpaces): Promise<void> {
  const kept: string[][] = []
  for (let i = 0; i < 80; i++) {
    kept.push(Array.from({ length: 20_000 }, (_, j) => `${i}:${j}`))
    await tick()
  }
  expect(heapSpaces().oldSpace).toBeGreaterThan(before.oldSpace + 16 * MIB)
}

test('once quiet after a burst, a full collection runs, and it says what it returned', async () => {
  const { log, lines, collected } = debugLines()
  const before = heapSpaces()
  const heap = returnHeapAtRest(log, { checkMs: 50 })
  try {
    await burstOfGarbage(before)
    await collected
  } finally {
    heap.stop()
  }
  expect(lines[0]).toMatchObject({ message: 'heap collected at rest', fields: { step: 'major' } })
  const [oldBefore = 0, oldAfter = Infinity] = (lines[0]?.fields?.oldSpaceMiB ?? []) as number[]
  expect(oldAfter).toBeLessThan(oldBefore - 8)
})

test('while the bridge keeps working, however lightly, nothing is collected; once it stops, it is', async () => {
  // The work count, read once at the start and once a check: it moves while `working`.
  let reads = 0
  let working = true
  let count = 0
  let idleChecks: (() => void) | undefined
  const idledFor = new Promise<void>((resolve) => {
    idleChecks = resolve
  })
  let readsWhenCollected = 0
  const { log, lines, collected } = debugLines(() => {
    readsWhenCollected = reads
  })
  let garbageMade = 0
  const work = () => {
    reads++
    if (working) count++
    // Four checks after the burst, each with the event loop idle but a question answered.
    if (garbageMade > 0 && reads >= garbageMade + 4) idleChecks?.()
    return count
  }
  const before = heapSpaces()
  const heap = returnHeapAtRest(log, { checkMs: 50, work })
  let readsWhenStopped = Infinity
  try {
    await burstOfGarbage(before)
    garbageMade = reads
    await idledFor
    expect(lines).toEqual([])
    working = false
    readsWhenStopped = reads
    await collected
  } finally {
    heap.stop()
  }
  expect(lines[0]).toMatchObject({ message: 'heap collected at rest', fields: { step: 'major' } })
  // Two quiet checks after the work stopped, at the earliest.
  expect(readsWhenCollected).toBeGreaterThanOrEqual(readsWhenStopped + 2)
})
