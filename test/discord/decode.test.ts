import { generateKeyPairSync, sign } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { APIInteraction } from 'discord.js'
import { describe, expect, it } from 'vitest'
import {
  decodeInteraction,
  parseInteraction,
  personFromPayload,
  snowflakeTime,
} from '../../adapters/discord/decode.js'
import { declineModal, otherModal } from '../../adapters/discord/modal.js'
import { clamp, escapeMentions, noticeText, pickLocale, splitMarkdown } from '../../adapters/discord/text.js'
import { importPublicKey, ReplayGuard, verifyDiscordSignature } from '../../adapters/discord/verify.js'
import { cardRef, encodeComponentId } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { validateModal } from '../fakes/discord/validate.js'

type Json = Record<string, unknown>
const fixtures = JSON.parse(
  readFileSync(new URL('../fakes/discord/fixtures/gateway-and-buttons.json', import.meta.url), 'utf8'),
) as Record<string, Json>

/** A recorded payload with our custom_id (and optional extra data) in place of the demo's. */
function recorded(name: string, customId: string, data: Json = {}): APIInteraction {
  const payload = structuredClone(fixtures[name]) as Json
  payload.data = { ...(payload.data as Json), custom_id: customId, ...data }
  return payload as unknown as APIInteraction
}

const questions: AskUserQuestionItem[] = [
  { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] },
  {
    id: 'regions',
    question: 'Which regions?',
    multiSelect: true,
    options: Array.from({ length: 30 }, (_, i) => ({ label: `r${i}` })),
  },
  { id: 'why', question: 'Why?' },
]
const card: CardState = newCard({ callId: 'call-7', agentId: 'a', questions, now: 0 })
const id = (ref: Omit<Parameters<typeof encodeComponentId>[0], 'callId' | 'agent'>) =>
  encodeComponentId({ ...cardRef(card), ...ref })

describe('decoding recorded Discord payloads', () => {
  it('reads a guild button click: member.user, roles, locale, snowflake time', () => {
    const payload = recorded('buttonClickHello', id({ verb: 'choose', q: 0, o: 1 }))
    const decoded = decodeInteraction(payload, card)
    expect(decoded).toEqual({
      kind: 'apply',
      inbound: {
        ...cardRef(card),
        interaction: {
          id: '1457536583141163186',
          actor: {
            platform: 'discord',
            userId: '1033044521375764530',
            name: 'Test User',
            roles: [],
            locale: 'en-US',
          },
          action: { type: 'choose', questionId: 'colour', label: 'Blue' },
          at: snowflakeTime('1457536583141163186'),
        },
      },
    })
    // 2026-01-05, the day the fixture was recorded.
    expect(new Date(snowflakeTime('1457536583141163186')).toISOString().slice(0, 10)).toBe('2026-01-05')
  })

  it('prefers the member nickname, and reads DMs from `user` (no roles)', () => {
    const nick = parseInteraction(recorded('differentUser', id({ verb: 'submit' })))
    expect(nick?.actor).toMatchObject({ userId: '9876543210987654321', name: 'Different Nick' })
    const dm = parseInteraction(recorded('dmButtonClick', id({ verb: 'submit' })))
    expect(dm?.actor).toEqual({
      platform: 'discord',
      userId: '1033044521375764530',
      name: 'Test User',
      locale: 'en-US',
    })
    expect(dm?.channelId).toBe('DM_CHANNEL_123')
  })

  it('carries the guild locale and the message id', () => {
    const parsed = parseInteraction(recorded('buttonClickInfo', id({ verb: 'hold' })))
    expect(parsed).toMatchObject({ guildLocale: 'en-US', source: 'component', ref: { verb: 'hold' } })
    expect(parsed?.messageId).toBe((fixtures.buttonClickInfo?.message as Json | undefined)?.id)
  })

  it('ignores the recorded demo buttons (not our custom_ids) and non-component interactions', () => {
    for (const name of [
      'buttonClickHello',
      'buttonClickMessages',
      'buttonClickInfo',
      'buttonClickGoodbye',
      'dmButtonClick',
    ])
      expect(decodeInteraction(fixtures[name] as unknown as APIInteraction, card)).toBeUndefined()
    expect(
      parseInteraction({ type: 1, id: '1', application_id: '1', token: 't', version: 1 } as never),
    ).toBeUndefined()
  })

  it('reads people from every recorded interaction payload', () => {
    for (const [name, payload] of Object.entries(fixtures)) {
      if ((payload as Json).type !== 3) continue
      expect(personFromPayload(payload as unknown as APIInteraction)?.userId, name).toMatch(/^\d+$/)
    }
  })
})

