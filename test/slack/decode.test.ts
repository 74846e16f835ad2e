import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  type BlockActionsPayload,
  type DecodeResult,
  decodePayload,
  readSlackPayload,
  type SlackPayload,
  type ViewPayload,
} from '../../adapters/slack/decode.js'
import { encodeModalMetadata, MODAL_INPUT } from '../../adapters/slack/modal.js'
import { agentTag, type CardRef, type ComponentRef, encodeComponentId } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'

type Json = Record<string, unknown>
const fixture = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../fakes/slack/fixtures/${name}`, import.meta.url), 'utf8')) as Json
const actions = fixture('actions.json')
const modals = fixture('modals.json')

const questions: AskUserQuestionItem[] = [
  { id: 'colour', question: 'Colour?', options: [{ label: 'Red' }, { label: 'Blue' }, { label: 'Green' }] },
  { id: 'regions', question: 'Regions?', multiSelect: true, options: [{ label: 'eu' }, { label: 'us' }] },
]
const cards = {
  'call-1': newCard({ callId: 'call-1', agentId: 'a', questions, now: 0, deadline: 60_000 }),
  appr: newCard({
    callId: 'appr',
    agentId: 'a',
    now: 0,
    questions: [
      {
        id: 'deploy',
        question: 'Deploy?',
        options: [{ label: 'Yes' }, { label: 'No' }, { label: 'Always' }],
        intent: { kind: 'approval', approve: 'Yes', reject: 'No', always: 'Always' },
      },
    ],
  }),
  plan: newCard({
    callId: 'plan',
    agentId: 'a',
    now: 0,
    questions: [
      {
        id: 'plan',
        question: 'The plan',
        options: [{ label: 'Approve' }, { label: 'Revise' }],
        intent: { kind: 'plan-review', approve: 'Approve' },
      },
    ],
  }),
}
const lookup = (ref: CardRef) => cards[ref.callId as keyof typeof cards]
const AGENT = agentTag('a')
const id = (ref: Omit<ComponentRef, 'callId' | 'agent'>) =>
  encodeComponentId({ callId: 'call-1', agent: AGENT, ...ref }, 255)

/** A recorded payload with askbridge's component id (and, for menus, option value) swapped in. */
function withAction(payload: Json, actionId: string, value?: string): BlockActionsPayload {
  const copy = structuredClone(payload) as unknown as BlockActionsPayload
  const action = copy.actions[0]
  if (!action) throw new Error('fixture has no action')
  action.action_id = actionId
  if (value !== undefined && action.selected_option) action.selected_option.value = value
  return copy
}

function only(results: DecodeResult[]): DecodeResult {
  expect(results).toHaveLength(1)
  return results[0] as DecodeResult
}

describe('recorded block_actions', () => {
  it('ignores components that are not askbridge’s (the recordings as they are)', () => {
    for (const payload of [
      actions.action,
      actions.staticSelectAction,
      actions.radioButtonsAction,
      modals.action,
    ]) {
      expect(decodePayload(payload as SlackPayload, lookup)).toEqual([])
    }
  })

  it('a button: choose, with the person, time, channel, message, trigger and response_url', () => {
    const payload = withAction(actions.action as Json, id({ verb: 'choose', q: 0, o: 1 }))
    const result = only(decodePayload(payload, lookup))
    expect(result).toEqual({
      kind: 'interaction',
      inbound: {
        callId: 'call-1',
        agent: AGENT,
        interaction: {
          id: `slack:1767326130.289415:U00FAKEUSER1:${id({ verb: 'choose', q: 0, o: 1 })}`,
          actor: { platform: 'slack', userId: 'U00FAKEUSER1', name: 'testuser' },
          action: { type: 'choose', questionId: 'colour', label: 'Blue' },
          at: 1767326130289,
        },
      },
      context: {
        channel: 'C00FAKECHAN1',
        messageTs: '1767326126.896109',
        triggerId: '10215325802133.3901254001572.2e2548aa918b35fd85829545c2d4ae2b',
        responseUrl: 'https://hooks.slack.com/actions/T00FAKE00AA/10231680918177/hMWwGmzsWEYbB4BjtNump6kO',
      },
    })
  })

  it('a redelivered payload maps to the same interaction id (retries are idempotent)', () => {
    const payload = withAction(actions.action as Json, id({ verb: 'submit' }))
    const first = only(decodePayload(payload, lookup))
    const again = only(decodePayload(structuredClone(payload), lookup, Date.now() + 60_000))
    expect(first.kind === 'interaction' && again.kind === 'interaction').toBe(true)
    if (first.kind === 'interaction' && again.kind === 'interaction') {
      expect(again.inbound.interaction.id).toBe(first.inbound.interaction.id)
      expect(again.inbound.interaction.at).toBe(first.inbound.interaction.at)
    }
  })

  it('a static_select: the selected option value is the option index', () => {
    const payload = withAction(actions.staticSelectAction as Json, id({ verb: 'choose', q: 0 }), '2')
    const result = only(decodePayload(payload, lookup))
    expect(result.kind === 'interaction' && result.inbound.interaction.action).toEqual({
      type: 'choose',
      questionId: 'colour',
      label: 'Green',
    })
  })

  it('a menu value that is not one of the options is refused with a message, not guessed', () => {
    const payload = withAction(actions.staticSelectAction as Json, id({ verb: 'choose', q: 0 })) // value "greet"
    expect(only(decodePayload(payload, lookup))).toMatchObject({
      kind: 'invalid',
      card: { callId: 'call-1', agent: AGENT },
    })
  })

  it('a selection (radio_buttons shape, selected_option): set', () => {
    const payload = withAction(actions.radioButtonsAction as Json, id({ verb: 'set', q: 1 }), '1')
    const result = only(decodePayload(payload, lookup))
    expect(result.kind === 'interaction' && result.inbound.interaction.action).toEqual({
      type: 'set',
      questionId: 'regions',
      labels: ['us'],
    })
  })

  it('checkboxes / multi-select (selected_options): set with every value', () => {
    const payload = withAction(
      actions.radioButtonsAction as Json,
      id({ verb: 'set', q: 1 }),
    ) as unknown as Json
    const action = (payload.actions as Json[])[0] as Json
    delete action.selected_option
    action.type = 'checkboxes'
    action.selected_options = [{ value: '0' }, { value: '1' }]
    const result = only(decodePayload(payload as unknown as SlackPayload, lookup))
    expect(result.kind === 'interaction' && result.inbound.interaction.action).toEqual({
      type: 'set',
      questionId: 'regions',
      labels: ['eu', 'us'],
    })
  })

  it.each([
    ['approve', { type: 'approve' }],
    ['reject', { type: 'reject' }],
    ['always', { type: 'always' }],
    ['submit', { type: 'submit' }],
    ['hold', { type: 'hold' }],
  ] as const)('%s (on a card that offers it)', (verb, action) => {
    const callId = verb === 'submit' || verb === 'hold' ? 'call-1' : 'appr'
    const payload = withAction(actions.action as Json, encodeComponentId({ callId, agent: AGENT, verb }, 255))
    const result = only(decodePayload(payload, lookup))
    expect(result.kind === 'interaction' && result.inbound.interaction.action).toEqual(action)
  })

  it('skip names the question', () => {
    const result = only(decodePayload(withAction(actions.action as Json, id({ verb: 'skip', q: 1 })), lookup))
    expect(result.kind === 'interaction' && result.inbound.interaction.action).toEqual({
      type: 'skip',
      questionId: 'regions',
    })
  })

  it('a question index not on the card is refused', () => {
    const result = only(
      decodePayload(withAction(actions.action as Json, id({ verb: 'choose', q: 7, o: 0 })), lookup),
    )
    expect(result.kind).toBe('invalid')
  })

  it('an unknown call yields nothing', () => {
    const payload = withAction(
      actions.action as Json,
      encodeComponentId({ callId: 'other', agent: AGENT, verb: 'submit' }),
    )
    expect(decodePayload(payload, lookup)).toEqual([])
  })

  it('the button that opens a form: open the modal with the trigger, then hold', () => {
    const payload = withAction(modals.action as Json, id({ verb: 'other', q: 0 }))
    const result = only(decodePayload(payload, lookup))
    expect(result).toMatchObject({
      kind: 'modal',
      modal: 'other',
      card: { callId: 'call-1', agent: AGENT },
      q: 0,
      hold: {
        interaction: { action: { type: 'hold' }, actor: { userId: 'U00FAKEUSER2', name: 'jane.smith' } },
      },
      context: { triggerId: '10367455086084.10229338706656.e675a0c0dacc24a1f7b84a7a426d1197' },
    })
  })

  it('an ephemeral message’s button (no `message` field): channel and ts from the container', () => {
    const payload = withAction(
      modals.ephemeralAction as Json,
      encodeComponentId({ callId: 'plan', agent: AGENT, verb: 'decline', q: 0 }),
    )
    const result = only(decodePayload(payload, lookup))
    expect(result).toMatchObject({
      kind: 'modal',
      modal: 'decline',
      context: { channel: 'C00FAKECHAN3', messageTs: '1771126609.000200' },
    })
  })
})

describe('recorded view_submission', () => {
  /** The recorded submission, addressed to askbridge's form, with the recorded text as the answer. */
  function submission(
    verb: 'other' | 'decline',
    q: number,
    text: string | null,
    type = 'view_submission',
  ): ViewPayload {
    const copy = structuredClone(modals.viewSubmission) as Json
    copy.type = type
    const view = copy.view as Json
    const callbackId = encodeComponentId(
      { callId: verb === 'decline' ? 'plan' : 'call-1', agent: AGENT, verb, q },
      255,
    )
    view.callback_id = callbackId
    view.private_metadata = encodeModalMetadata({ id: callbackId, channel: 'C00FAKECHAN2' })
    const recorded = (view.state as { values: Record<string, Record<string, Json>> }).values
    // Keep Slack's nesting (block_id -> action_id -> {type, value}); only the keys are ours.
    const input = { ...(recorded.message?.message ?? {}), value: text }
    view.state = { values: { [MODAL_INPUT.block]: { [MODAL_INPUT.action]: input } } }
    return copy as unknown as ViewPayload
  }

  it('as recorded (not askbridge’s form) it yields nothing', () => {
    expect(decodePayload(modals.viewSubmission as SlackPayload, lookup)).toEqual([])
    expect(decodePayload(modals.ephemeralViewSubmission as SlackPayload, lookup)).toEqual([])
  })

  it('Other…: the typed text, keyed to the question; private_metadata gives the channel', () => {
    const result = only(decodePayload(submission('other', 0, 'Hello!'), lookup, 1_000))
    expect(result).toEqual({
      kind: 'interaction',
      inbound: {
        callId: 'call-1',
        agent: AGENT,
        interaction: {
          id: 'slack:view:V0AB2P1M2HX:submit',
          actor: { platform: 'slack', userId: 'U00FAKEUSER2', name: 'jane.smith' },
          action: { type: 'other', questionId: 'colour', text: 'Hello!' },
          at: 1_000,
        },
      },
      context: { channel: 'C00FAKECHAN2' },
    })
  })

  it('a control the card does not offer is refused, not applied (approve on a questions card)', () => {
    const result = only(decodePayload(withAction(actions.action as Json, id({ verb: 'approve' })), lookup))
    expect(result).toMatchObject({ kind: 'invalid', message: 'That control is not offered on this card.' })
  })

  it('decline with feedback, and without', () => {
    const withText = only(decodePayload(submission('decline', 0, 'Add a rollback step'), lookup))
    expect(withText.kind === 'interaction' && withText.inbound.interaction.action).toEqual({
      type: 'decline',
      feedback: 'Add a rollback step',
    })
    const empty = only(decodePayload(submission('decline', 0, null), lookup))
    expect(empty.kind === 'interaction' && empty.inbound.interaction.action).toEqual({ type: 'decline' })
  })

  it('view_closed releases the hold', () => {
    const result = only(decodePayload(submission('other', 0, null, 'view_closed'), lookup))
    expect(result.kind === 'interaction' && result.inbound.interaction).toMatchObject({
      id: 'slack:view:V0AB2P1M2HX:closed',
      action: { type: 'release' },
    })
  })
})

describe('readSlackPayload', () => {
  it('checks a body once: the transport and the listener share the check of the same object', () => {
    const body = structuredClone(actions.action as Json)
    const first = readSlackPayload(body)
    expect(first).toMatchObject({ ok: true, payload: { type: 'block_actions' } })
    expect(readSlackPayload(body)).toBe(first)
    // Another object with the same content is checked on its own.
    expect(readSlackPayload(structuredClone(actions.action as Json))).not.toBe(first)
    const broken = { ...structuredClone(actions.action as Json), user: 42 }
    expect(readSlackPayload(broken)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/malformed block_actions/),
    })
    expect(readSlackPayload(broken)).toMatchObject({ ok: false })
    expect(readSlackPayload([])).toEqual({ ok: false, reason: 'the payload is not a JSON object' })
  })
})
