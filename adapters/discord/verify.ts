/**
 * Ed25519 verification of HTTP interactions (`X-Signature-Ed25519` over timestamp + raw body),
 * with node:crypto only.
 */
import { createPublicKey, type KeyObject, verify } from 'node:crypto'

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** Import the application's public key (64 hex characters, as shown in the Developer Portal). */
export function importPublicKey(hex: string): KeyObject {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('DISCORD_PUBLIC_KEY must be 64 hex characters')
  return createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, Buffer.from(hex, 'hex')]),
    format: 'der',
    type: 'spki',
  })
}

/** True when `signature` (hex) signs `timestamp + body` under `key`. Never throws. */
export function verifyDiscordSignature(
  key: KeyObject,
  signature: string | undefined,
  timestamp: string | undefined,
  body: Buffer,
): boolean {
  if (!signature || !timestamp || !/^[0-9a-fA-F]{128}$/.test(signature)) return false
  try {
    return verify(
      null,
      Buffer.concat([Buffer.from(timestamp, 'utf8'), body]),
      key,
      Buffer.from(signature, 'hex'),
    )
  } catch {
    return false
  }
}

/**
 * How far an HTTP interaction's `X-Signature-Timestamp` may be from our clock, in seconds. Discord
 * delivers within seconds; a request signed longer ago is a recording being played back.
 */
export const SIGNATURE_MAX_AGE_S = 300

/** Where replicas remember what they have seen (the store's `rememberOnce`). */
export interface SeenOnce {
  rememberOnce(key: string, until: number, now: number): Promise<boolean>
}

/** Signatures remembered at most (a flood of valid requests cannot grow memory without bound). */
const MAX_REMEMBERED = 100_000

/**
 * Refuses stale and replayed HTTP interactions. A valid signature only proves Discord signed the
 * request once; without this, a captured request could be sent again at any later time.
 * Use after `verifyDiscordSignature`, so only genuine requests are remembered.
 */
export class ReplayGuard {
  /** Signature (lower-case hex) -> timestamp (s); insertion order is arrival order. */
  private readonly seen = new Map<string, number>()

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxAgeS = SIGNATURE_MAX_AGE_S,
    /** Several bridges on one database: a request one of them took is a replay to the others. */
    private readonly shared?: SeenOnce,
  ) {}

  /** {@link admit}, then, with a shared store, remembered there once for every replica. */
  async admitShared(signature: string, timestamp: string): Promise<boolean> {
    if (!this.admit(signature, timestamp)) return false
    if (!this.shared) return true
    // Past its timestamp's window the request is stale anyway: remembered only that long.
    const until = (Number(timestamp) + this.maxAgeS) * 1000 + 1000
    return this.shared.rememberOnce(`discord:${signature.toLowerCase()}`, until, this.now())
  }

  /** True (and remembered) when the timestamp is fresh and this signature was not seen before. */
  admit(signature: string, timestamp: string): boolean {
    if (!/^\d{1,12}$/.test(timestamp)) return false
    const at = Number(timestamp)
    const now = this.now() / 1000
    if (Math.abs(now - at) > this.maxAgeS) return false
    for (const [key, ts] of this.seen) {
      if (ts >= now - this.maxAgeS && this.seen.size < MAX_REMEMBERED) break
      this.seen.delete(key)
    }
    const key = signature.toLowerCase()
    if (this.seen.has(key)) return false
    this.seen.set(key, at)
    return true
  }
}
