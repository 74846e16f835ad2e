/**
 * The contract every chat adapter passes, driven through a fake of its platform.
 *
 * A harness wires the adapter to its fake platform and plays the people: `press` uses a
 * component that is actually rendered on the card's message (never a made-up payload), through
 * the platform's real wire protocol. Rendered text must show the question, the chosen labels and
 * the answerer's name once answered, and the words "continued" and "cancelled" for those states.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ChatAdapter, Destination } from '../../src/answerer/adapter.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import type { ComponentVerb } from '../../src/card/codec.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import type { Router } from '../../src/routing/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import { keyFor, refFor, until } from '../helpers/service.js'

type Responders = NonNullable<CardState['responders']>

export interface PersonSpec {
  userId: string
  name: string
}

export interface ComponentTarget {
  verb: Extract<
    ComponentVerb,
    'choose' | 'toggle' | 'submit' | 'approve' | 'reject' | 'always' | 'skip' | 'hold'
  >
  q?: number
  o?: number
}

export interface ContractHarness {
  /** The adapter under test, not started (the answerer starts it). */
  adapter: ChatAdapter
  destination: Destination
  /** People the platform knows; `allowed` is the only one a restricted route lets answer. */
  people: { ann: PersonSpec; bob: PersonSpec }
  /** Responders that allow `people.ann` and nobody else on this platform. */
  onlyAnn?: Responders
  /**
   * For a surface without per-person identity (the web inbox without sign-in): responders that
   * let nobody there answer. The refusal test then checks Bob is refused and the card stays open.
   */
  refuseAll?: Responders
  press(callId: string, target: ComponentTarget, person: PersonSpec): Promise<void>
  select(callId: string, q: number, labels: string[], person: PersonSpec): Promise<void>
  submitForm(
    callId: string,
    verb: 'other' | 'decline',
    q: number,
    text: string,
    person: PersonSpec,
  ): Promise<void>
  notices(person: PersonSpec): Promise<string[]>
  text(callId: string): Promise<string>
  live(callId: string): Promise<boolean>
  messageCount(callId: string): Promise<number>
  close(): Promise<void>
}

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour for the cache?',
  options: [{ label: 'Red' }, { label: 'Blue', description: 'the calm one' }],
}
const regions: AskUserQuestionItem = {
  id: 'regions',
  question: 'Which regions?',
  multiSelect: true,
  options: [{ label: 'eu' }, { label: 'us' }, { label: 'ap' }],
}
const why: AskUserQuestionItem = { id: 'why', question: 'Anything else?' }
const approval: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy 4f2c1 to production?',
  detail: 'Fixes the login bug.',
  options: [{ label: 'Approve' }, { label: 'Reject' }, { label: 'Always' }],
  intent: {
    kind: 'approval',
    approve: 'Approve',
    reject: 'Reject',
    always: 'Always',
    subject: { name: 'deploy-bot' },
  },
}
const plan: AskUserQuestionItem = {
  id: 'plan',
  question: 'Approve this plan?',
  detail: '# Plan\n\n1. Add the index\n2. Backfill\n3. Switch reads',
  options: [{ label: 'Approve' }, { label: 'Request changes' }],
  intent: { kind: 'plan-review', approve: 'Approve' },
}

