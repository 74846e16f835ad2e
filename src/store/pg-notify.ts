import pg from 'pg'
import { z } from 'zod'

/** A change another process committed to the shared database. */
export interface StoreChange {
  agentId: string
  callId: string
  /** `event`: an event was appended to the call; `card`: its card was written. */
  kind: 'event' | 'card'
  /** The event's type, for `event`. */
  type?: string
}

/**
 * `resync`: notifications may have been missed (the listening connection was lost and is back):
 * re-check everything being waited on.
 */
export type StoreChangeListener = (change: StoreChange | { kind: 'resync' }) => void

/**
 * The wire form of a notification: short keys (NOTIFY payloads are limited to 8000 bytes), the
 * sender's instance id in `o`. Anything else on the channel (another release, a stray NOTIFY by
 * hand) fails the schema and is ignored: the periodic re-check covers whatever it meant.
 */
const changeNote = z.object({
  o: z.string(),
  a: z.string(),
  c: z.string(),
  k: z.enum(['e', 'c']),
  t: z.string().optional(),
})

export type ChangeNote = z.infer<typeof changeNote>

/** The payload announcing a change to a call: its events (`e`, with the event type) or its card (`c`). */
export function noteOf(
  owner: string,
  key: { agentId: string; callId: string },
  kind: 'e' | 'c',
  type?: string,
): string {
  const note: ChangeNote = { o: owner, a: key.agentId, c: key.callId, k: kind, ...(type ? { t: type } : {}) }
  return JSON.stringify(note)
}

/** A notification payload as a change, or undefined when it is not one of ours. */
export function parseNote(payload: string): ChangeNote | undefined {
  let json: unknown
  try {
    json = JSON.parse(payload)
  } catch {
    return undefined
  }
  const parsed = changeNote.safeParse(json)
  return parsed.success ? parsed.data : undefined
}

/**
 * One dedicated connection LISTENing on the schema's channel. Reconnects by itself with a
 * growing pause (up to `maxBackoffMs`) and says `resync` once listening again, since whatever
 * was notified meanwhile is lost. Notes sent by this same process (`self`) are not passed on:
 * the process already knows.
 */
export class PgListener {
  private readonly listeners = new Set<StoreChangeListener>()
  private client: pg.Client | undefined
  private closed = false
  private backoffMs = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private starting: Promise<void> | undefined

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    private readonly self: string,
    private readonly maxBackoffMs = 5000,
  ) {}

  /** Subscribe; the first subscriber opens the connection. Returns the unsubscribe function. */
  on(listener: StoreChangeListener): () => void {
    this.listeners.add(listener)
    this.starting ??= this.connect()
    return () => {
      this.listeners.delete(listener)
    }
  }

  /** Resolves once the connection is listening (or has failed once; it keeps retrying). */
  ready(): Promise<void> {
    return this.starting ?? Promise.resolve()
  }

  private emit(change: StoreChange | { kind: 'resync' }): void {
    for (const listener of this.listeners) {
      try {
        listener(change)
      } catch {
        // A listener's failure is its own; the others still hear of the change.
      }
    }
  }

  private async connect(): Promise<void> {
    if (this.closed) return
    const client = new pg.Client(this.config)
    client.on('notification', (message) => {
      if (message.channel !== this.channel || !message.payload) return
      const note = parseNote(message.payload)
      if (!note || note.o === this.self) return
      this.emit({
        agentId: note.a,
        callId: note.c,
        kind: note.k === 'c' ? 'card' : 'event',
        ...(note.t ? { type: note.t } : {}),
      })
    })
    const lost = () => {
      if (this.client !== client) return
      this.client = undefined
      client.end().catch(() => {})
      this.retry()
    }
    client.on('error', lost)
    client.on('end', lost)
    try {
      await client.connect()
      await client.query(`LISTEN "${this.channel.replaceAll('"', '""')}"`)
    } catch {
      client.end().catch(() => {})
      this.retry()
      return
    }
    if (this.closed) {
      await client.end().catch(() => {})
      return
    }
    const reconnected = this.backoffMs > 0
    this.client = client
    this.backoffMs = 0
    if (reconnected) this.emit({ kind: 'resync' })
  }

  private retry(): void {
    if (this.closed || this.timer) return
    this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs === 0 ? 100 : this.backoffMs * 2)
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.connect()
    }, this.backoffMs)
    this.timer.unref()
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.listeners.clear()
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => {})
  }
}
