import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  agentTag,
  COMPONENT_ID_PREFIX,
  CodecError,
  cardRef,
  decodeComponentId,
  encodeComponentId,
  refMatches,
} from '../../src/card/codec.js'

const longest = { agentId: 'a'.repeat(64), callId: 'c'.repeat(64) }

describe('component ids carry the call and its agent', () => {
  it('the longest agentId and callId with the largest indexes fit Discord’s 100-character custom_id', () => {
    const id = encodeComponentId({ ...cardRef(longest), verb: 'choose', q: 9999, o: 9999 }, 100)
    expect(id.length).toBeLessThanOrEqual(100)
    expect(decodeComponentId(id)).toEqual({ ...cardRef(longest), verb: 'choose', q: 9999, o: 9999 })
  })

  it('an agent’s tag is the same however many agents were tagged before (the remembered tags wrap)', () => {
    const sha = (id: string) => createHash('sha256').update(id).digest('base64url').slice(0, 8)
    const first = agentTag('agent-0')
    for (let i = 0; i < 3000; i++) expect(agentTag(`agent-${i}`)).toBe(sha(`agent-${i}`))
    expect(agentTag('agent-0')).toBe(first)
  })

  it('an id exactly at the limit encodes; one character over is refused', () => {
    const ref = { ...cardRef(longest), verb: 'choose' as const, q: 9999, o: 9999 }
    const length = encodeComponentId(ref).length
    expect(encodeComponentId(ref, length)).toHaveLength(length)
    expect(() => encodeComponentId(ref, length - 1)).toThrow(CodecError)
  })

  it('a 64-character callId encodes; 65 characters is refused', () => {
    expect(() =>
      encodeComponentId({ callId: 'c'.repeat(64), agent: agentTag('a'), verb: 'submit' }),
    ).not.toThrow()
    expect(() => encodeComponentId({ callId: 'c'.repeat(65), agent: agentTag('a'), verb: 'submit' })).toThrow(
      CodecError,
    )
  })

  it('two agents using the same callId get different ids, each naming only its own call', () => {
    const alice = encodeComponentId({ ...cardRef({ agentId: 'alice', callId: 'toolu_1' }), verb: 'submit' })
    const bob = encodeComponentId({ ...cardRef({ agentId: 'bob', callId: 'toolu_1' }), verb: 'submit' })
    expect(alice).not.toBe(bob)
    const ref = decodeComponentId(alice)
    expect(ref && refMatches(ref, { agentId: 'alice', callId: 'toolu_1' })).toBe(true)
    expect(ref && refMatches(ref, { agentId: 'bob', callId: 'toolu_1' })).toBe(false)
  })

  it('an id without an agent tag is not ours: a callId alone names no card', () => {
    expect(decodeComponentId('ab1|toolu_1|c|0|1')).toBeUndefined()
    expect(decodeComponentId('ab2|toolu_1|c|0|1')).toBeUndefined()
    expect(decodeComponentId('ab2|short|toolu_1|c')).toBeUndefined()
    expect(COMPONENT_ID_PREFIX.test('ab1|toolu_1|c')).toBe(false)
  })

  it('decodes what it encodes, with the tag, for every field count', () => {
    const ref = cardRef({ agentId: 'alice', callId: 'toolu_1' })
    for (const extra of [{}, { q: 3 }, { q: 3, o: 7 }, { o: 7 }]) {
      const id = encodeComponentId({ ...ref, verb: 'page', ...extra })
      expect(decodeComponentId(id)).toEqual({ ...ref, verb: 'page', ...extra })
    }
    expect(decodeComponentId(`ab2|${ref.agent}|toolu_1|c|1|2|3`)).toBeUndefined()
  })
})
