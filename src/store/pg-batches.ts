import type pg from 'pg'
import { type OnceStatement, type TransactionNotes, transactOnce, transactTogether } from './pg-connect.js'
import { inLockOrder } from './pg-leases.js'
import type { CallKey } from './types.js'

/** Most transactions committed together. */
const MOST = 32

interface Waiting {
  /** The call whose lock the transaction takes, if any: orders those committed together. */
  key: CallKey
  statements: ReadonlyArray<OnceStatement>
  notes: TransactionNotes
  resolve: (results: pg.QueryResult[]) => void
  reject: (error: unknown) => void
}

/**
 * One-round-trip transactions ({@link transactOnce}) committed together when they queue: at most
 * `lanes` are on their way at a time, and each that arrives meanwhile waits for a lane, then goes
 * with the others that waited, as one transaction (one round trip, one COMMIT, one WAL flush).
 * Under load, the server's and this process's work per transaction is then a fraction of what it
 * is alone (the click is the store's commonest write); alone, a transaction goes at once. Each
 * keeps its own statements, results and notes.
 *
 * Transactions committed together succeed or fail together. They go in the order of their calls'
 * locks ({@link inLockOrder}), so two such groups on one database (or a group and an append of
 * several calls) wait for each other instead of deadlocking. Should the server refuse a statement (a deadlock with a statement that locks several
 * rows, or one member's own failure), it rolled them all back: each then runs again alone, and its
 * outcome is its own. Any other failure (a connection lost, a notification refused after the
 * COMMIT) fails them all, as it would each alone.
 */
export class OnceBatches {
  readonly #waiting: Waiting[] = []
  #going = 0

  constructor(
    private readonly pool: pg.Pool,
    private readonly where: string,
    private readonly lanes = 2,
  ) {}

  /** {@link transactOnce}, committed together with the others waiting, should there be any. */
  run(
    key: CallKey,
    statements: ReadonlyArray<OnceStatement>,
    notes: TransactionNotes,
  ): Promise<pg.QueryResult[]> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ key, statements, notes, resolve, reject })
      this.#next()
    })
  }

  #next(): void {
    while (this.#going < this.lanes && this.#waiting.length > 0) {
      const group = this.#waiting.splice(0, MOST)
      this.#going++
      void this.#commit(group).finally(() => {
        this.#going--
        this.#next()
      })
    }
  }

  async #commit(group: Waiting[]): Promise<void> {
    const [only] = group
    if (only && group.length === 1) return this.#alone(only)
    const ordered = inLockOrder(group, (t) => t.key)
    let together: Awaited<ReturnType<typeof transactTogether>>
    try {
      together = await transactTogether(this.pool, this.where, ordered)
    } catch (error) {
      for (const t of ordered) t.reject(error)
      return
    }
    if ('rolledBack' in together) {
      await Promise.all(ordered.map((t) => this.#alone(t)))
      return
    }
    for (const [i, t] of ordered.entries()) t.resolve(together[i] ?? [])
  }

  #alone(t: Waiting): Promise<void> {
    return transactOnce(this.pool, this.where, t.statements, t.notes).then(t.resolve, t.reject)
  }
}