describe('mapping onto the card', () => {
  it('a single-select menu becomes choose; a multi-select page keeps other pages', () => {
    const single = recorded('buttonClickHello', id({ verb: 'set', q: 0, o: 0 }), {
      component_type: 3,
      values: ['0'],
    })
    expect(decodeInteraction(single, card)).toMatchObject({
      inbound: { interaction: { action: { type: 'choose', questionId: 'colour', label: 'Red' } } },
    })
    const withDraft = { ...card, drafts: { regions: { selected: ['r1', 'r26'] } } }
    const page0 = recorded('buttonClickHello', id({ verb: 'set', q: 1, o: 0 }), {
      component_type: 3,
      values: ['3', '2'],
    })
    expect(decodeInteraction(page0, withDraft)).toMatchObject({
      inbound: {
        interaction: { action: { type: 'set', questionId: 'regions', labels: ['r2', 'r3', 'r26'] } },
      },
    })
    const page1 = recorded('buttonClickHello', id({ verb: 'set', q: 1, o: 1 }), {
      component_type: 3,
      values: [],
    })
    expect(decodeInteraction(page1, withDraft)).toMatchObject({
      inbound: { interaction: { action: { type: 'set', labels: ['r1'] } } },
    })
    // A value from another page is not trusted.
    const forged = recorded('buttonClickHello', id({ verb: 'set', q: 1, o: 1 }), {
      component_type: 3,
      values: ['3'],
    })
    expect(decodeInteraction(forged, withDraft)).toMatchObject({ kind: 'refuse' })
  })

  it('Other… and Decline open a modal and hold the wait; closed cards refuse', () => {
    const other = recorded('buttonClickHello', id({ verb: 'other', q: 2 }))
    expect(decodeInteraction(other, card)).toMatchObject({
      kind: 'modal',
      modal: 'other',
      q: 2,
      inbound: { interaction: { action: { type: 'hold' } } },
    })
    expect(decodeInteraction(other, { ...card, status: 'answered' })).toEqual({
      kind: 'refuse',
      message: 'This question was already answered by someone.',
    })
    expect(decodeInteraction(other, undefined)).toMatchObject({ kind: 'refuse' })
  })

  it('modal submissions become other / decline (Label and legacy row layouts)', () => {
    const plan = newCard({
      callId: 'call-7',
      agentId: 'a',
      now: 0,
      questions: [
        {
          id: 'plan',
          question: 'The plan',
          options: [{ label: 'Go' }, { label: 'Stop' }],
          intent: { kind: 'plan-review', approve: 'Go' },
        },
      ],
    })
    const label = recorded('buttonClickHello', id({ verb: 'form', q: 2 }), {
      components: [{ type: 18, id: 1, component: { type: 4, id: 2, custom_id: 'text', value: ' because ' } }],
    }) as unknown as Json
    label.type = 5
    expect(decodeInteraction(label as unknown as APIInteraction, card)).toMatchObject({
      inbound: { interaction: { action: { type: 'other', questionId: 'why', text: 'because' } } },
    })
    const row = recorded('buttonClickHello', id({ verb: 'decline', q: 0 }), {
      components: [{ type: 1, components: [{ type: 4, custom_id: 'text', value: 'use smaller steps' }] }],
    }) as unknown as Json
    row.type = 5
    expect(decodeInteraction(row as unknown as APIInteraction, card)).toMatchObject({ kind: 'refuse' })
    expect(decodeInteraction(row as unknown as APIInteraction, plan)).toMatchObject({
      inbound: { interaction: { action: { type: 'decline', feedback: 'use smaller steps' } } },
    })
    const empty = recorded('buttonClickHello', id({ verb: 'decline', q: 0 }), {
      components: [{ type: 18, component: { type: 4, custom_id: 'text', value: '' } }],
    }) as unknown as Json
    empty.type = 5
    expect(decodeInteraction(empty as unknown as APIInteraction, plan)).toMatchObject({
      inbound: { interaction: { action: { type: 'decline' } } },
    })
  })

  it('refuses indexes that are not on the card', () => {
    expect(
      decodeInteraction(recorded('buttonClickHello', id({ verb: 'choose', q: 0, o: 9 })), card),
    ).toMatchObject({
      kind: 'refuse',
    })
    expect(decodeInteraction(recorded('buttonClickHello', id({ verb: 'skip', q: 9 })), card)).toMatchObject({
      kind: 'refuse',
    })
  })
})

