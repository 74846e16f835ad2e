import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { until } from '../helpers/service.js'
import { type Bridge, startBridge, startSlackRig } from './rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}

const bridges: Bridge[] = []
afterEach(async () => {
  for (const b of bridges.splice(0)) await b.close()
})

describe('Slack: forms and allowed responders', () => {
  it('someone who may not answer is told at once instead of getting a form; an allowed person gets it', async () => {
    const rig = await startSlackRig('socket')
    const bridge = await startBridge(rig, { responders: { slack: { users: [rig.people.ann.userId] } } })
    bridges.push(bridge)
    void bridge.service
      .ask({ questions: [colour], agent: bridge.agent(), wait: { callId: 'gated' } })
      .catch(() => {})
    await until(() => rig.element('gated', (r) => r.verb === 'other'), 'card posted')

    await rig.use('gated', (r) => r.verb === 'other', rig.people.bob)
    await until(() => rig.fake.ephemerals.some((e) => e.user === rig.people.bob.userId), 'notice to Bob')
    expect(rig.fake.ephemerals.find((e) => e.user === rig.people.bob.userId)?.text).toMatch(
      /not one of the people/,
    )
    expect(rig.fake.calls.filter((c) => c.method === 'views.open')).toEqual([])
    // The refusal before the form is audited like a refused click.
    const audit = await bridge.service.store.listAudit({ callId: 'gated' })
    expect(audit).toContainEqual(
      expect.objectContaining({
        kind: 'interaction',
        refused: true,
        code: 'not-allowed',
        actor: expect.objectContaining({ userId: rig.people.bob.userId }),
      }),
    )

    await rig.use('gated', (r) => r.verb === 'other', rig.people.ann)
    await until(() => rig.fake.calls.some((c) => c.method === 'views.open'), 'form opened for Ann')
  })
})
