import type { CallKey, ListedCard, PostRecord, VersionedCard } from './types.js'

/**
 * Rows both stores read back, as the drivers give them (PostgreSQL's BIGINT comes as a string,
 * SQLite's INTEGER as a number), mapped to records in one place so the two stores cannot drift.
 */
export interface PostRow {
  agent_id: string
  call_id: string
  dest_key: string
  platform: string
  ref: string
  created_at: string | number
}

export interface CardRow {
  agent_id: string
  call_id: string
  version: number
  state: string
  updated_at?: string | number
}

export function postOf(r: PostRow): PostRecord {
  return {
    agentId: r.agent_id,
    callId: r.call_id,
    destKey: r.dest_key,
    platform: r.platform,
    ref: JSON.parse(r.ref) as unknown,
    createdAt: Number(r.created_at),
  }
}

export function cardsOf<T>(rows: unknown[]): Array<VersionedCard<T> & CallKey> {
  return (rows as CardRow[]).map((r) => ({
    agentId: r.agent_id,
    callId: r.call_id,
    version: r.version,
    state: JSON.parse(r.state) as T,
  }))
}

/** `listCards` rows: cards with when they were last written. */
export function listedCardsOf<T>(rows: unknown[]): Array<ListedCard<T>> {
  return cardsOf<T>(rows).map((card, i) => ({ ...card, updatedAt: Number((rows[i] as CardRow).updated_at) }))
}
