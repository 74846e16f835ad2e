import { afterEach, describe, expect, it } from 'vitest'
import { ChannelQueues } from '../../adapters/slack/queue.js'
import { startSlackRig } from './rig.js'

const warnings: Error[] = []
const onWarning = (w: Error) => warnings.push(w)
afterEach(() => {
  process.off('warning', onWarning)
  warnings.length = 0
})

describe('Slack queues and shutdown', () => {
  it('many calls queued on one lane print no MaxListenersExceededWarning', async () => {
    process.on('warning', onWarning)
    const queues = new ChannelQueues({ perChannelIntervalMs: 0, pace: false })
    const done: number[] = []
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        queues.run('C1', async (call) => {
          await call('chat.postMessage', async () => done.push(i))
        }),
      ),
    )
    // Warnings are emitted on the next tick: let one pass before looking.
    await new Promise((r) => setImmediate(r))
    expect(done).toHaveLength(40)
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning')
  })

  it('private notices still queued at shutdown are delivered before the adapter stops', async () => {
    // Spaced calls: most notices are still waiting in the lane when stop() is called.
    const rig = await startSlackRig('socket', { rateLimit: { perChannelIntervalMs: 100 } })
    try {
      await rig.adapter.start({
        handle: async () => ({ ok: true }),
        getCard: async () => undefined,
      })
      // The channel refuses ephemerals: each notice falls back to a DM, queued only after that.
      rig.fake.failWith('chat.postEphemeral', 'channel_not_found', 6)
      const person = { platform: 'slack' as const, userId: rig.people.ann.userId }
      const ref = { channel: 'C0QUESTIONS', ts: ['1.1'] }
      const sent = Array.from({ length: 6 }, (_, i) => rig.adapter.notify(person, `notice ${i}`, ref))
      await rig.adapter.stop()
      await Promise.all(sent)
      expect(rig.fake.noticesFor(rig.people.ann.userId)).toEqual(
        Array.from({ length: 6 }, (_, i) => `notice ${i}`),
      )
    } finally {
      await rig.close()
    }
  })
})
