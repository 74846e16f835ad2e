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
