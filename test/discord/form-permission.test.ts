import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { until } from '../helpers/service.js'
import { alice, bob, type DiscordRig, discordRig } from './rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}

let rig: DiscordRig | undefined
afterEach(async () => {
  await rig?.close()
  rig = undefined
})

describe('Discord: forms and allowed responders', () => {
  it('someone who may not answer gets an ephemeral refusal instead of a form; an allowed person gets the form', async () => {
    rig = await discordRig({ plan: { responders: { discord: { users: [alice.id] } } } })
    void rig.service.ask({ questions: [colour], wait: { callId: 'gated' } }).catch(() => {})
    await until(() => rig?.component('gated', { verb: 'other', q: 0 }), 'card posted')
    const refused = await rig.press('gated', { verb: 'other', q: 0 }, bob)
    expect(refused.response).toMatchObject({ type: 4, data: { flags: 64 } })
    expect(JSON.stringify(refused.response)).toMatch(/not one of the people/)
    const opened = await rig.press('gated', { verb: 'other', q: 0 }, alice)
    expect(opened.response).toMatchObject({ type: 9 })
  })
})
