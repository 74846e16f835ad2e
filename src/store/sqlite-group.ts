/** The real one, whatever a test's fake timers later put on globalThis. */
const immediate = setImmediate

/** One write's outcome as the committer reports it. */
export type Settled = { ok: true; value: unknown } | { ok: false; error: unknown }

interface Queued<Op> {
  op: Op
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Group commit for the SQLite store, the one path every write of it takes: the writes asked for in
 * one turn of the event loop (the clicks that arrived together, the answers handed over, posting
 * records) go to the writing connection as one batch, committed in one transaction, so one fsync
 * makes all of them durable instead of one fsync each.
 *
 * `commit` carries a batch out and resolves with one outcome per write once the transaction is
 * durable (sqlite-writes.ts runs each write in a savepoint of its own, so one that fails is
 * rejected alone). Nobody's promise settles before that: a caller told its write succeeded has it
 * on disk. If the commit or its sync fails, every write of the batch is rejected with that failure.
 * Batches are committed in the order they were sent.
 */
export class GroupCommit<Op> {
  readonly #commit: (ops: Op[]) => Promise<Settled[]>
  #queued: Array<Queued<Op>> = []
  #scheduled = false
  readonly #inFlight = new Set<Promise<void>>()

  constructor(commit: (ops: Op[]) => Promise<Settled[]>) {
    this.#commit = commit
  }

  /** Commit `op` with this turn's batch; settles once that batch is durable. */
  run<T>(op: Op): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({ op, resolve: resolve as (value: unknown) => void, reject })
      if (this.#scheduled) return
      this.#scheduled = true
      // After the I/O phase: every request read in this turn has queued its write by then.
      immediate(() => this.flush())
    })
  }

  /** Send what is queued now; resolves once every batch sent so far has settled (close). */
  flush(): Promise<void> {
    this.#scheduled = false
    const group = this.#queued
    this.#queued = []
    if (group.length > 0) {
      const done = this.#send(group)
      this.#inFlight.add(done)
      void done.finally(() => this.#inFlight.delete(done))
    }
    return Promise.all(this.#inFlight).then(() => undefined)
  }

  async #send(group: Array<Queued<Op>>): Promise<void> {
    let outcomes: Settled[]
    try {
      outcomes = await this.#commit(group.map((q) => q.op))
    } catch (error) {
      for (const queued of group) queued.reject(error)
      return
    }
    group.forEach((queued, i) => {
      const outcome = outcomes[i]
      if (outcome?.ok) queued.resolve(outcome.value)
      else queued.reject(outcome ? outcome.error : new Error('the commit reported no outcome for a write'))
    })
  }
}
