import type { CardState, Destination, EscalationTier, OnCallShown, Responders } from '../card/types.js'
import type { Logger } from '../log.js'
import type { OnCallLookup } from '../oncall/lookup.js'
import type { People } from '../oncall/people.js'
import { mentionFits } from '../routing/routes.js'
import type { OnCallRule, RoutePlan } from '../routing/types.js'
import type { ChatAdapter } from './adapter.js'

/** What an on-call look-up adds to a card: mentions per platform, responders, and what the card shows. */
export interface Staffing {
  shown: OnCallShown
  mention: { slack: string[]; discord: string[]; teams: string[] }
  responders: Responders
}

export interface StaffOptions {
  people: People
  oncall: OnCallLookup | undefined
  /** The Slack adapter, for users.lookupByEmail. */
  slack: () => ChatAdapter | undefined
  log: Logger
  now: () => number
}

/**
 * People on a route: responders listed by e-mail get their Slack accounts (so the card names
 * them), and an on-call route gets whoever is on call now mentioned and allowed to answer.
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
      const slack = await this.#slackIdOf(email)
      if (slack) responders = mergeResponders(responders, { slack: { users: [slack] } })
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

  /** A Slack user id for an address: the `people` map, else Slack's users.lookupByEmail. */
  async #slackIdOf(email: string): Promise<string | undefined> {
    const known = this.#o.people.accounts(email).slack
    if (known) return known
    const slack = this.#o.slack()
    if (!slack?.lookupByEmail) return undefined
    try {
      const id = await slack.lookupByEmail(email)
      if (id) this.#o.people.learn('slack', id, email)
      return id
    } catch (error) {
      this.#o.log.warn('Slack e-mail look-up failed', { error })
      return undefined
    }
  }

  /** Who is on call for a rule at a level: mentions, responders, and what the card says. */
  async onCall(rule: OnCallRule, level: number): Promise<Staffing> {
    const { oncall, people, log } = this.#o
    const found = oncall
      ? await oncall.lookup(rule.pagerduty, level)
      : { source: 'fallback' as const, people: [], at: this.#o.now() }
    const mention: Staffing['mention'] = { slack: [], discord: [], teams: [] }
    let responders: Responders = {}
    if (found.source === 'fallback') {
      for (const m of rule.fallback) {
        const [kind, id = ''] = m.split(':')
        if (mentionFits('slack', m)) {
          mention.slack.push(m)
          responders = mergeResponders(responders, {
            slack: kind === 'subteam' ? { groups: [id] } : { users: [id] },
          })
        } else if (mentionFits('discord', m)) {
          mention.discord.push(m)
          responders = mergeResponders(responders, {
            discord: kind === 'role' ? { roles: [id] } : { users: [id] },
          })
        } else if (mentionFits('teams', m)) {
          mention.teams.push(m)
          responders = mergeResponders(responders, { teams: { users: [id] } })
        }
      }
    }
    for (const person of found.people) {
      responders = mergeResponders(responders, { emails: [person.email] })
      const slack = await this.#slackIdOf(person.email)
      if (slack) {
        mention.slack.push(`user:${slack}`)
        responders = mergeResponders(responders, { slack: { users: [slack] } })
      }
      const discord = people.accounts(person.email).discord
      if (discord) {
        mention.discord.push(`user:${discord}`)
        responders = mergeResponders(responders, { discord: { users: [discord] } })
      }
      const teams = people.accounts(person.email).teams
      if (teams) {
        mention.teams.push(`user:${teams}`)
        responders = mergeResponders(responders, { teams: { users: [teams] } })
      }
      if (!slack && !discord && !teams) {
        log.warn('an on-call person has no Slack, Discord or Teams account askbridge knows', { level })
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
  const base = tier.destinations?.length
    ? tier.destinations.map((d) => (tier.mention?.length ? { ...d, mention: tier.mention } : d))
    : (card.destinations ?? []).map((d) => ({ ...d, mention: tier.mention ?? [] }))
  return staffing ? base.map((d) => withMentions(d, staffing.mention)) : base
}

/** A destination with the mentions meant for its platform added. */
function withMentions(d: Destination, mention: Staffing['mention']): Destination {
  const more = d.platform === 'web' ? [] : mention[d.platform]
  if (more.length === 0) return d
  return { ...d, mention: [...new Set([...(d.mention ?? []), ...more])] }
}

const union = (a: string[] | undefined, b: string[] | undefined): string[] | undefined =>
  a || b ? [...new Set([...(a ?? []), ...(b ?? [])])] : undefined

/** Both sets of responders: every list joined; `web` from the first. */
export function mergeResponders(a: Responders | undefined, b: Responders): Responders {
  const out: Responders = { ...a }
  const slackUsers = union(a?.slack?.users, b.slack?.users)
  const slackGroups = union(a?.slack?.groups, b.slack?.groups)
  if (slackUsers || slackGroups)
    out.slack = {
      ...(slackUsers ? { users: slackUsers } : {}),
      ...(slackGroups ? { groups: slackGroups } : {}),
    }
  const discordUsers = union(a?.discord?.users, b.discord?.users)
  const discordRoles = union(a?.discord?.roles, b.discord?.roles)
  if (discordUsers || discordRoles)
    out.discord = {
      ...(discordUsers ? { users: discordUsers } : {}),
      ...(discordRoles ? { roles: discordRoles } : {}),
    }
  const teamsUsers = union(a?.teams?.users, b.teams?.users)
  if (teamsUsers) out.teams = { users: teamsUsers }
  const emails = union(a?.emails, b.emails)
  if (emails) out.emails = emails
  return out
}
