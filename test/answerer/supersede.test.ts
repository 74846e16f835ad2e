// The one rule both chat adapters use for editing a message: one edit on its way at a time, the
// newest waiting one replaces older ones, every caller settles with the edit that carried theirs.
import { describe, expect, it } from 'vitest'
import { Superseding } from '../../src/answerer/supersede.js'

/** A send whose completion the test decides. */
function gate() {
  const sent: string[] = []
  const pending: Array<{ resolve: () => void; reject: (e: unknown) => void }> = []
  const send = (update: string) =>
    new Promise<void>((resolve, reject) => {
      sent.push(update)
      pending.push({ resolve, reject })
    })
  return { sent, pending, send }
}

describe('Superseding: newest edit wins', () => {
  it('sends the newest waiting update once the one on its way is done; replaced callers settle with it', async () => {
    const edits = new Superseding<string>()
    const g = gate()
    const settled: string[] = []
    const first = edits.offer('m', 'v1').then(() => settled.push('v1'))
    const onWay = edits.send('m', g.send)
    expect(onWay).toBeDefined()
    const second = edits.offer('m', 'v2').then(() => settled.push('v2'))
    const third = edits.offer('m', 'v3').then(() => settled.push('v3'))
    expect(edits.superseded).toBe(1)
    // One on its way: nothing else is sent for this message.
    expect(edits.send('m', g.send)).toBeUndefined()
    expect(edits.nextKey()).toBeUndefined()
    await Promise.resolve()
    expect(g.sent).toEqual(['v1'])
    g.pending[0]?.resolve()
    await onWay
    await first
    expect(settled).toEqual(['v1'])
    expect(edits.nextKey()).toBe('m')
    expect(edits.peek('m')).toBe('v3')
    const next = edits.send('m', g.send)
    await Promise.resolve()
    expect(g.sent).toEqual(['v1', 'v3']) // v2 never sent
    g.pending[1]?.resolve()
    await next
    await Promise.all([second, third])
    expect(settled.sort()).toEqual(['v1', 'v2', 'v3'])
    expect(edits.nextKey()).toBeUndefined()
  })

  it('a failed send rejects every caller it carried, and the next update still goes', async () => {
    const edits = new Superseding<string>()
    const g = gate()
    const a = edits.offer('m', 'a')
    const b = edits.offer('m', 'b')
    const sent = edits.send('m', g.send)
    await Promise.resolve()
    g.pending[0]?.reject(new Error('rate limited'))
    await sent
    await expect(a).rejects.toThrow('rate limited')
    await expect(b).rejects.toThrow('rate limited')
    const c = edits.offer('m', 'c')
    const again = edits.send('m', g.send)
    await Promise.resolve()
    g.pending[1]?.resolve()
    await again
    await expect(c).resolves.toBeUndefined()
    expect(g.sent).toEqual(['b', 'c'])
  })

  it('a send that throws at once rejects its callers instead of escaping', async () => {
    const edits = new Superseding<string>()
    const a = edits.offer('m', 'a')
    await edits.send('m', () => {
      throw new Error('bad body')
    })
    await expect(a).rejects.toThrow('bad body')
  })

  it('messages are independent, oldest first; stop rejects only what waits', async () => {
    const edits = new Superseding<string>()
    const g = gate()
    const x = edits.offer('x', 'x1')
    const y = edits.offer('y', 'y1')
    expect(edits.nextKey()).toBe('x')
    const sending = edits.send('x', g.send)
    expect(edits.nextKey()).toBe('y')
    edits.rejectWaiting(new Error('stopped'))
    await expect(y).rejects.toThrow('stopped')
    expect(edits.nextKey()).toBeUndefined()
    await Promise.resolve()
    g.pending[0]?.resolve()
    await sending
    await expect(x).resolves.toBeUndefined()
  })
})
