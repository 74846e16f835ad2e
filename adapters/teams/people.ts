/** Who is who in Teams: channel rosters and members (cached), mentions, e-mail look-ups, and the ids a card's refresh names. */
import type { CardState, Mention } from '../../src/adapter-kit.js'
import { LIVE_STATUSES, type Logger, respondersOn } from '../../src/adapter-kit.js'
import type { TeamsMention } from './card-schema.js'
import { TEAMS_LIMITS as L } from './limits.js'
import type { TeamsTransport } from './transport.js'

/** A channel's roster: e-mail and UPN (lower case) -> Entra object id; Entra object id -> Teams user id. */
interface Roster {
  byAddress: Map<string, string>
  teamsIds: Map<string, string>
}

/** Member look-ups (e-mail, name) are cached this long. */
const MEMBER_TTL_MS = 3_600_000

export class TeamsPeople {
  /** By Entra object id and by Teams user id: their Teams user id, e-mail and name. */
  private readonly members = new Map<string, { id?: string; email?: string; name?: string; at: number }>()
  /** Channels whose rosters are searched by e-mail, in the order they became known. */
  readonly channels = new Set<string>()
  /** Per channel, cached like members: its roster. */
  private readonly rosters = new Map<string, Roster & { at: number }>()
  private readonly rosterLoads = new Map<string, Promise<Roster | undefined>>()

  constructor(
    private readonly transport: TeamsTransport,
    private readonly log: Logger,
    channels: readonly string[] = [],
  ) {
    for (const channel of channels) this.channels.add(channel)
  }

  /**
   * The Teams user ids (`29:…`) of the people who may answer this card in Teams, for
   * `refresh.userIds`: the route's Teams responders and those of its e-mail responders the
   * channel's roster knows. Undefined when the card names none (anyone may answer), when they
   * are over Teams' 60, or when Teams cannot say who they are: then every copy has the controls.
   */
  async refreshIds(card: CardState, conversationId: string): Promise<string[] | undefined> {
    const users = respondersOn(card.responders, 'teams')?.users ?? []
    if (users.length === 0 || users.length > L.refreshUserIds || !LIVE_STATUSES.includes(card.status))
      return undefined
    try {
      const roster = await this.roster(conversationId)
      const people = new Set(users)
      for (const email of card.responders?.emails ?? []) {
        const id = roster?.byAddress.get(email.toLowerCase())
        if (id) people.add(id)
      }
      if (people.size > L.refreshUserIds) return undefined
      const ids: string[] = []
      for (const aad of people) {
        // Someone Teams does not know in this channel cannot see the card at all.
        const id = roster?.teamsIds.get(aad) ?? (await this.member(conversationId, aad)).id
        if (id) ids.push(id)
      }
      return ids.length ? ids : undefined
    } catch (error) {
      this.log.warn('Teams could not say who may answer: every copy of the card shows its buttons', {
        error,
      })
      return undefined
    }
  }

  /** The destination's Teams users, with the names Teams knows (unknown people are not mentioned). */
  async mentionsOf(conversationId: string, entries: readonly Mention[]): Promise<TeamsMention[]> {
    const out: TeamsMention[] = []
    for (const { platform, kind, id } of entries) {
      if (platform !== 'teams' || kind !== 'user' || !/^[0-9a-f-]{36}$/i.test(id)) continue
      const member = await this.member(conversationId, id).catch(() => undefined)
      if (member?.name) out.push({ id, name: member.name })
      else this.log.warn('a Teams mention names someone Teams does not know in this channel', { id })
    }
    return out
  }

  /**
   * The Teams user (Microsoft Entra object id) with this e-mail address, for on-call people and
   * responders listed by e-mail: the rosters of the channels askbridge knows, matched on e-mail or
   * user principal name without regard to case; undefined when nobody there has it.
   */
  async lookupByEmail(email: string): Promise<string | undefined> {
    const wanted = email.trim().toLowerCase()
    for (const conversationId of [...this.channels]) {
      const found = (await this.roster(conversationId))?.byAddress.get(wanted)
      if (found) return found
    }
    return undefined
  }

  /** A channel's roster by address, from the cache while it is fresh; one load at a time. */
  private async roster(conversationId: string): Promise<Roster | undefined> {
    const cached = this.rosters.get(conversationId)
    if (cached && Date.now() - cached.at < MEMBER_TTL_MS) return cached
    let loading = this.rosterLoads.get(conversationId)
    if (!loading) {
      loading = this.loadRoster(conversationId).finally(() => this.rosterLoads.delete(conversationId))
      this.rosterLoads.set(conversationId, loading)
    }
    return loading
  }

  private async loadRoster(conversationId: string): Promise<Roster | undefined> {
    const members = await this.transport.roster(conversationId)
    if (!members) {
      this.log.warn('askbridge is not in this Teams channel: its members cannot be looked up', {
        conversationId,
      })
      return undefined
    }
    const byAddress = new Map<string, string>()
    const teamsIds = new Map<string, string>()
    const at = Date.now()
    for (const m of members) {
      if (!m.aadObjectId) continue
      teamsIds.set(m.aadObjectId, m.id)
      for (const address of [m.email, m.userPrincipalName])
        if (address) byAddress.set(address.toLowerCase(), m.aadObjectId)
      // What the roster says also serves mentions and clicks without another look-up.
      const entry = {
        id: m.id,
        ...(m.email ? { email: m.email } : {}),
        ...(m.name ? { name: m.name } : {}),
        at,
      }
      this.members.set(m.aadObjectId, entry)
      this.members.set(m.id, entry)
    }
    const roster = { byAddress, teamsIds }
    this.rosters.set(conversationId, { ...roster, at })
    return roster
  }

  /** One member's Teams user id, e-mail and name, from the cache while it is fresh. */
  async member(conversationId: string, userId: string) {
    const cached = this.members.get(userId)
    if (cached && Date.now() - cached.at < MEMBER_TTL_MS) return cached
    const found = await this.transport.member(conversationId, userId)
    const entry = { ...found, at: Date.now() }
    this.members.set(userId, entry)
    return entry
  }
}
