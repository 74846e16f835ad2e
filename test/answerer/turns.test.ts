/**
 * Work after an acknowledgement waits for interactions to pause (at most `maxDeferMs`), then
 * takes one turn of the event loop per piece, so requests that arrive meanwhile are served before
 * the backlog, and the backlog still drains on its own.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { Turns } from '../../src/answerer/turns.js'

/** Busy the thread for about `ms`, as rendering and committing do. */
function busy(ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) {}
}

describe('turns', () => {
  it('holds work while interactions keep coming, and at most maxDeferMs', () => {
    let now = 1000
    const turns = new Turns({ now: () => now, quietMs: 20, maxDeferMs: 1000 })
    expect(turns.wait()).toBe(0) // nothing waits
    void turns.next()
    expect(turns.wait()).toBe(0) // no interaction yet: at once
    turns.interaction()
    expect(turns.wait()).toBe(20)
    now += 15
    expect(turns.wait()).toBe(5)
    now += 5
    expect(turns.wait()).toBe(0) // a pause of quietMs
    // A steady stream of interactions: the oldest piece goes once it waited maxDeferMs.
    for (; now < 1000 + 990; now += 10) {
      turns.interaction()
      expect(turns.wait()).toBeGreaterThan(0)
    }
    turns.interaction()
    expect(turns.wait()).toBe(10) // 1000 + 1000 - 1990
    now += 10
    turns.interaction()
    expect(turns.wait()).toBe(0)
  })

  it('starts one waiter per turn, oldest first; other callbacks of the loop run in between', async () => {
    const turns = new Turns()
    const seen: string[] = []
    const all = [1, 2, 3].map((n) => turns.next().then(() => seen.push(`w${n}`)))
    setImmediate(() => seen.push('other'))
    await Promise.all(all)
    expect(seen).toEqual(['w1', 'other', 'w2', 'w3'])
    expect(turns.waiting).toBe(0)
  })

  it('a request that arrives while 200 pieces of work wait is served before they are all done', async () => {
    const turns = new Turns()
    let done = 0
    let doneWhenServed = -1
    const server = createServer((_req, res) => {
      turns.interaction()
      doneWhenServed = done
      res.end('ok')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
      // Connect first, so the request is in flight when the backlog starts.
      await fetch(url).then((r) => r.text())
      const work = Array.from({ length: 200 }, () =>
        turns.next().then(() => {
          busy(2)
          done++
        }),
      )
      const served = fetch(url).then((r) => r.text())
      expect(await served).toBe('ok')
      await Promise.all(work)
      expect(done).toBe(200)
      // Served between pieces: most of the backlog was still waiting.
      expect(doneWhenServed).toBeGreaterThanOrEqual(0)
      expect(doneWhenServed).toBeLessThan(100)
    } finally {
      server.close()
    }
  })
})
