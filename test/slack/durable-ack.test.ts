import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { deferred, keyFor, until } from '../helpers/service.js'
import { type Bridge, type SlackMode, startBridge, startSlackRig } from './rig.js'

// A batch, so a click sets a draft without completing the card.
const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}
const why: AskUserQuestionItem = { id: 'why', question: 'Why?' }
const batch = [colour, why]

const bridges: Bridge[] = []
afterEach(async () => {
  for (const b of bridges.splice(0)) await b.close()
})

describe.each<SlackMode>(['socket', 'http'])('Slack %s: what is acknowledged is already durable', (mode) => {
  it('when Slack gets the ack, the click is already applied in the store', async () => {
    const rig = await startSlackRig(mode)
    const bridge = await startBridge(rig)
    bridges.push(bridge)
    void bridge.service
      .ask({ questions: batch, agent: bridge.agent(), wait: { callId: 'durable' } })
      .catch(() => {})
    await until(
      () => rig.element('durable', (r) => r.verb === 'choose' && r.q === 0 && r.o === 1),
      'card posted',
    )
    // A store a little slow to write: an adapter that acked first would be caught out.
    const store = bridge.service.store
    const cas = store.casCard.bind(store)
    store.casCard = async (...args) => {
      await new Promise((r) => setTimeout(r, 300))
      return cas(...args)
    }
    // rig.use returns as soon as the fake Slack has the acknowledgement.
    await rig.use('durable', (r) => r.verb === 'choose' && r.q === 0 && r.o === 1, rig.people.ann)
    const card = await bridge.service.store.getCard<{ drafts: Record<string, { selected: string[] }> }>(
      await keyFor(bridge.service.store, 'durable'),
    )
    expect(card?.state.drafts.colour?.selected).toEqual(['Blue'])
  })

  it('a refused click is acknowledged without waiting for its private notice', async () => {
    // A budget the test would time out on: only the refusal being stored may release the ack.
    const rig = await startSlackRig(mode, { ackBudgetMs: 60_000 })
    const bridge = await startBridge(rig)
    bridges.push(bridge)
    const asking = bridge.service.ask({
      questions: [colour],
      agent: bridge.agent(),
      wait: { callId: 'told' },
    })
    const red = (r: { verb: string; q?: number; o?: number }) => r.verb === 'choose' && r.q === 0 && r.o === 0
    await until(() => rig.element('told', red), 'card posted')
    const buttons = rig.element('told', red)
    await rig.use('told', red, rig.people.ann)
    await asking
    // Bob clicks the button he still sees; Slack does not answer the notice until released.
    const releases = [rig.fake.hold('response_url'), rig.fake.hold('chat.postEphemeral')]
    if (!buttons) throw new Error('no button')
    const delivery = await rig.fake.deliver(
      rig.fake.actionPayload({ id: rig.people.bob.userId }, buttons.message, buttons.actionId),
    )
    expect(delivery.timedOut).toBe(false)
    if (mode === 'http') expect(delivery.status).toBe(200)
    expect(rig.fake.ephemerals.filter((e) => e.user === rig.people.bob.userId)).toEqual([])
    for (const release of releases) release()
    await until(
      () => rig.fake.ephemerals.some((e) => e.user === rig.people.bob.userId),
      'the notice, after the ack',
    )
    const audit = await bridge.service.store.listAudit({ callId: 'told' })
    expect(audit.filter((e) => e.kind === 'interaction' && e.refused)).toHaveLength(1)
  })

  it('a slow store does not hold the ack past the budget', async () => {
    const rig = await startSlackRig(mode, { ackBudgetMs: 50 })
    const bridge = await startBridge(rig)
    bridges.push(bridge)
    void bridge.service
      .ask({ questions: batch, agent: bridge.agent(), wait: { callId: 'slow' } })
      .catch(() => {})
    await until(
      () => rig.element('slow', (r) => r.verb === 'choose' && r.q === 0 && r.o === 0),
      'card posted',
    )
    // The store cannot write until the test lets it; Slack still gets its ack within the budget
    // (rig.use throws on a missed deadline), while the click is not applied yet.
    const store = bridge.service.store
    const cas = store.casCard.bind(store)
    const gate = deferred<void>()
    store.casCard = async (...args) => {
      await gate.promise
      return cas(...args)
    }
    await rig.use('slow', (r) => r.verb === 'choose' && r.q === 0 && r.o === 0, rig.people.ann)
    expect(
      (await store.getCard<{ drafts: Record<string, unknown> }>(await keyFor(store, 'slow')))?.state.drafts
        .colour,
    ).toBeUndefined()
    gate.resolve()
    await until(
      async () =>
        (await store.getCard<{ drafts: Record<string, unknown> }>(await keyFor(store, 'slow')))?.state.drafts
          .colour,
      'applied after the ack',
    )
  })
})
