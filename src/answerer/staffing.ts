import type {
  CardState,
  Destination,
  EscalationTier,
  Mention,
  OnCallShown,
  PlatformResponders,
  Responders,
} from '../card/types.js'
import type { Logger } from '../log.js'
import type { OnCallLookup } from '../oncall/lookup.js'
import { LIST_OF, respondersOn } from '../platform-descriptor.js'
import type { People } from '../routing/people.js'
import type { OnCallRule, RoutePlan } from '../routing/types.js'
import type { ChatAdapter } from './adapter.js'

/** What an on-call look-up adds to a card: mentions (each on its platform), responders, and what the card shows. */
export interface Staffing {
  shown: OnCallShown
  mention: Mention[]
  responders: Responders
}

export interface StaffOptions {
  people: People
  oncall: OnCallLookup | undefined
  /** The running adapters; those with `lookupByEmail` find people by address. */
  adapters: () => Iterable<ChatAdapter>
  log: Logger
  now: () => number
}

/**
 * People on a route: responders listed by e-mail get their accounts on every platform that
 * looks people up by address (so the card names them), and an on-call route gets whoever is on
 * call now mentioned and allowed to answer.
 */
export class Staffer {
  readonly #o: StaffOptions

  constructor(options: StaffOptions) {
    this.#o = options
  }

  /** The plan with people filled in. */
  async staff(plan: RoutePlan): Promise<RoutePlan & { shown?: OnCallShown }> {
    let responders = plan.responders
    for (const email of responders?.emails ?? []) {
      for (const adapter of this.#o.adapters()) {
        if (!adapter.lookupByEmail) continue
        const id = await this.#idOf(adapter, email)
        if (id) responders = mergeResponders(responders, { [adapter.platform]: { users: [id] } })
      }
    }
    if (!plan.oncall) return responders ? { ...plan, responders } : plan
    const staffing = await this.onCall(plan.oncall, 1)
    return {
      ...plan,
      destinations: plan.destinations.map((d) => withMentions(d, staffing.mention)),
      // Only the people on call (and the route's own responders) answer; the inbox without
      // sign-in cannot tell who someone is, so it answers only when the route says `web: true`.
      responders: mergeResponders({ ...responders, web: responders?.web === true }, staffing.responders),
      shown: staffing.shown,
    }
  }

  /** A platform's user id for an address: the `people` map, else the platform's e-mail look-up. */
  async #idOf(adapter: ChatAdapter, email: string): Promise<string | undefined> {
    const known = this.#o.people.accounts(email)[adapter.platform]
    if (known) return known
    if (!adapter.lookupByEmail) return undefined
    try {
      const id = await adapter.lookupByEmail(email)
      if (id) this.#o.people.learn(adapter.platform, id, email)
      return id
    } catch (error) {
      this.#o.log.warn('e-mail look-up failed', { platform: adapter.platform, error })
      return undefined
    }
  }

  /** Every account of an address: the `people` map's, and those platforms' e-mail look-ups find. */
  async #accountsOf(email: string): Promise<Array<{ platform: string; id: string }>> {
    const found = new Map<string, string>()
    for (const adapter of this.#o.adapters()) {
      const id = await this.#idOf(adapter, email)
      if (id) found.set(adapter.platform, id)
    }
    for (const [platform, id] of Object.entries(this.#o.people.accounts(email))) {
      if (id && !found.has(platform)) found.set(platform, id)
    }
    return [...found].map(([platform, id]) => ({ platform, id }))
  }

  /** Who is on call for a rule at a level: mentions, responders, and what the card says. */
  async onCall(rule: OnCallRule, level: number): Promise<Staffing> {
    const { oncall, log } = this.#o
    const found = oncall
      ? await oncall.lookup(rule.pagerduty, level)
      : { source: 'fallback' as const, people: [], at: this.#o.now() }
    const mention: Mention[] = []
    let responders: Responders = {}
    if (found.source === 'fallback') {
      for (const m of rule.fallback) {
        mention.push(m)
        responders = mergeResponders(responders, { [m.platform]: { [LIST_OF[m.kind]]: [m.id] } })
      }
    }
    for (const person of found.people) {
      responders = mergeResponders(responders, { emails: [person.email] })
      const accounts = await this.#accountsOf(person.email)
      for (const { platform, id } of accounts) {
        mention.push({ platform, kind: 'user', id })
        responders = mergeResponders(responders, { [platform]: { users: [id] } })
      }
      if (accounts.length === 0) {
        log.warn('an on-call person has no platform account askbridge knows', { level })
      }
    }
    if (found.source === 'fallback' && rule.fallback.length === 0) {
      log.error(
        'PagerDuty is unreachable and the route has no oncall.fallback: only its other responders may answer',
      )
    }
    return {
      shown: { level, source: found.source, names: found.people.map((p) => p.name), at: found.at },
      mention,
      responders,
    }
  }
}

/** Where an escalation tier posts, with which mentions (the tier's, plus an on-call level's). */
export function escalationTargets(
  tier: EscalationTier,
  card: CardState,
  staffing: Staffing | undefined,
): Destination[] {
  const on = (d: Destination) => (tier.mention ?? []).filter((m) => m.platform === d.platform)
  const base = tier.destinations?.length
    ? tier.destinations.map((d) => (tier.mention?.length ? { ...d, mention: on(d) } : d))
    : (card.destinations ?? []).map((d) => ({ ...d, mention: on(d) }))
  return staffing ? base.map((d) => withMentions(d, staffing.mention)) : base
}

/** A destination with the mentions meant for its platform added. */
function withMentions(d: Destination, mention: readonly Mention[]): Destination {
  const more = mention.filter((m) => m.platform === d.platform)
  if (more.length === 0) return d
  const all = [...(d.mention ?? [])]
  for (const m of more) if (!all.some((x) => x.kind === m.kind && x.id === m.id)) all.push(m)
  return { ...d, mention: all }
}

const union = (a: string[] | undefined, b: string[] | undefined): string[] | undefined =>
  a || b ? [...new Set([...(a ?? []), ...(b ?? [])])] : undefined

/** Both sets of responders: every list joined; `web` from the first. */
export function mergeResponders(a: Responders | undefined, b: Responders): Responders {
  const out: Responders = { ...a }
  const platforms = new Set([...Object.keys(a ?? {}), ...Object.keys(b)])
  for (const platform of platforms) {
    const x = respondersOn(a, platform)
    const y = respondersOn(b, platform)
    if (!x && !y) continue
    const merged: PlatformResponders = {}
    for (const list of ['users', 'groups', 'roles'] as const) {
      const joined = union(x?.[list], y?.[list])
      if (joined) merged[list] = joined
    }
    out[platform] = merged
  }
  const emails = union(a?.emails, b.emails)
  if (emails) out.emails = emails
  return out
}