export function runAdapterContract(name: string, makeHarness: () => Promise<ContractHarness>): void {
  describe(`adapter contract: ${name}`, () => {
    let h: ContractHarness
    let service: UserQuestionService
    let chat: ChatAnswerer
    let unregister: () => void

    beforeEach(async () => {
      h = await makeHarness()
      service = new UserQuestionService({ store: openStore('memory') })
      const router: Router = {
        resolve: () => ({
          name: 'contract',
          destinations: [h.destination],
          quorum: 1,
          excludeRequester: false,
          escalation: [],
        }),
      }
      chat = new ChatAnswerer({ service, adapters: [h.adapter], router, escalationIntervalMs: 0 })
      unregister = service.use(chat.answerer)
      await chat.start()
    })

    afterEach(async () => {
      await service.close()
      await chat.stop()
      await h.close()
      await service.store.close()
    })

    const agent = () => service.agents.ensure('agent-1')
    const posted = (callId: string) =>
      until(async () => (await h.messageCount(callId)) > 0, `card ${callId} posted`)

    it('single-select: one click answers, the card shows who chose what and loses its buttons', async () => {
      const asking = service.ask({ questions: [colour], agent: agent(), wait: { callId: 'single' } })
      await posted('single')
      expect(await h.text('single')).toContain('Which colour for the cache?')
      await h.press('single', { verb: 'choose', q: 0, o: 1 }, h.people.ann)
      expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
      await until(async () => !(await h.live('single')), 'card finished')
      const text = await h.text('single')
      expect(text).toContain('Blue')
      expect(text).toContain(h.people.ann.name)
      expect(await h.messageCount('single')).toBe(1)
    })

    it('multi-select: choices then Submit', async () => {
      const asking = service.ask({ questions: [regions], agent: agent(), wait: { callId: 'multi' } })
      await posted('multi')
      await h.select('multi', 0, ['eu', 'ap'], h.people.ann)
      await until(
        async () =>
          (await chat.host.getCard(refFor('multi', 'agent-1')))?.drafts.regions?.selected.length === 2,
        'draft',
      )
      await h.press('multi', { verb: 'submit' }, h.people.ann)
      expect(await asking).toEqual({ answers: [{ id: 'regions', selected: ['eu', 'ap'] }] })
    })

    it('Other through a form', async () => {
      const asking = service.ask({ questions: [colour], agent: agent(), wait: { callId: 'other' } })
      await posted('other')
      await h.submitForm('other', 'other', 0, 'Teal, please', h.people.bob)
      expect(await asking).toEqual({ answers: [{ id: 'colour', selected: [], custom: 'Teal, please' }] })
      await until(async () => (await h.text('other')).includes('Teal, please'), 'custom shown')
    })

    it('a batch with a skipped question', async () => {
      const asking = service.ask({
        questions: [colour, regions, why],
        agent: agent(),
        wait: { callId: 'batch' },
      })
      await posted('batch')
      await h.press('batch', { verb: 'choose', q: 0, o: 0 }, h.people.ann)
      await h.select('batch', 1, ['us'], h.people.ann)
      await h.press('batch', { verb: 'skip', q: 2 }, h.people.bob)
      await until(async () => {
        const card = await chat.host.getCard(refFor('batch', 'agent-1'))
        return card?.drafts.why?.skipped && card.drafts.regions?.selected.length === 1 && card.drafts.colour
      }, 'drafts')
      await h.press('batch', { verb: 'submit' }, h.people.bob)
      expect(await asking).toEqual({
        answers: [
          { id: 'colour', selected: ['Red'] },
          { id: 'regions', selected: ['us'] },
          { id: 'why', selected: [] },
        ],
      })
    })

    it.each([
      ['approve', 'Approve'],
      ['reject', 'Reject'],
      ['always', 'Always'],
    ] as const)('approval: %s', async (verb, label) => {
      const asking = service.ask({ questions: [approval], agent: agent(), wait: { callId: `appr-${verb}` } })
      await posted(`appr-${verb}`)
      expect(await h.text(`appr-${verb}`)).toContain('Deploy 4f2c1 to production?')
      await h.press(`appr-${verb}`, { verb }, h.people.ann)
      expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: [label] }] })
      await until(async () => !(await h.live(`appr-${verb}`)), 'approval finished')
    })

    it('plan review: decline with feedback through a form', async () => {
      const asking = service.ask({ questions: [plan], agent: agent(), wait: { callId: 'plan' } })
      await posted('plan')
      expect(await h.text('plan')).toContain('Backfill')
      await h.submitForm('plan', 'decline', 0, 'Add a rollback step', h.people.ann)
      expect(await asking).toEqual({ answers: [{ id: 'plan', selected: [], custom: 'Add a rollback step' }] })
    })

    it('timed: pending, the card says continued, a late click becomes a reply', async () => {
      // Long enough for the card to be posted: a window that closed first would post none.
      const result = await service.askTimed({ questions: [colour], agent: agent() }, 'timed', 1000)
      expect(result).toEqual({ pending: true, callId: 'timed' })
      await until(async () => /continued/i.test(await h.text('timed')), 'continued shown')
      expect(await h.live('timed')).toBe(true)
      await h.press('timed', { verb: 'choose', q: 0, o: 0 }, h.people.bob)
      const replies = await until(async () => {
        const r = await service.replies('agent-1')
        return r.length > 0 ? r : undefined
      }, 'late reply')
      expect(replies[0]?.reply.payload).toMatchObject({
        callId: 'timed',
        answers: [{ id: 'colour', selected: ['Red'] }],
      })
      await until(async () => !(await h.live('timed')), 'card finished')
    })

    it('cancel: the ask fails with ASK_CANCELLED and the card says so', async () => {
      const asking = service.ask({ questions: [colour], agent: agent(), wait: { callId: 'cancel' } })
      await posted('cancel')
      await service.cancel(await keyFor(service.store, 'cancel'))
      await expect(asking).rejects.toMatchObject({ code: 'ASK_CANCELLED' })
      await until(async () => /cancelled/i.test(await h.text('cancel')), 'cancelled shown')
      expect(await h.live('cancel')).toBe(false)
    })

    it('a click on a finished card and a double click give one answer and a private notice', async () => {
      const asking = service.ask({ questions: [colour], agent: agent(), wait: { callId: 'twice' } })
      await posted('twice')
      await Promise.all([
        h.press('twice', { verb: 'choose', q: 0, o: 0 }, h.people.ann),
        h.press('twice', { verb: 'choose', q: 0, o: 1 }, h.people.bob),
      ]).catch(() => {})
      const answer = await asking
      expect(answer.answers).toHaveLength(1)
      const winner = answer.answers[0]?.selected[0] === 'Red' ? h.people.ann : h.people.bob
      const loser = winner === h.people.ann ? h.people.bob : h.people.ann
      await until(
        async () => (await h.notices(loser)).some((n) => /already answered/i.test(n)),
        'notice to the loser',
      )
      expect((await h.notices(loser)).join('\n')).toContain(winner.name)
      expect(await h.notices(winner)).toEqual([])
      expect(await service.store.listAudit({ callId: 'twice' })).toEqual(
        expect.arrayContaining([expect.objectContaining({ kind: 'completed' })]),
      )
    })

    it('a refused click (not an allowed responder) changes nothing and gets a private notice', async () => {
      // Rebuild the answerer with a restricted route.
      unregister()
      await chat.stop()
      await h.close()
      h = await makeHarness()
      const router: Router = {
        resolve: () => ({
          name: 'restricted',
          destinations: [h.destination],
          quorum: 1,
          excludeRequester: false,
          escalation: [],
          responders: h.onlyAnn ?? h.refuseAll ?? {},
        }),
      }
      if (!h.onlyAnn && !h.refuseAll) throw new Error('a harness names onlyAnn or refuseAll')
      chat = new ChatAnswerer({ service, adapters: [h.adapter], router, escalationIntervalMs: 0 })
      unregister = service.use(chat.answerer)
      await chat.start()
      const asking = service.ask({ questions: [approval], agent: agent(), wait: { callId: 'gate' } })
      await posted('gate')
      await h.press('gate', { verb: 'approve' }, h.people.bob)
      await until(async () => (await h.notices(h.people.bob)).length > 0, 'refusal notice')
      expect((await chat.host.getCard(refFor('gate', 'agent-1')))?.status).toBe('open')
      expect(await h.live('gate')).toBe(true)
      if (h.onlyAnn) {
        await h.press('gate', { verb: 'approve' }, h.people.ann)
        expect(await asking).toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
      } else {
        await service.cancel(await keyFor(service.store, 'gate'))
        await expect(asking).rejects.toMatchObject({ code: 'ASK_CANCELLED' })
      }
      const refused = (await service.store.listAudit({ callId: 'gate' })).filter((e) => e.refused)
      expect(refused).toEqual([
        expect.objectContaining({
          code: 'not-allowed',
          actor: expect.objectContaining({ userId: h.people.bob.userId }),
        }),
      ])
    })
  })
}
