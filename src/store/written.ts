import { setBounded } from '../bounded.js'
import { callKeyString } from './fold.js'
import type { CallKey, VersionedCard } from './types.js'

/** A call's last write by this process: its card as written and, where the store keeps it, its row's record. */
export interface WrittenCall {
  card?: { version: number; state: string }
  record?: string | undefined
}

/**
 * The last write of each of the few hundred calls this process wrote last (`Store.writtenCards`):
 * a click on a card this process just wrote is decided on it without reading the card back. A hint
 * only: the decision's compare-and-set fails on a card that moved on since, and the click is then
 * decided again on the card as read. The store drops a call's hint when its write conflicts or
 * fails, and when it learns that another process wrote the call.
 */
export class WrittenCards {
  readonly #calls = new Map<string, { key: CallKey } & WrittenCall>()
  readonly #limit: number

  constructor(limit = 256) {
    this.#limit = limit
  }

  /** What this process just wrote to a call (merged with what it wrote before); the oldest call goes past the limit. */
  wrote(key: CallKey, write: WrittenCall): void {
    const k = callKeyString(key)
    const last = this.#calls.get(k)
    setBounded(
      this.#calls,
      k,
      { key: { agentId: key.agentId, callId: key.callId }, ...last, ...write },
      this.#limit,
    )
  }

  /**
   * Run a card's compare-and-set (`write`, which returns the new version or undefined on a
   * conflict) and remember its outcome: the card as written (`state`, its JSON) with what `also`
   * says of the call, or, on a conflict or a failure, nothing.
   */
  async writing(
    key: CallKey,
    state: string,
    write: () => Promise<number | undefined>,
    also: Omit<WrittenCall, 'card'> = {},
  ): Promise<number | undefined> {
    let version: number | undefined
    try {
      version = await write()
    } finally {
      // A conflict or a failure: what this process last wrote is no guide to the card now.
      if (version === undefined) this.forget(key)
    }
    if (version !== undefined) this.wrote(key, { card: { version, state }, ...also })
    return version
  }

  forget(key: CallKey): void {
    this.#calls.delete(callKeyString(key))
  }

  clear(): void {
    this.#calls.clear()
  }

  /** The cards with this callId as written (each state parsed anew); `row` is told each one's record. */
  cards<T>(
    callId: string,
    row?: (key: CallKey, version: number, record: string | null) => void,
  ): Array<VersionedCard<T> & CallKey> {
    const found: Array<VersionedCard<T> & CallKey> = []
    for (const { key, card, record } of this.#calls.values()) {
      if (key.callId !== callId || !card) continue
      row?.(key, card.version, record ?? null)
      found.push({ ...key, version: card.version, state: JSON.parse(card.state) as T })
    }
    return found
  }
}
