import type { Person } from '../card/types.js'
import { globMatch } from '../routing/routes.js'

/** One person's accounts, from the routes file's `people` map. */
export interface PersonAccounts {
  slack?: string | undefined
  discord?: string | undefined
  /** Microsoft Entra object id of the person's Teams account. */
  teams?: string | undefined
  /** Agents this person runs (`*` globs): the person is their requester (`excludeRequester`). */
  agents?: string[] | undefined
}

/**
 * Who is who across platforms: the routes file's `people` map (e-mail -> Discord and Slack ids),
 * plus Slack ids learned from `users.lookupByEmail`. It gives a person one identity
 * (`email:ADDRESS`) whether they click in Slack, Discord or the signed-in inbox.
 */
export class People {
  private readonly byEmail = new Map<string, PersonAccounts>()
  private readonly byAccount = new Map<string, string>()
  private readonly runs: Array<{ email: string; agents: string[] }> = []

  constructor(map: Record<string, PersonAccounts | string> = {}) {
    for (const [email, accounts] of Object.entries(map)) {
      const entry = typeof accounts === 'string' ? { discord: accounts } : accounts
      if (typeof accounts !== 'string' && accounts.agents?.length) {
        this.runs.push({ email: email.toLowerCase(), agents: accounts.agents })
      }
      if (entry.slack) this.learn('slack', entry.slack, email)
      if (entry.discord) this.learn('discord', entry.discord, email)
      if (entry.teams) this.learn('teams', entry.teams, email)
      if (!entry.slack && !entry.discord && !entry.teams) this.byEmail.set(email.toLowerCase(), {})
    }
  }

  /** Tie a platform account to an e-mail address (the map, or a Slack e-mail look-up). */
  learn(platform: 'slack' | 'discord' | 'teams', userId: string, email: string): void {
    const key = email.toLowerCase()
    const entry = this.byEmail.get(key) ?? {}
    entry[platform] = userId
    this.byEmail.set(key, entry)
    this.byAccount.set(`${platform}:${userId}`, key)
  }

  /** The person who runs this agent (the first `people` entry whose `agents` match), if any. */
  requesterOf(agentId: string): { platform: string; userId: string } | undefined {
    const found = this.runs.find((r) => r.agents.some((glob) => globMatch(glob, agentId)))
    return found ? { platform: 'email', userId: found.email } : undefined
  }

  /** The accounts the map knows for an address. */
  accounts(email: string): PersonAccounts {
    return { ...this.byEmail.get(email.toLowerCase()) }
  }

  /** The person's e-mail address: their sign-in, or the map's entry for their account. */
  emailOf(person: Pick<Person, 'platform' | 'userId' | 'email'>): string | undefined {
    // A person named by address (a token's requester, `email:ADDRESS`).
    if (person.platform === 'email') return person.userId.toLowerCase()
    return person.email?.toLowerCase() ?? this.byAccount.get(`${person.platform}:${person.userId}`)
  }

  /** One key per person: `email:ADDRESS` when known, else `platform:userId`. */
  identityOf(person: Pick<Person, 'platform' | 'userId' | 'email'>): string {
    const email = this.emailOf(person)
    return email ? `email:${email}` : `${person.platform}:${person.userId}`
  }

  /**
   * The person with `identity` set when an address ties their accounts (for quorum and requester
   * exclusion); unchanged otherwise, as platform + userId already say who they are.
   */
  identify<P extends Pick<Person, 'platform' | 'userId' | 'email'>>(person: P): P & { identity?: string } {
    const email = this.emailOf(person)
    return email ? { ...person, identity: `email:${email}` } : person
  }
}
