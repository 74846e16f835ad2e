import { createHash } from 'node:crypto'
import type { CardState } from './types.js'

/** JSON with object keys sorted at every level (what `jq -cS .` prints), so anyone can rebuild it. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * What a reviewer was shown, as a SHA-256 (hex) that the audit keeps with every decision:
 * `sha256(canonicalJson({questions, toolInput}))`, where `questions` are the card's questions
 * (every text, option and plan every surface renders) and `toolInput` is a Claude Code hook's
 * whole tool input (`null` for other asks).
 */
export function shownDigest(card: Pick<CardState, 'questions'>, toolInput: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ questions: card.questions, toolInput: toolInput ?? null }))
    .digest('hex')
}
