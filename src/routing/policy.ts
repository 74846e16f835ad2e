import { samePerson } from '../card/lifecycle.js'
import type { CardState, Person } from '../card/types.js'
import { respondersOn } from '../platform-descriptor.js'
import { People } from './people.js'

export interface ResponderPolicyOptions {
  /** Members of a platform group (a user group); undefined when the platform cannot tell. */
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
 * `people` map ties their platform and signed-in inbox accounts, so a platform user listed
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
    // The person's account on each platform the route lists: the one they clicked with, and
    // those the `people` map ties to their address.
    for (const platform of Object.keys(responders)) {
      const lists = respondersOn(responders, platform)
      if (!lists) continue
      const id = person.platform === platform ? person.userId : accounts[platform]
      if (id === undefined) continue
      if (lists.users?.includes(id)) return true
      for (const group of lists.groups ?? []) {
        if ((await this.members(platform, group)).has(id)) return true
      }
      // Roles are read from the interaction itself: only where the person clicked.
      if (person.platform === platform && (lists.roles ?? []).some((role) => person.roles?.includes(role)))
        return true
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
