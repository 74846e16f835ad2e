import { describe, expect, it } from 'vitest'
import { ACTION_KEY, type TeamsMessage } from '../../adapters/teams/card-schema.js'
import { TEAMS_LIMITS } from '../../adapters/teams/limits.js'
import { noticeToTeamsMessage } from '../../adapters/teams/notice.js'
import { cardToTeamsMessage, messageBytes } from '../../adapters/teams/render.js'
import { decodeComponentId } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { validateActivity } from '../fakes/teams/validate.js'

function card(questions: AskUserQuestionItem[], extra: Partial<CardState> = {}): CardState {
  return { ...newCard({ callId: 'call-1', agentId: 'a', questions, now: 1_700_000_000_000 }), ...extra }
}

/** Every message passes the fake connector's independent checks. */
function render(c: CardState, options: Parameters<typeof cardToTeamsMessage>[1] = {}): TeamsMessage {
  const message = cardToTeamsMessage(c, options)
  expect(validateActivity(message)).toEqual([])
  return message
}

type Json = Record<string, unknown>
function walk(message: TeamsMessage): Json[] {
  const out: Json[] = []
  const visit = (x: unknown) => {
    if (Array.isArray(x)) x.forEach(visit)
    else if (x && typeof x === 'object') {
      out.push(x as Json)
      for (const v of Object.values(x)) visit(v)
    }
  }
  visit(message.attachments[0].content)
  return out
}
const executes = (m: TeamsMessage) => walk(m).filter((x) => x.type === 'Action.Execute')
const verbs = (m: TeamsMessage) =>
  executes(m).map((a) => decodeComponentId(String((a.data as Json)[ACTION_KEY]))?.verb)
const texts = (m: TeamsMessage) =>
  walk(m)
    .filter((x) => x.type === 'TextBlock')
    .map((x) => String(x.text))
    .join('\n')

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}

describe('cardToTeamsMessage', () => {
  it('a single question: one Action.Execute per option and an Other text input with its own Send', () => {
    const m = render(card([colour]))
    expect(verbs(m)).toEqual(['choose', 'choose', 'other'])
    const input = walk(m).find((x) => x.type === 'Input.Text')
    if (!input) throw new Error('no text input')
    expect(input.id).toBe(String(((input.inlineAction as Json).data as Json)[ACTION_KEY]))
    expect(texts(m)).toContain('Which colour?')
  })

  it('a batch is one card: choice sets for multi-select, Skip per question and one Submit', () => {
    const m = render(
      card([
        colour,
        { id: 'r', question: 'Regions?', multiSelect: true, options: [{ label: 'eu' }, { label: 'us' }] },
        { id: 'why', question: 'Why?' },
      ]),
    )
    const sets = walk(m).filter((x) => x.type === 'Input.ChoiceSet')
    expect(sets).toHaveLength(1)
    expect(sets[0]?.isMultiSelect).toBe(true)
    expect(verbs(m)).toEqual([
      'choose',
      'choose',
      'other',
      'skip',
      'set',
      'other',
      'skip',
      'other',
      'skip',
      'submit',
    ])
  })

  it('an approval offers the buttons and reason inputs', () => {
    const m = render(
      card(
        [
          {
            id: 'd',
            question: 'Deploy?',
            options: [{ label: 'Approve' }, { label: 'Reject' }],
            intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
          },
        ],
        { kind: 'approval' },
      ),
    )
    expect(verbs(m)).toEqual(['approve', 'reject', 'approve', 'reject'])
    expect(walk(m).filter((x) => x.type === 'Input.Text')).toHaveLength(2)
  })

  it('agent text never makes a mention or a broadcast; configured mentions are <at> entities', () => {
    const m = render(card([{ ...colour, question: '<at>Boss</at> @everyone pick one' }]), {
      mentions: [{ id: '00000000-0000-0000-0000-000000000001', name: 'Ann' }],
    })
    const all = texts(m)
    expect(all).not.toContain('<at>Boss</at>')
    expect(all).not.toMatch(/@everyone/)
    expect(all).toContain('<at>Ann</at>')
    expect(m.attachments[0].content.msteams.entities).toEqual([
      {
        type: 'mention',
        text: '<at>Ann</at>',
        mentioned: { id: '00000000-0000-0000-0000-000000000001', name: 'Ann' },
      },
    ])
  })

  it('a finished card has no actions and says who answered', () => {
    const done = card([colour], {
      status: 'answered',
      result: { answers: [{ id: 'colour', selected: ['Red'] }] },
      answeredBy: { platform: 'teams', userId: 'u1', name: 'Ann' },
      answeredAt: 1_700_000_100_000,
    })
    const m = render(done)
    expect(executes(m)).toEqual([])
    expect(texts(m)).toContain('Answered by Ann')
  })

  describe('the size limit', () => {
    const sized = (n: number) => card([{ ...colour, detail: 'x'.repeat(n) }])
    const full = (n: number) => cardToTeamsMessage(sized(n), { inboxUrl: 'https://bridge.example/inbox' })
    // The detail's characters are one byte each: find the length that fills the limit exactly.
    const base = messageBytes(full(1))
    const exact = 1 + TEAMS_LIMITS.messageBytes - base

    it('a card exactly at the limit is sent whole', () => {
      const m = render(sized(exact), { inboxUrl: 'https://bridge.example/inbox' })
      expect(messageBytes(m)).toBe(TEAMS_LIMITS.messageBytes)
      expect(texts(m)).toContain('x'.repeat(exact))
      expect(walk(m).some((x) => x.type === 'Action.OpenUrl')).toBe(false)
    })

    it('one byte past the limit is cut down, keeps its buttons and links to the inbox', () => {
      const m = render(sized(exact + 1), { inboxUrl: 'https://bridge.example/inbox' })
      expect(messageBytes(m)).toBeLessThanOrEqual(TEAMS_LIMITS.messageBytes)
      expect(texts(m)).not.toContain('xxxxxxxxxx')
      expect(walk(m).find((x) => x.type === 'Action.OpenUrl')?.url).toBe('https://bridge.example/inbox')
      expect(verbs(m)).toEqual(['choose', 'choose', 'other'])
    })

    it('a batch too large even without details keeps only the link', () => {
      const many = card(
        Array.from({ length: 12 }, (_, i) => ({
          id: `q${i}`,
          question: `Q${i}`,
          options: Array.from({ length: 20 }, (_, k) => ({ label: `${'y'.repeat(900)}${k}` })),
        })),
      )
      const m = render(many, { inboxUrl: 'https://bridge.example/inbox' })
      expect(executes(m)).toEqual([])
      expect(walk(m).some((x) => x.type === 'Action.OpenUrl')).toBe(true)
    })
  })
})

