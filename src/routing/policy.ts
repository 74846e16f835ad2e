import { samePerson } from '../card/apply.js'
import type { CardState, Person } from '../card/types.js'

export interface ResponderPolicyOptions {
  /** Members of a platform group (Slack user group); undefined when the platform cannot tell. */
  groupMembers: (platform: string, groupId: string) => Promise<string[] | undefined>
  /** How long a group's membership is cached. @default 300_000 (5 minutes) */
  ttlMs?: number
  now?: () => number
}

/**
 * Who may answer a card: everyone when the route names no responders; otherwise the listed
 * users, members of the listed groups (looked up and cached with expiry) and holders of the
 * listed roles. The web inbox answers unless the route sets `web: false`. An excluded
 * requester never may.
 */
export class ResponderPolicy {
  private readonly cache = new Map<string, { members: Set<string>; at: number }>()
  private readonly ttlMs: number
  private readonly now: () => number

  constructor(private readonly options: ResponderPolicyOptions) {
    this.ttlMs = options.ttlMs ?? 300_000
    this.now = options.now ?? Date.now
  }

  async allows(card: CardState, person: Person): Promise<boolean> {
    if (card.excluded && samePerson(card.excluded, person)) return false
    const responders = card.responders
    if (!responders) return true
    if (person.platform === 'web') return responders.web !== false
    if (person.platform === 'slack') {
      const rule = responders.slack
      if (!rule) return false
      if (rule.users?.includes(person.userId)) return true
      for (const group of rule.groups ?? []) {
        if ((await this.members('slack', group)).has(person.userId)) return true
      }
      return false
    }
    if (person.platform === 'discord') {
      const rule = responders.discord
      if (!rule) return false
      if (rule.users?.includes(person.userId)) return true
      return (rule.roles ?? []).some((role) => person.roles?.includes(role))
    }
    return false
  }

  private async members(platform: string, groupId: string): Promise<Set<string>> {
    const key = `${platform}:${groupId}`
    const cached = this.cache.get(key)
    if (cached && this.now() - cached.at < this.ttlMs) return cached.members
    const list = await this.options.groupMembers(platform, groupId)
    const members = new Set(list ?? [])
    // A failed lookup is not cached, so the next click asks again.
    if (list) this.cache.set(key, { members, at: this.now() })
    return members
  }
}
