import { Worker } from 'node:worker_threads'
import { StorageError } from './errors.js'
import type { WriterReply, WriterRequest } from './sqlite-writer-batch.js'
import type { Outcome, WriteOp } from './sqlite-writes.js'
import { fromWire } from './sqlite-writes.js'

/**
 * The writer thread's young generation, in MiB. It holds a batch's rows for a moment; V8's
 * default (up to 32 MiB for a thread) would only add resident memory.
 */
const WRITER_YOUNG_MIB = 4

/**
 * The process's one writer thread (sqlite-writer.ts), started with the first database file
 * opened and shared by every store on a file. It keeps the process alive only while a batch is
 * being committed; otherwise it is unref'd.
 */
class WriterThread {
  readonly #worker: Worker
  readonly #waiting = new Map<
    string,
    { resolve: (reply: WriterReply) => void; reject: (e: unknown) => void }
  >()
  #nextId = 1
  #stopped: Error | undefined

  constructor() {
    this.#worker = spawn()
    this.#worker.unref()
    this.#worker.on('message', (reply: WriterReply) => {
      const key = reply.type === 'closed' ? `${reply.id}:close` : `${reply.id}:${reply.batch}`
      const waiting = this.#waiting.get(key)
      this.#waiting.delete(key)
      if (this.#waiting.size === 0) this.#worker.unref()
      waiting?.resolve(reply)
    })
    const stop = (error: unknown) => {
      this.#stopped = new StorageError(
        'unavailable',
        `storage unavailable: the SQLite writer thread stopped (${error instanceof Error ? error.message : String(error)})`,
      )
      if (shared === this) shared = undefined
      for (const waiting of this.#waiting.values()) waiting.reject(this.#stopped)
      this.#waiting.clear()
    }
    this.#worker.on('error', stop)
    this.#worker.on('exit', (code) => stop(new Error(`exit code ${code}`)))
  }

  /** A writing connection to `path`, opened in the thread (a failure to open fails its commits). */
  connect(path: string, durable: boolean): WriterConnection {
    const id = this.#nextId++
    this.#send({ type: 'open', id, path, durable })
    return new WriterConnection(this, id)
  }

  /** Send `request` and wait for the reply under `key`. */
  ask(request: WriterRequest, key: string): Promise<WriterReply> {
    if (this.#stopped) return Promise.reject(this.#stopped)
    return new Promise((resolve, reject) => {
      this.#waiting.set(key, { resolve, reject })
      this.#worker.ref()
      this.#send(request)
    })
  }

  #send(request: WriterRequest): void {
    this.#worker.postMessage(request)
  }
}

/** One store's writing connection in the writer thread. */
export class WriterConnection {
  readonly #thread: WriterThread
  readonly #id: number
  #batch = 0

  constructor(thread: WriterThread, id: number) {
    this.#thread = thread
    this.#id = id
  }

  /** Commit `ops` in one transaction; resolves with each write's outcome once it is durable. */
  async commit(ops: WriteOp[]): Promise<Outcome[]> {
    const batch = this.#batch++
    const reply = await this.#thread.ask({ type: 'commit', id: this.#id, batch, ops }, `${this.#id}:${batch}`)
    if (reply.type === 'failed') throw fromWire(reply.error)
    if (reply.type !== 'committed') throw new Error(`unexpected reply ${reply.type} to a commit`)
    return reply.outcomes
  }

  /** Close the connection (after every batch sent has been answered). */
  async close(): Promise<void> {
    await this.#thread.ask({ type: 'close', id: this.#id }, `${this.#id}:close`).catch(() => undefined)
  }
}

let shared: WriterThread | undefined

/** A writing connection to the database file at `path` in the process's writer thread. */
export function writerConnection(path: string, durable: boolean): WriterConnection {
  shared ??= new WriterThread()
  return shared.connect(path, durable)
}

function spawn(): Worker {
  const resourceLimits = { maxYoungGenerationSizeMb: WRITER_YOUNG_MIB }
  const here = import.meta.url
  if (!here.endsWith('.ts')) return new Worker(new URL('./sqlite-writer.js', here), { resourceLimits })
  // Run from the TypeScript sources (the test suite): the thread loads them through tsx.
  return new Worker(new URL('./sqlite-writer-dev.mjs', here), { resourceLimits })
}
