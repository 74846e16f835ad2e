import type Database from 'better-sqlite3'

/** The real one, whatever a test's fake timers later put on globalThis. */
const immediate = setImmediate

interface Queued {
  write: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * Group commit for the SQLite store, the one path every write of it takes: the writes asked for in
 * one turn of the event loop (the clicks that arrived together, the answers handed over, posting
 * records) are committed in one transaction, so one fsync makes all of them durable instead of
 * one fsync each.
 *
 * Each write runs in a savepoint of its own: one that fails (a constraint, a programming error)
 * is rolled back and rejected alone, the others still commit. Nobody's promise settles before
 * the commit is durable (the WAL synced, off the event loop: sqlite-sync.ts): a caller told its
 * write succeeded has it on disk. If the commit or its sync fails, every write of the group is
 * rejected with that failure.
 */
export class GroupCommit {
  readonly #durable: () => Promise<void>
  readonly #committed: () => void
  /**
   * One turn's transaction, and one write's savepoint inside it. better-sqlite3 builds a
   * transaction function's wrappers each time `transaction()` is called: built once here, not
   * once per commit and per write.
   */
  readonly #commit: Database.Transaction<(group: Queued[], outcomes: Outcome[]) => void>
  readonly #savepoint: Database.Transaction<(write: () => unknown) => unknown>
  #queued: Queued[] = []
  #scheduled = false

  /**
   * `durable`: settles once what is committed is on disk (see sqlite-sync.ts); `committed`: told
   * after each commit (the checkpointer counts them, sqlite-checkpoint.ts).
   */
  constructor(db: Database.Database, durable: () => Promise<void>, committed: () => void = () => {}) {
    this.#durable = durable
    this.#committed = committed
    // Nested in #commit's transaction, so a savepoint: rolled back alone if its write throws.
    this.#savepoint = db.transaction((write: () => unknown) => write())
    this.#commit = db.transaction((group: Queued[], outcomes: Outcome[]) => {
      for (const { write } of group) {
        try {
          outcomes.push({ ok: true, value: this.#savepoint(write) })
        } catch (error) {
          outcomes.push({ ok: false, error })
        }
      }
    })
  }

  /** Run `write` in this turn's transaction; settles once that transaction is durable. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({ write, resolve: resolve as (value: unknown) => void, reject })
      if (this.#scheduled) return
      this.#scheduled = true
      // After the I/O phase: every request read in this turn has queued its write by then.
      immediate(() => this.flush())
    })
  }

  /** Commit what is queued now (also before the database closes). */
  flush(): void {
    this.#scheduled = false
    const group = this.#queued
    this.#queued = []
    if (group.length === 0) return
    const outcomes: Outcome[] = []
    try {
      this.#commit.immediate(group, outcomes)
    } catch (error) {
      for (const queued of group) queued.reject(error)
      return
    }
    this.#committed()
    const settle = () =>
      group.forEach((queued, i) => {
        const outcome = outcomes[i] as Outcome
        if (outcome.ok) queued.resolve(outcome.value)
        else queued.reject(outcome.error)
      })
    this.#durable().then(settle, (error: unknown) => {
      for (const queued of group) queued.reject(error)
    })
  }
}