describe('modals', () => {
  it('stay within the modal limits for long questions and headers', () => {
    const long = newCard({
      callId: 'c'.repeat(64),
      agentId: 'a',
      now: 0,
      questions: [
        { id: 'q', question: 'Q'.repeat(5000), header: 'H'.repeat(300), options: [{ label: 'x' }] },
      ],
    })
    long.drafts = { q: { selected: [], custom: 'v'.repeat(5000) } }
    for (const modal of [otherModal(long, 0), declineModal(long, 0)]) {
      expect(validateModal(modal)).toEqual([])
      expect(modal.title.length).toBeLessThanOrEqual(45)
    }
    expect(otherModal(card, 2).title).toBe('Your answer')
  })
})

describe('text helpers', () => {
  it('splits markdown at boundaries and keeps every character but whitespace', () => {
    const text = Array.from({ length: 500 }, (_, i) => `Paragraph ${i} ${'word '.repeat(i % 30)}`).join(
      '\n\n',
    )
    const chunks = splitMarkdown(text, 1000)
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(1000)
    expect(chunks.join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''))
  })

  it('splits an unbroken string and never halves an emoji', () => {
    const chunks = splitMarkdown('😀'.repeat(100), 41)
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(41)
      expect(c).not.toMatch(/[\ud800-\udbff]$/)
    }
    expect(chunks.join('')).toBe('😀'.repeat(100))
    expect(clamp('😀'.repeat(10), 4)).toBe('😀…')
  })

  it('escapes every mention form and picks locales', () => {
    expect(escapeMentions('@everyone @here <@1> <@!2> <@&3> <#4>')).not.toMatch(
      /@everyone|@here|<@\d|<@!\d|<@&\d|<#\d/,
    )
    expect(pickLocale({ en: 'Yes', de: 'Ja', 'pt-BR': 'Sim' }, 'de')).toBe('Ja')
    expect(pickLocale({ en: 'Yes', pt: 'Sim' }, 'pt-BR')).toBe('Sim')
    expect(pickLocale({ en: 'Yes', 'es-ES': 'Sí' }, 'es-419')).toBe('Sí')
    expect(pickLocale({ en: 'Yes' }, 'fr')).toBe('Yes')
  })
})

describe('Ed25519 verification', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const hex = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex')
  const key = importPublicKey(hex)
  const body = Buffer.from('{"type":1}')
  const ts = '1767574193'
  const good = sign(null, Buffer.concat([Buffer.from(ts), body]), privateKey).toString('hex')

  it('accepts a real signature and refuses forged ones', () => {
    expect(verifyDiscordSignature(key, good, ts, body)).toBe(true)
    expect(verifyDiscordSignature(key, good, '1767574194', body)).toBe(false)
    expect(verifyDiscordSignature(key, good, ts, Buffer.from('{"type":2}'))).toBe(false)
    expect(
      verifyDiscordSignature(
        key,
        `${good.slice(0, -1)}0`.replace(/.$/, good.endsWith('0') ? '1' : '0'),
        ts,
        body,
      ),
    ).toBe(false)
    expect(verifyDiscordSignature(key, 'zz', ts, body)).toBe(false)
    expect(verifyDiscordSignature(key, undefined, ts, body)).toBe(false)
    expect(() => importPublicKey('not-hex')).toThrow()
  })
})

