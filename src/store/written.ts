import { setBounded } from '../bounded.js'
import { callKeyString } from './fold.js'
import type { CallKey, VersionedCard } from './types.js'

/** A card's compare-and-set that succeeded: the version it wrote and, where the store has one, the card's identity. */
export interface Written {
  version: number
  /**
   * What tells this card from a card made later under the same key (PostgreSQL: its row's `ord`),
   * after retention deleted this one: the versions of the two can match.
   */
  identity?: string
}

/** A call's last write by this process: its card as written and, where the store keeps it, its row's record. */
export interface WrittenCall {
  card?: { state: string } & Written
  record?: string | undefined
}

/**
 * The last write of each of the few hundred calls this process wrote last (`Store.writtenCards`):
 * a click on a card this process just wrote is decided on it without reading the card back. A hint
 * only: the decision's compare-and-set fails on a card that moved on since (compared on its
 * identity too, where the store gives one), and the click is then decided again on the card as
 * read. The store drops a call's hint when its write conflicts or fails, and when it learns that
 * another process wrote the call.
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
   * Run a card's compare-and-set (`write`, which returns what it wrote or undefined on a conflict)
   * and remember its outcome: the card as written (`state`, its JSON, with its version and identity)
   * with what `also` says of the call, or, on a conflict or a failure, nothing. Returns the version.
   */
  async writing(
    key: CallKey,
    state: string,
    write: () => Promise<Written | undefined>,
    also: Omit<WrittenCall, 'card'> = {},
  ): Promise<number | undefined> {
    let written: Written | undefined
    try {
      written = await write()
    } finally {
      // A conflict or a failure: what this process last wrote is no guide to the card now.
      if (written === undefined) this.forget(key)
    }
    if (written !== undefined) this.wrote(key, { card: { ...written, state }, ...also })
    return written?.version
  }

  /** The card this process last wrote under `key`, as written. */
  card(key: CallKey): WrittenCall['card'] {
    return this.#calls.get(callKeyString(key))?.card
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
      found.push({ ...key, version: card.version, state: JSON.parse(card.state) as T, remembered: true })
    }
    return found
  }
}
