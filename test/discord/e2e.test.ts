import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { until } from '../helpers/service.js'
import { alice, bob, type DiscordRig, discordRig } from './rig.js'

let rig: DiscordRig | undefined
afterEach(async () => {
  await rig?.close()
  rig = undefined
})

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue', description: 'the calm one' }],
}

describe('Discord end to end (real discord.js against the fake)', () => {
  it('connects with the Guilds intent only and answers a single-select question', async () => {
    rig = await discordRig()
    expect(rig.fake.identifies[0]?.intents).toBe(1)
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'single-1' } })
    await until(() => rig?.component('single-1', { verb: 'choose', q: 0, o: 1 }), 'card posted')
    const record = await rig.press('single-1', { verb: 'choose', q: 0, o: 1 })
    expect(record.response).toEqual({ type: 6 })
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
    await until(async () => !(await rig?.hasLiveComponents('single-1')), 'buttons removed')
    expect(await rig.text('single-1')).toContain('Answered by Alice')
    // A click on the finished card is refused privately.
    expect(rig.fake.rejected).toEqual([])
    void bob
  })
})