describe('noticeToTeamsMessage', () => {
  it('a notice is a card without buttons, agent text mentions nobody, within the size limit', () => {
    const m = noticeToTeamsMessage({
      title: 'Claude Code is waiting <at>Boss</at>',
      text: `**Done.** @everyone ${'z'.repeat(40_000)}`,
      agentId: 'claude-code:s1',
      id: 'n1',
      at: 1_700_000_000_000,
    })
    expect(validateActivity(m)).toEqual([])
    expect(executes(m)).toEqual([])
    expect(texts(m)).not.toContain('<at>Boss</at>')
    expect(texts(m)).not.toMatch(/@everyone/)
    expect(texts(m)).toContain('for your information')
  })
})

describe('refresh.userIds (Universal Actions)', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `29:user-${i}`)
  const content = (m: TeamsMessage) => m.attachments[0].content

  it('the card everyone sees keeps the question and status without controls, and refreshes for the people listed', () => {
    const m = render(card([colour]), { refresh: { userIds: ['29:ann', '29:bob'], actionable: false } })
    expect(texts(m)).toContain('Which colour?')
    expect(walk(m).filter((x) => x.type === 'Input.Text' || x.type === 'ActionSet')).toEqual([])
    expect(content(m).actions).toBeUndefined()
    expect(content(m).refresh).toEqual({
      action: {
        type: 'Action.Execute',
        title: 'Refresh',
        verb: 'refresh',
        data: { askbridgeCard: { callId: 'call-1', agent: expect.any(String) } },
      },
      userIds: ['29:ann', '29:bob'],
    })
    // The only Action.Execute is the refresh itself.
    expect(executes(m)).toEqual([content(m).refresh?.action])
  })

  it('the copy for one of them has every control and the same refresh', () => {
    const base = render(card([colour]), { refresh: { userIds: ['29:ann'], actionable: false } })
    const own = render(card([colour]), { refresh: { userIds: ['29:ann'], actionable: true } })
    expect(verbs(own).filter(Boolean)).toEqual(['choose', 'choose', 'other'])
    expect(content(own).refresh).toEqual(content(base).refresh)
  })

  it('over 60 people: no refresh, and everyone sees the buttons (the bridge refuses per click)', () => {
    const m = render(card([colour]), { refresh: { userIds: ids(61), actionable: false } })
    expect(content(m).refresh).toBeUndefined()
    expect(verbs(m)).toEqual(['choose', 'choose', 'other'])
    const sixty = render(card([colour]), { refresh: { userIds: ids(60), actionable: false } })
    expect(content(sixty).refresh?.userIds).toHaveLength(60)
  })

  it('a finished card has no refresh: there is nothing left to answer', () => {
    const m = render(card([colour], { status: 'answered' }), {
      refresh: { userIds: ['29:ann'], actionable: true },
    })
    expect(content(m).refresh).toBeUndefined()
    expect(executes(m)).toEqual([])
  })
})
