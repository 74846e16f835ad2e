import { samePerson } from '../card/apply.js'
import type { CardState, Person } from '../card/types.js'
import { People } from '../oncall/people.js'

export interface ResponderPolicyOptions {
  /** Members of a platform group (Slack user group); undefined when the platform cannot tell. */
  groupMembers: (platform: string, groupId: string) => Promise<string[] | undefined>
  /** How long a group's membership is cached. @default 300_000 (5 minutes) */
  ttlMs?: number
  now?: () => number
  /** Who is who across platforms (the routes file's `people` map). */
  people?: People
}

/**
 * Who may answer a card: everyone when the route names no responders; otherwise the listed
 * users, members of the listed groups (looked up and cached with expiry), holders of the
 * listed roles, and the people listed by e-mail. A person is one person everywhere: the
 * `people` map ties their Slack, Discord and signed-in inbox accounts, so a Slack user listed
 * as a responder may also answer in the inbox once signed in with their address. Where a route
 * names responders, the inbox without sign-in (a typed, unchecked name) never answers and never
 * counts toward a quorum; signed in, only as a listed person (or anyone, with `web: true`). An
 * API caller (`POST /v1/questions/:callId/answer`) answers only where anyone may: see
 * {@link ResponderPolicy.refusesApi}. An excluded requester never may.
 */
export class ResponderPolicy {
  private readonly cache = new Map<string, { members: Set<string>; at: number }>()
  private readonly ttlMs: number
  private readonly now: () => number
  private readonly people: People

  constructor(private readonly options: ResponderPolicyOptions) {
    this.ttlMs = options.ttlMs ?? 300_000
    this.now = options.now ?? Date.now
    this.people = options.people ?? new People()
  }

  async allows(card: CardState, person: Person): Promise<boolean> {
    const who = this.people.identify(person)
    if (card.excluded && samePerson(this.people.identify(card.excluded), who)) return false
    const responders = card.responders
    if (!responders) return true
    const email = this.people.emailOf(person)
    if (email && responders.emails?.includes(email)) return true
    const accounts = email ? this.people.accounts(email) : {}
    const slack = person.platform === 'slack' ? person.userId : accounts.slack
    const discord = person.platform === 'discord' ? person.userId : accounts.discord
    if (slack && responders.slack) {
      if (responders.slack.users?.includes(slack)) return true
      for (const group of responders.slack.groups ?? []) {
        if ((await this.members('slack', group)).has(slack)) return true
      }
    }
    if (discord && responders.discord?.users?.includes(discord)) return true
    const teams = person.platform === 'teams' ? person.userId : accounts.teams
    if (teams && responders.teams?.users?.includes(teams)) return true
    if (person.platform === 'discord') {
      return (responders.discord?.roles ?? []).some((role) => person.roles?.includes(role))
    }
    // A typed inbox name proves nothing: with responders it is never one of them.
    if (person.platform === 'web') return person.email ? responders.web === true : false
    return false
  }

  /**
   * Why an answer over the API (no person behind it, only a token) is refused on this card, if
   * it is: a route with responders (or `web: false`) wants listed people, a quorum wants that many
   * distinct people, and the requester the token acts for may not answer their own request.
   */
  async refusesApi(card: CardState, caller: Person, requester?: Person): Promise<string | undefined> {
    if (card.responders) return 'this route names who may answer; an API token is not one of them'
    if (card.quorum > 1) return `this approval needs ${card.quorum} distinct people; an API token is none`
    if (requester && !(await this.allows(card, requester)))
      return 'the requester may not answer their own request'
    if (!(await this.allows(card, caller))) return 'this caller may not answer'
    return undefined
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
