import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { until } from '../helpers/service.js'
import { type Bridge, startBridge, startSlackRig } from './rig.js'

const bridges: Bridge[] = []
afterEach(async () => {
  for (const b of bridges.splice(0)) await b.close()
})

// Enough questions that the card needs more than one message (50 blocks each).
const batch: AskUserQuestionItem[] = Array.from({ length: 30 }, (_, i) => ({
  id: `q${i}`,
  question: `Question ${i}?`,
  options: [{ label: 'yes' }, { label: 'no' }],
}))

describe('Slack: a card that fails half way through posting', () => {
  it('takes the parts already posted back down, so no live buttons are left that nobody updates', async () => {
    const rig = await startSlackRig('socket')
    const bridge = await startBridge(rig)
    bridges.push(bridge)
    // Each post takes a while, so the failure can be set up for the second part.
    rig.fake.delay('chat.postMessage', 1000)
    const asking = bridge.service.ask({ questions: batch, agent: bridge.agent(), wait: { callId: 'half' } })
    asking.catch(() => {})
    await until(() => rig.fake.messagesOf('half').length === 1, 'first part posted', 1000)
    rig.fake.failWith('chat.postMessage', 'channel_not_found', 5)
    await expect(asking).rejects.toMatchObject({ code: 'PROVIDER_ERROR' })
    expect(rig.fake.messagesOf('half')).toEqual([])
    expect(rig.fake.calls.filter((c) => c.method === 'chat.delete')).toHaveLength(1)
  })
})
