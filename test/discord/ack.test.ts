import type { APIInteractionResponse } from 'discord.js'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Acknowledger } from '../../adapters/discord/ack.js'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

function rig(ackAfterMs = 2000, failReply = false) {
  const replies: APIInteractionResponse[] = []
  const followUps: string[] = []
  const ack = new Acknowledger({
    reply: async (body) => {
      replies.push(body)
      if (failReply) throw new Error('Unknown interaction')
    },
    followUp: async (content) => {
      followUps.push(content)
    },
    ackAfterMs,
  })
  return { ack, replies, followUps }
}

describe('Acknowledger (the 3-second rule)', () => {
  it('answers a quick refusal with an ephemeral reply, once', async () => {
    const { ack, replies, followUps } = rig()
    await ack.tell('Already answered.')
    await ack.finish()
    expect(replies).toEqual([
      { type: 4, data: { content: 'Already answered.', flags: 64, allowed_mentions: { parse: [] } } },
    ])
    expect(followUps).toEqual([])
  })

  it('acknowledges quiet work with DEFERRED_UPDATE_MESSAGE', async () => {
    const { ack, replies } = rig()
    await ack.finish()
    expect(replies).toEqual([{ type: 6 }])
  })

  it('defers slow work before the deadline, then says the rest in a follow-up', async () => {
    const { ack, replies, followUps } = rig(2000)
    await vi.advanceTimersByTimeAsync(1999)
    expect(replies).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(replies).toEqual([{ type: 6 }])
    await ack.tell('Approval recorded: 1 of 2.')
    await ack.finish()
    expect(replies).toHaveLength(1)
    expect(followUps).toEqual(['Approval recorded: 1 of 2.'])
  })

  it('a modal is the one response; a second response is refused', async () => {
    const { ack, replies } = rig()
    await ack.send({ type: 9, data: { custom_id: 'x', title: 't', components: [] } })
    await expect(ack.send({ type: 6 })).rejects.toThrow(/already/)
    await ack.finish()
    expect(replies).toHaveLength(1)
  })

  it('the clicked message’s new look is the response when ready in time; after a defer it is refused', async () => {
    const quick = rig()
    const data = { content: 'done', embeds: [], components: [] }
    expect(await quick.ack.updateMessage(data)).toBe(true)
    await quick.ack.finish()
    expect(quick.replies).toEqual([{ type: 7, data }])
    const slow = rig(2000)
    await vi.advanceTimersByTimeAsync(2000)
    await slow.ack.repliedNow
    expect(await slow.ack.updateMessage(data)).toBe(false)
    expect(slow.replies).toEqual([{ type: 6 }])
    const expired = rig(2000, true)
    expect(await expired.ack.updateMessage(data)).toBe(false)
  })

  it('survives an expired token on the initial response', async () => {
    const { ack, replies } = rig(2000, true)
    await ack.finish()
    expect(replies).toEqual([{ type: 6 }])
    expect(ack.replied).toBe(true)
  })
})
