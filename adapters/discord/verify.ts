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
