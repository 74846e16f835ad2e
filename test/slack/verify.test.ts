import { verifySlackRequest } from '@slack/bolt'
import { describe, expect, it } from 'vitest'
import { signSlackRequest, verifySlackSignature } from '../../adapters/slack/verify.js'

const SECRET = 'test-signing-secret'
const NOW = 1_900_000_000_000
const body = `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', actions: [] }))}`

describe('Slack request signing (v0)', () => {
  const ts = String(NOW / 1000)

  it('accepts a request signed with the secret', () => {
    expect(
      verifySlackSignature(
        SECRET,
        { timestamp: ts, signature: signSlackRequest(SECRET, ts, body), body },
        NOW,
      ),
    ).toEqual({
      ok: true,
    })
  })

  it('signs exactly as Bolt verifies', () => {
    expect(() =>
      verifySlackRequest({
        signingSecret: SECRET,
        body,
        headers: {
          'x-slack-signature': signSlackRequest(SECRET, ts, body),
          'x-slack-request-timestamp': Number(ts),
        },
        nowMilliseconds: NOW,
      }),
    ).not.toThrow()
  })

  it.each([
    ['missing headers', { timestamp: undefined, signature: undefined }, 'missing signature headers'],
    ['a forged signature', { signature: signSlackRequest('another-secret', ts, body) }, 'signature mismatch'],
    ['a malformed signature', { signature: 'v1=abc' }, 'malformed signature'],
    ['a malformed timestamp', { timestamp: '12e9' }, 'malformed timestamp'],
  ])('refuses %s', (_name, patch, reason) => {
    const request = { timestamp: ts, signature: signSlackRequest(SECRET, ts, body), body, ...patch }
    expect(verifySlackSignature(SECRET, request, NOW)).toEqual({ ok: false, reason })
  })

  it('refuses a tampered body', () => {
    const signature = signSlackRequest(SECRET, ts, body)
    expect(verifySlackSignature(SECRET, { timestamp: ts, signature, body: `${body}x` }, NOW)).toMatchObject({
      ok: false,
    })
  })

  it.each([
    [300, true],
    [301, false],
  ])('a request %i s old: accepted %s (five-minute window)', (age, ok) => {
    const old = String(NOW / 1000 - age)
    const result = verifySlackSignature(
      SECRET,
      { timestamp: old, signature: signSlackRequest(SECRET, old, body), body },
      NOW,
    )
    expect(result.ok).toBe(ok)
    if (!ok) expect(result).toEqual({ ok: false, reason: 'stale timestamp' })
  })

  it.each([
    [120, true],
    [300, true],
    [301, false],
  ])('a request stamped %i s ahead: accepted %s (Slack compares the absolute difference)', (ahead, ok) => {
    const future = String(NOW / 1000 + ahead)
    const result = verifySlackSignature(
      SECRET,
      { timestamp: future, signature: signSlackRequest(SECRET, future, body), body },
      NOW,
    )
    expect(result.ok).toBe(ok)
    if (!ok) expect(result).toEqual({ ok: false, reason: 'timestamp in the future' })
  })

  it('works on raw bytes', () => {
    const bytes = Buffer.from(body)
    expect(
      verifySlackSignature(
        SECRET,
        { timestamp: ts, signature: signSlackRequest(SECRET, ts, bytes), body: bytes },
        NOW,
      ).ok,
    ).toBe(true)
  })
})
