import type { Person } from '../card/types.js'
import { globMatch } from './routes.js'

/** One person's accounts, from the routes file's `people` map: platform id -> user id. */
export type PersonAccounts = Partial<Record<string, string>>

/** One entry of the `people` map: the person's accounts, and the agents they run (`*` globs). */
export type PersonEntry = { agents?: string[] | undefined } & Partial<Record<string, string | string[]>>

/** A person's identity across platforms: their e-mail address, or one platform account. */
export type Identity = { email: string } | { platform: string; userId: string }

/** The key an identity is compared by (`email:ADDRESS` or `platform:userId`). */
export function identityKey(identity: Identity): string {
  return 'email' in identity ? `email:${identity.email}` : `${identity.platform}:${identity.userId}`
}

/**
 * Who is who across platforms: the routes file's `people` map (e-mail -> each platform's user
 * id), plus accounts learned from a platform's e-mail look-up. It gives a person one identity
 * (their address) whichever platform they click on, or the signed-in inbox.
 */
export class People {
  private readonly byEmail = new Map<string, PersonAccounts>()
  private readonly byAccount = new Map<string, string>()
  private readonly runs: Array<{ email: string; agents: string[] }> = []

  constructor(map: Record<string, PersonEntry> = {}) {
    for (const [email, { agents, ...accounts }] of Object.entries(map)) {
      this.byEmail.set(email.toLowerCase(), {})
      // The person is the requester of the agents they run (`excludeRequester`).
      if (agents?.length) this.runs.push({ email: email.toLowerCase(), agents })
      for (const [platform, userId] of Object.entries(accounts)) {
        if (typeof userId === 'string' && userId) this.learn(platform, userId, email)
      }
    }
  }

  /** Tie a platform account to an e-mail address (the map, or a platform's e-mail look-up). */
  learn(platform: string, userId: string, email: string): void {
    const key = email.toLowerCase()
    const entry = this.byEmail.get(key) ?? {}
    entry[platform] = userId
    this.byEmail.set(key, entry)
    this.byAccount.set(identityKey({ platform, userId }), key)
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
    return (
      person.email?.toLowerCase() ??
      this.byAccount.get(identityKey({ platform: person.platform, userId: person.userId }))
    )
  }

  /** One key per person: `email:ADDRESS` when known, else `platform:userId`. */
  identityOf(person: Pick<Person, 'platform' | 'userId' | 'email'>): string {
    const email = this.emailOf(person)
    return identityKey(email ? { email } : { platform: person.platform, userId: person.userId })
  }

  /**
   * The person with `identity` set when an address ties their accounts (for quorum and requester
   * exclusion); unchanged otherwise, as platform + userId already say who they are.
   */
  identify<P extends Pick<Person, 'platform' | 'userId' | 'email'>>(person: P): P & { identity?: string } {
    const email = this.emailOf(person)
    return email ? { ...person, identity: identityKey({ email }) } : person
  }
}