describe('stale and replayed HTTP interactions', () => {
  const sig = 'ab'.repeat(64)
  it('admits a timestamp up to 300 s either side of the clock, once', () => {
    let now = 1_767_574_193_000
    const guard = new ReplayGuard(() => now)
    expect(guard.admit(sig, '1767573893')).toBe(true) // exactly 300 s old
    expect(guard.admit(sig, '1767573893')).toBe(false) // replayed
    expect(guard.admit(sig.toUpperCase(), '1767573893')).toBe(false) // same signature, other case
    expect(guard.admit('cd'.repeat(64), '1767573892')).toBe(false) // 301 s old
    expect(guard.admit('cd'.repeat(64), '1767574493')).toBe(true) // 300 s ahead
    expect(guard.admit('ef'.repeat(64), '1767574494')).toBe(false) // 301 s ahead
    expect(guard.admit('ef'.repeat(64), 'soon')).toBe(false)
    expect(guard.admit('ef'.repeat(64), '')).toBe(false)
    // Much later the old signature has been forgotten, but its timestamp is stale anyway.
    now += 3_600_000
    expect(guard.admit(sig, '1767573893')).toBe(false)
  })
})

describe('modals and notices never look like a ping', () => {
  it('escapes the modal title (from the header) and the question shown in it', () => {
    const bait = '@everyone <@&987654321>'
    const c = newCard({
      callId: 'call-8',
      agentId: 'a',
      now: 0,
      questions: [{ id: 'q', question: `Q ${bait}`, header: `H ${bait}`, options: [{ label: 'x' }] }],
    })
    for (const modal of [otherModal(c, 0), declineModal(c, 0)]) {
      expect(validateModal(modal)).toEqual([])
      expect(JSON.stringify(modal)).not.toMatch(/@everyone|<@&\d/)
    }
  })

  it('escapes mentions in private notices', () => {
    expect(noticeText('Already answered by <@&987654321> @here')).not.toMatch(/@here|<@&\d/)
    expect(noticeText(`${'n'.repeat(1995)} @everyone`)).toHaveLength(2000)
  })
})

describe('modal limits exactly and one past', () => {
  const withHeader = (header: string, custom?: string) => {
    const c = newCard({
      callId: 'call-9',
      agentId: 'a',
      now: 0,
      questions: [{ id: 'q', question: 'Q', header, options: [{ label: 'x' }] }],
    })
    if (custom !== undefined) c.drafts = { q: { selected: [], custom } }
    return c
  }

  it('shows a 45-character title whole and shortens a 46-character one', () => {
    // "Other: " is 7 characters.
    const at = otherModal(withHeader('h'.repeat(38)), 0)
    expect(at.title).toBe(`Other: ${'h'.repeat(38)}`)
    expect(at.title).toHaveLength(45)
    const past = otherModal(withHeader('h'.repeat(39)), 0)
    expect(past.title).toHaveLength(45)
    expect(past.title.endsWith('…')).toBe(true)
    for (const modal of [at, past]) expect(validateModal(modal)).toEqual([])
  })

  it('prefills a 4000-character answer whole and keeps a longer one within the text input', () => {
    const at = otherModal(withHeader('H', 'v'.repeat(4000)), 0)
    const past = otherModal(withHeader('H', 'v'.repeat(4001)), 0)
    for (const modal of [at, past]) {
      expect(validateModal(modal)).toEqual([])
      expect(modal.components.length).toBeGreaterThanOrEqual(1)
      expect(modal.components.length).toBeLessThanOrEqual(5)
    }
    expect(JSON.stringify(at)).toContain(`"value":"${'v'.repeat(4000)}"`)
    expect(JSON.stringify(past)).not.toContain('v'.repeat(4001))
  })
})
