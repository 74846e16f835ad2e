import pg from 'pg'
import { clientConfig } from './pg-connect.js'
import type { PostgresTarget } from './pg-url.js'

/** What the leader of a job does when it takes the job and when it must let go. */
export interface LeaderHandlers {
  /** This process leads now: start the job (e.g. connect the Discord gateway). */
  lead(): Promise<void>
  /** This process no longer leads (stopping, or its database connection was lost): stop the job. */
  resign(): Promise<void>
}

/** One process at a time runs a job, whatever the number of processes. */
export interface Leadership {
  readonly leading: boolean
  /** Stop competing; a leader resigns first and its lock goes to the next process. */
  stop(): Promise<void>
}

/**
 * Leadership through a PostgreSQL session advisory lock held on a connection of its own: the
 * server releases it the moment the holder's connection ends, so when the leader dies another
 * process takes over at its next try (every `pollMs`). A leader that loses its connection
 * resigns at once: two leaders never run the job together for longer than it takes to notice.
 */
export class PgLeadership implements Leadership {
  leading = false
  private client: pg.Client | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private busy: Promise<void> = Promise.resolve()

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly name: string,
    private readonly handlers: LeaderHandlers,
    private readonly pollMs = 2000,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.schedule(0)
  }

  private schedule(ms: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.busy = this.attempt().finally(() => this.schedule(this.pollMs))
    }, ms)
    this.timer.unref()
  }

  /** One try: take the lock if free; while leading, check the connection still holds it. */
  private async attempt(): Promise<void> {
    try {
      if (this.leading && this.client) {
        await this.client.query('SELECT 1')
        return
      }
      if (!this.client) {
        const client = new pg.Client(this.config)
        client.on('error', () => {
          if (this.client === client) void this.lost(client)
        })
        await client.connect()
        this.client = client
      }
      const { rows } = await this.client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS ok',
        ['askbridge.lead', this.name],
      )
      if (!rows[0]?.ok || this.stopped) return
      this.leading = true
      await this.handlers.lead()
    } catch (error) {
      this.onError(error)
      if (this.client) await this.lost(this.client)
    }
  }

  /** The connection (and with it the lock) is gone: resign before anyone else can lead. */
  private async lost(client: pg.Client): Promise<void> {
    if (this.client === client) this.client = undefined
    client.end().catch(() => {})
    if (!this.leading) return
    this.leading = false
    await this.handlers.resign().catch(this.onError)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.busy
    if (this.leading) {
      this.leading = false
      await this.handlers.resign().catch(this.onError)
    }
    // Closing the connection releases the lock for the next process.
    await this.client?.end().catch(() => {})
    this.client = undefined
  }
}

/**
 * The leadership of job `name` among the bridges on one schema (`channel`): its connection is
 * named after the schema and the job, so an operator (or a test) can tell leaders apart.
 */
export function schemaLeadership(
  target: PostgresTarget,
  channel: string,
  name: string,
  handlers: LeaderHandlers,
  options: { pollMs?: number; onError?: (error: unknown) => void },
): PgLeadership {
  return new PgLeadership(
    clientConfig(target, { applicationName: `askbridge-lead:${channel}:${name}`.slice(0, 63) }),
    // Advisory locks are per database: the schema's channel keeps two schemas' leaders apart.
    `${channel}:${name}`,
    handlers,
    options.pollMs,
    options.onError,
  )
}
