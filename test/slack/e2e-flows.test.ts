/**
 * End to end through the fake Slack: the real Bolt app (Socket Mode and signed HTTP), the real
 * chat answerer and service on SQLite. People only use what is rendered on the messages.
 */

import { afterEach, describe, expect, it } from 'vitest'
import { isPostPending } from '../../src/answerer/adapter.js'
import { decodeComponentId } from '../../src/card/codec.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { mentions } from '../helpers/mentions.js'
import { keyFor, refFor, until } from '../helpers/service.js'
import {
  type Bridge,
  blocksText,
  clientText,
  fakeUser,
  type SlackMode,
  type SlackRig,
  startBridge,
  startSlackRig,
} from './rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour? <!channel>',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}
const approval: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy 4f2c1 to production?',
  detail: 'Fixes the login bug.',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
  intent: { kind: 'approval', approve: 'Approve', reject: 'Reject', subject: { name: 'deploy-bot' } },
}

describe.each(['socket', 'http'] as SlackMode[])('Slack end to end (%s)', (mode) => {
  let rig: SlackRig
  let bridge: Bridge | undefined
  afterEach(async () => {
    await bridge?.close()
    bridge = undefined
  })
  const start = async (plan: Parameters<typeof startBridge>[1] = {}, options = {}) => {
    rig = await startSlackRig(mode, options)
    bridge = await startBridge(rig, plan)
    return bridge
  }
  // Posted on Slack and recorded by the answerer (a change before the record would miss that copy).
  const posted = (callId: string, n = 1) =>
    until(
      async () =>
        rig.fake.messagesOf(callId).length >= n &&
        // The intent to post is stored first; posted means its reference replaced it.
        (await bridge?.service.store.listPosts(await keyFor(bridge?.service.store, callId)))?.some(
          (p) => !isPostPending(p.ref),
        ),
      `${callId} posted`,
    )
  const press = (callId: string, who: keyof SlackRig['people'], verb: string, q?: number, o?: number) =>
    rig.use(callId, (r) => r.verb === verb && r.q === q && r.o === o, rig.people[who])
  const notices = (who: keyof SlackRig['people']) =>
    rig.fake.noticesFor(rig.people[who].userId).map(clientText)

  it('single-select: updated in place, who and when, no live buttons; agent text pings nobody', async () => {
    const b = await start({
      destinations: [{ platform: 'slack', channel: 'C0Q', mention: mentions('slack', 'subteam:S0ONCALL') }],
    })
    const asking = b.service.ask({ questions: [colour], agent: b.agent(), wait: { callId: 'one' } })
    await posted('one')
    const [message] = rig.fake.messagesOf('one')
    expect(rig.text('one')).toContain('Which colour? <!channel>')
    await press('one', 'ann', 'choose', 0, 1)
    expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
    await until(() => rig.fake.liveActionIds('one').length === 0, 'buttons gone')
    const after = rig.fake.messagesOf('one')
    expect(after.map((m) => m.ts)).toEqual([message?.ts])
    expect(after[0]?.history.length).toBeGreaterThan(1)
    expect(rig.text('one')).toMatch(/Answer: Blue[\s\S]*Answered by @Ann · \d{4}-\d\d-\d\d/)
    // The configured group, and the person who answered (`<@U…>` in an edit notifies nobody).
    expect(new Set(rig.fake.mentions)).toEqual(new Set(['!subteam^S0ONCALL', '@U0ANN']))
  })

  it('multi-select: checkboxes, Other… through a modal, Submit', async () => {
    const b = await start()
    const q: AskUserQuestionItem = {
      id: 'regions',
      question: 'Which regions?',
      multiSelect: true,
      options: [{ label: 'eu', description: 'Frankfurt' }, { label: 'us' }, { label: 'ap' }],
    }
    const asking = b.service.ask({ questions: [q], agent: b.agent(), wait: { callId: 'multi' } })
    await posted('multi')
    await rig.use('multi', (r) => r.verb === 'set', rig.people.ann, ['0', '2'])
    await until(
      async () =>
        (await b.chat.host.getCard(refFor('multi', 'agent-1')))?.drafts.regions?.selected.length === 2,
      'draft',
    )
    await press('multi', 'bob', 'other', 0)
    const view = await until(() => rig.fake.openViewOf('U0BOB'), 'modal')
    await rig.fake.submitView('U0BOB', view.id, { answer: { text: 'and mars' } })
    await until(() => rig.text('multi').includes('and mars'), 'custom shown')
    // The ticks survive the update (initial_options), so Slack shows the shared draft.
    const boxes = rig.element('multi', (r) => r.verb === 'set')?.element
    expect(((boxes?.initial_options ?? []) as { value: string }[]).map((o) => o.value)).toEqual(['0', '2'])
    await press('multi', 'bob', 'submit')
    expect(await asking).toEqual({ answers: [{ id: 'regions', selected: ['eu', 'ap'], custom: 'and mars' }] })
  })

  it('menus: 7 options in a select, 11 multi-select options in a multi-select menu', async () => {
    const b = await start()
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `opt ${i}` }))
    const asking = b.service.ask({
      questions: [
        { id: 'one', question: 'One?', options: many(7) },
        { id: 'some', question: 'Some?', multiSelect: true, options: many(11) },
      ],
      agent: b.agent(),
      wait: { callId: 'menus' },
    })
    await posted('menus')
    await rig.use('menus', (r) => r.verb === 'choose' && r.q === 0, rig.people.ann, ['6'])
    await rig.use('menus', (r) => r.verb === 'set' && r.q === 1, rig.people.ann, ['10', '3'])
    await until(
      async () => (await b.chat.host.getCard(refFor('menus', 'agent-1')))?.drafts.some?.selected.length === 2,
      'drafts',
    )
    await press('menus', 'ann', 'submit')
    expect(await asking).toEqual({
      answers: [
        { id: 'one', selected: ['opt 6'] },
        { id: 'some', selected: ['opt 3', 'opt 10'] },
      ],
    })
  })

  it('approval with quorum 2: progress, a private note, no double approval, both named', async () => {
    const b = await start({ quorum: 2 })
    const asking = b.service.ask({ questions: [approval], agent: b.agent(), wait: { callId: 'q2' } })
    await posted('q2')
    await press('q2', 'ann', 'approve')
    await until(() => notices('ann').some((n) => n.includes('1 of 2')), 'progress note')
    await until(() => rig.text('q2').includes('1 of 2 approvals: @Ann'), 'progress shown')
    await press('q2', 'ann', 'approve')
    await until(() => notices('ann').some((n) => /already approved/i.test(n)), 'no double approval')
    await press('q2', 'bob', 'approve')
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    await until(() => rig.text('q2').includes('Approved by @Ann, @Bob'), 'both approvers shown')
  })

  it('responders by Slack user group (usergroups.users.list)', async () => {
    const b = await start({
      destinations: [
        { platform: 'slack', channel: 'C0ONCALL', mention: mentions('slack', 'subteam:S0ONCALL') },
      ],
      responders: { slack: { groups: ['S0ONCALL'] } },
    })
    rig.fake.usergroups.set('S0ONCALL', ['U0ANN'])
    const asking = b.service.ask({ questions: [approval], agent: b.agent(), wait: { callId: 'grp' } })
    await posted('grp')
    expect(rig.text('grp')).toContain('Answerable by @group-S0ONCALL')
    await press('grp', 'bob', 'approve')
    await until(() => notices('bob').some((n) => /not one of the people/i.test(n)), 'refusal')
    await press('grp', 'ann', 'approve')
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    expect(rig.fake.calls.some((c) => c.method === 'usergroups.users.list' && c.ok)).toBe(true)
  })

  it('a long plan spans messages; declining with feedback updates every one of them', async () => {
    const b = await start()
    const plan = Array.from(
      { length: 400 },
      (_, i) => `## Step ${i}\n\nDo step ${i} & verify it. ${'x '.repeat(40)}`,
    ).join('\n\n')
    const asking = b.service.ask({
      questions: [
        {
          id: 'plan',
          question: 'Approve this plan?',
          detail: plan,
          options: [{ label: 'Approve' }, { label: 'Revise' }],
          intent: { kind: 'plan-review', approve: 'Approve' },
        },
      ],
      agent: b.agent(),
      wait: { callId: 'plan' },
    })
    const parts = await until(() => {
      const m = rig.fake.messagesOf('plan')
      return m.length > 1 && m.at(-1)?.text.includes(`of ${m.length}`) ? m : undefined
    }, 'all parts')
    expect(rig.text('plan')).toContain('Do step 399 & verify it.')
    // Controls only on the last message.
    expect(parts.slice(0, -1).every((m) => !m.blocks.some((bl) => bl.type === 'actions'))).toBe(true)
    await press('plan', 'ann', 'decline', 0)
    const view = await until(() => rig.fake.openViewOf('U0ANN'), 'modal')
    expect(view.view.title).toMatchObject({ text: 'Decline plan' })
    await rig.fake.submitView('U0ANN', view.id, { answer: { text: 'Add a rollback step' } })
    expect(await asking).toEqual({ answers: [{ id: 'plan', selected: [], custom: 'Add a rollback step' }] })
    await until(() => rig.text('plan').includes('Feedback: Add a rollback step'), 'feedback shown')
    expect(rig.fake.liveActionIds('plan')).toEqual([])
    expect(rig.fake.messagesOf('plan')).toHaveLength(parts.length)
  })

  it('a batch of 30 questions over several messages, one skipped', async () => {
    const b = await start()
    const questions = Array.from({ length: 30 }, (_, i) => ({
      id: `q${i}`,
      question: `Question ${i}?`,
      detail: `Why question ${i} matters.`,
      options: [{ label: 'yes' }, { label: 'no' }],
    }))
    const asking = b.service.ask({ questions, agent: b.agent(), wait: { callId: 'big' } })
    await until(() => rig.element('big', (r) => r.verb === 'submit'), 'every part posted')
    expect(rig.fake.messagesOf('big').length).toBeGreaterThan(1)
    for (let q = 0; q < 29; q++) await press('big', 'ann', 'choose', q, q % 2)
    await press('big', 'bob', 'skip', 29)
    await until(
      async () => (await b.chat.host.getCard(refFor('big', 'agent-1')))?.drafts.q29?.skipped,
      'skip recorded',
    )
    await until(
      async () =>
        Object.keys((await b.chat.host.getCard(refFor('big', 'agent-1')))?.drafts ?? {}).length === 30,
      'drafts',
    )
    await press('big', 'bob', 'submit')
    const answer = await asking
    expect(answer.answers[0]).toEqual({ id: 'q0', selected: ['yes'] })
    expect(answer.answers[1]).toEqual({ id: 'q1', selected: ['no'] })
    expect(answer.answers[29]).toEqual({ id: 'q29', selected: [] })
    await until(() => rig.fake.liveActionIds('big').length === 0, 'all parts finished')
  })

  it('timed: "Take my time" holds the wait past its deadline', async () => {
    const b = await start()
    const result = b.service.askTimed({ questions: [colour], agent: b.agent() }, 'slow', 400)
    await posted('slow')
    expect(JSON.stringify(rig.fake.messagesOf('slow')[0]?.blocks)).toMatch(/<!date\^\d+\^[^|]+\|[^>]+UTC>/)
    await press('slow', 'ann', 'hold')
    await until(() => rig.text('slow').includes('@Ann is taking their time'), 'holder shown')
    // A witness asked now with the same 400 ms window: once its window has closed (it comes back
    // pending), so has the held question's, which still waits because Ann holds it.
    const witness = b.service.askTimed({ questions: [colour], agent: b.agent() }, 'witness', 400)
    expect(await witness).toEqual({ pending: true, callId: 'witness' })
    expect((await b.chat.host.getCard(refFor('slow', 'agent-1')))?.status).toBe('open')
    await press('slow', 'ann', 'choose', 0, 0)
    expect(await result).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
  })

  it('timed: a closed form lets go; pending, "continued", then a late answer becomes a reply', async () => {
    const b = await start()
    const result = b.service.askTimed({ questions: [colour], agent: b.agent() }, 'late', 400)
    await posted('late')
    await press('late', 'bob', 'other', 0)
    const view = await until(() => rig.fake.openViewOf('U0BOB'), 'modal')
    await rig.fake.closeView('U0BOB', view.id)
    expect(await result).toEqual({ pending: true, callId: 'late' })
    await until(
      () => rig.text('late').includes('The agent has continued; your answer will still reach it.'),
      'continued',
    )
    expect(rig.element('late', (r) => r.verb === 'hold')).toBeUndefined()
    await press('late', 'bob', 'choose', 0, 1)
    const replies = await until(async () => {
      const r = await b.service.replies('agent-1')
      return r.length > 0 ? r : undefined
    }, 'late reply')
    expect(replies[0]?.reply.payload).toMatchObject({
      callId: 'late',
      answers: [{ id: 'colour', selected: ['Blue'] }],
    })
    await until(() => rig.fake.liveActionIds('late').length === 0, 'finished')
  })

  it('cancel: the card says so; a stale client’s click gets a private notice', async () => {
    const b = await start()
    const asking = b.service.ask({ questions: [colour], agent: b.agent(), wait: { callId: 'gone' } })
    await posted('gone')
    const [message] = rig.fake.messagesOf('gone')
    const oldBlocks = structuredClone(message?.blocks ?? [])
    await b.service.cancel(await keyFor(b.service.store, 'gone'))
    await expect(asking).rejects.toMatchObject({ code: 'ASK_CANCELLED' })
    await until(
      () => /Cancelled/.test(rig.text('gone')) && rig.fake.liveActionIds('gone').length === 0,
      'cancelled',
    )
    // A client that has not refreshed yet still shows the buttons.
    const actionId = rig.element('gone', () => true)?.actionId ?? oldBlocksActionId(oldBlocks)
    if (!message) throw new Error('no message')
    await rig.fake.deliver(rig.fake.actionPayload(fakeUser(rig.people.bob), message, actionId, {}, oldBlocks))
    await until(() => notices('bob').some((n) => /cancelled/i.test(n)), 'notice')
  })

  it('a form submitted after someone else answered: refused privately (chat.postEphemeral)', async () => {
    const b = await start()
    const asking = b.service.ask({ questions: [colour], agent: b.agent(), wait: { callId: 'race' } })
    await posted('race')
    await press('race', 'bob', 'other', 0)
    const view = await until(() => rig.fake.openViewOf('U0BOB'), 'modal')
    await press('race', 'ann', 'choose', 0, 0)
    expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    await rig.fake.submitView('U0BOB', view.id, { answer: { text: 'too late' } })
    await until(() => notices('bob').some((n) => n.includes('already answered by Ann')), 'refusal')
    expect(rig.fake.ephemerals.find((e) => e.user === 'U0BOB')).toMatchObject({
      via: 'chat.postEphemeral',
      channel: 'C0QUESTIONS',
    })
  })

  it('a direct message: an approval worded in the reader’s Slack locale', async () => {
    const b = await start({ destinations: [{ platform: 'slack', user: 'U0ANN' }] })
    rig.fake.users.set('U0ANN', { name: 'ann', locale: 'de-DE' })
    const localized: AskUserQuestionItem = {
      ...approval,
      intent: {
        kind: 'approval',
        approve: 'Approve',
        reject: 'Reject',
        display: {
          question: { en: 'Deploy 4f2c1 to production?', de: '4f2c1 in Produktion ausrollen?' },
          approve: { en: 'Deploy', de: 'Ausrollen' },
        },
      },
    }
    const asking = b.service.ask({ questions: [localized], agent: b.agent(), wait: { callId: 'dm' } })
    await posted('dm')
    expect(rig.fake.messagesOf('dm')[0]?.channel).toBe('DU0ANN')
    expect(rig.text('dm')).toContain('4f2c1 in Produktion ausrollen?')
    expect(rig.element('dm', (r) => r.verb === 'approve')?.element.text).toMatchObject({ text: 'Ausrollen' })
    await press('dm', 'ann', 'approve')
    expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
    await until(() => rig.text('dm').includes('Approved by @Ann'), 'approved')
    expect(rig.text('dm')).toContain('4f2c1 in Produktion ausrollen?')
  })

  it('the card text and its notification are safe and readable', async () => {
    const b = await start()
    void b.service.ask({ questions: [colour], agent: b.agent(), wait: { callId: 'txt' } }).catch(() => {})
    await posted('txt')
    const [m] = rig.fake.messagesOf('txt')
    expect(m?.text).toBe('Which colour? &lt;!channel&gt;')
    expect(blocksText(m?.blocks ?? [])).toContain('Which colour? <!channel>')
    expect(rig.fake.mentions).toEqual([])
  })
})

function oldBlocksActionId(blocks: Record<string, unknown>[]): string {
  for (const b of blocks) {
    if (b.type !== 'actions') continue
    for (const el of b.elements as Record<string, unknown>[]) {
      if (decodeComponentId(String(el.action_id))?.verb === 'choose') return String(el.action_id)
    }
  }
  throw new Error('no button in the old blocks')
}
