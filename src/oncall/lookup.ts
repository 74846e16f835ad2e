import { type Logger, silentLogger } from '../log.js'
import type { PagerDutyOnCall } from './pagerduty.js'

/** A PagerDuty schedule or escalation policy named by a route. */
export interface PagerDutyTarget {
  schedule?: string | undefined
  escalationPolicy?: string | undefined
}

/** Who is on call, and whether PagerDuty said so just now. */
export interface OnCallResult {
  /** `pagerduty`: a fresh (or cached, still valid) answer; `last-known`: PagerDuty failed, the last answer; `fallback`: nothing known. */
  source: 'pagerduty' | 'last-known' | 'fallback'
  people: Array<{ email: string; name: string }>
  /** When PagerDuty gave the answer (epoch ms). */
  at: number
}

/** What the look-up needs from PagerDuty (the {@link PagerDutyClient} has it). */
export interface OnCallSource {
  onCalls(filter: { scheduleIds?: string[]; escalationPolicyIds?: string[] }): Promise<PagerDutyOnCall[]>
}

export interface OnCallLookupOptions {
  source: OnCallSource
  /** How long an answer is reused at most; it is dropped sooner when a shift in it ends. @default 60000 */
  ttlMs?: number
  now?: () => number
  logger?: Logger
}

interface Entry {
  oncalls: PagerDutyOnCall[]
  at: number
  validUntil: number
}

/**
 * Who is on call now for a route's PagerDuty schedule or escalation policy. Answers are cached
 * briefly, and never past the end (or before the start) of a shift they contain, so a rota
 * change is followed. When PagerDuty fails, the last answer it gave is used (`last-known`),
 * else nothing (`fallback`: the route's fallback mention applies).
 */
export class OnCallLookup {
  private readonly cache = new Map<string, Entry>()
  private readonly flights = new Map<string, Promise<Entry>>()
  private readonly ttlMs: number
  private readonly now: () => number
  private readonly log: Logger

  constructor(private readonly options: OnCallLookupOptions) {
    this.ttlMs = options.ttlMs ?? 60_000
    this.now = options.now ?? Date.now
    this.log = options.logger ?? silentLogger
  }

  /** People on call at `level` (a schedule: everyone on it now, whatever the level). */
  async lookup(target: PagerDutyTarget, level = 1): Promise<OnCallResult> {
    const key = target.schedule ? `schedule:${target.schedule}` : `policy:${target.escalationPolicy}`
    const now = this.now()
    let entry = this.cache.get(key)
    let source: OnCallResult['source'] = 'pagerduty'
    if (!entry || now >= entry.validUntil) {
      try {
        entry = await this.fetch(key, target)
      } catch (error) {
        this.log.warn('PagerDuty on-call look-up failed', {
          target: key,
          error: error instanceof Error ? error.message : String(error),
          using: entry ? 'last known on-call' : 'the route fallback',
        })
        if (!entry) return { source: 'fallback', people: [], at: now }
        source = 'last-known'
      }
    }
    const seen = new Set<string>()
    const people: OnCallResult['people'] = []
    for (const o of entry.oncalls) {
      if (target.escalationPolicy && !target.schedule && o.level !== level) continue
      // A fresh answer counts only shifts running now; the last known one is used as it was.
      if (source === 'pagerduty' && ((o.start ?? now) > now || (o.end ?? Number.POSITIVE_INFINITY) <= now))
        continue
      if (seen.has(o.user.email)) continue
      seen.add(o.user.email)
      people.push({ email: o.user.email, name: o.user.name })
    }
    return { source, people, at: entry.at }
  }

  private fetch(key: string, target: PagerDutyTarget): Promise<Entry> {
    const running = this.flights.get(key)
    if (running) return running
    const flight = (async () => {
      const oncalls = await this.options.source.onCalls(
        target.schedule
          ? { scheduleIds: [target.schedule] }
          : { escalationPolicyIds: [target.escalationPolicy ?? ''] },
      )
      const at = this.now()
      let validUntil = at + this.ttlMs
      for (const o of oncalls) {
        if (o.end !== undefined && o.end > at) validUntil = Math.min(validUntil, o.end)
        if (o.start !== undefined && o.start > at) validUntil = Math.min(validUntil, o.start)
      }
      const entry = { oncalls, at, validUntil }
      this.cache.set(key, entry)
      return entry
    })()
    this.flights.set(key, flight)
    return flight.finally(() => this.flights.delete(key))
  }
}
