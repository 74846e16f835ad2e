/**
 * Slack request signing (v0), as a pure function: HMAC-SHA256 over `v0:{timestamp}:{raw body}`
 * with the app's signing secret, compared in constant time; requests more than five minutes old (or
 * ahead) are refused so a captured request cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** How old a signed request may be. @default 300 (five minutes, Slack's own rule) */
export const MAX_REQUEST_AGE_SECONDS = 300

export interface SignedRequest {
  /** `X-Slack-Request-Timestamp` header (seconds). */
  timestamp: string | undefined
  /** `X-Slack-Signature` header (`v0=<hex>`). */
  signature: string | undefined
  /** The exact bytes received. */
  body: string | Buffer
}

export type VerifyResult = { ok: true } | { ok: false; reason: string }

/** Sign a body the way Slack does (used by the fake Slack and by tests). */
export function signSlackRequest(
  signingSecret: string,
  timestamp: number | string,
  body: string | Buffer,
): string {
  const hmac = createHmac('sha256', signingSecret)
  hmac.update(`v0:${timestamp}:`)
  hmac.update(body)
  return `v0=${hmac.digest('hex')}`
}

/** Check a request's Slack signature; `nowMs` is injectable for tests. */
export function verifySlackSignature(
  signingSecret: string,
  request: SignedRequest,
  nowMs = Date.now(),
): VerifyResult {
  const { timestamp, signature, body } = request
  if (!timestamp || !signature) return { ok: false, reason: 'missing signature headers' }
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'malformed timestamp' }
  const age = Math.floor(nowMs / 1000) - Number(timestamp)
  if (age > MAX_REQUEST_AGE_SECONDS) return { ok: false, reason: 'stale timestamp' }
  // Slack's own guide compares the absolute difference (Bolt only checks the past): a timestamp
  // far ahead would keep a captured request replayable for as long as it is "in the future".
  if (-age > MAX_REQUEST_AGE_SECONDS) return { ok: false, reason: 'timestamp in the future' }
  if (!/^v0=[0-9a-f]{64}$/.test(signature)) return { ok: false, reason: 'malformed signature' }
  const expected = Buffer.from(signSlackRequest(signingSecret, timestamp, body))
  const given = Buffer.from(signature)
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return { ok: false, reason: 'signature mismatch' }
  }
  return { ok: true }
}
