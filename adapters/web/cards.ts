/** The inbox's cards: read from the store (else those seen since start), which were posted here, and which one a click names. */
import { type CardState, type CardStatus, setBounded } from '../../src/adapter-kit.js'
import { HttpError } from '../../src/server/errors.js'
import { callKeyString } from '../../src/store/fold.js'
import type { CallKey, Store } from '../../src/store/types.js'

/** What the inbox reads from the bridge's store. */
export type InboxStore = Pick<Store, 'getCard' | 'listCards' | 'listPosts' | 'findCards' | 'listAudit'>

export class InboxCards {
  /** Cards seen through post/update, with a local version (used when there is no store). */
  private readonly seen = new Map<string, { state: CardState; version: number }>()

  constructor(private readonly store: InboxStore | undefined) {}

  async cardsWith(statuses: readonly CardStatus[], latest?: number) {
    const filter = { statuses: [...statuses], ...(latest ? { latest } : {}) }
    if (this.store) return this.store.listCards<CardState>(filter)
    return [...this.seen.values()]
      .filter((c) => statuses.includes(c.state.status))
      .map((c) => ({ ...c, agentId: c.state.agentId, callId: c.state.callId }))
  }

  async postedHere(key: CallKey): Promise<boolean> {
    if (this.seen.has(callKeyString(key))) return true
    if (!this.store) return false
    return (await this.store.listPosts(key)).some((p) => p.platform === 'web')
  }

  async latest(key: CallKey): Promise<{ state: CardState; version: number } | undefined> {
    if (this.store) return this.store.getCard<CardState>(key)
    return this.seen.get(callKeyString(key))
  }

  /**
   * The inbox card a click names: `?agentId=` when given (the page always sends it); without,
   * the one card with that callId in the inbox, and 409 AMBIGUOUS_CALL when several agents have one.
   */
  async resolve(callId: string, agentId: string | undefined): Promise<CallKey | undefined> {
    if (agentId !== undefined) return { agentId, callId }
    const candidates = this.store
      ? await this.store.findCards(callId)
      : [...this.seen.values()].filter((c) => c.state.callId === callId).map((c) => c.state)
    const here: CallKey[] = []
    for (const c of candidates) if (await this.postedHere(c)) here.push({ agentId: c.agentId, callId })
    if (here.length > 1) {
      throw new HttpError(
        'AMBIGUOUS_CALL',
        `callId "${callId}" names questions of several agents; say which with ?agentId=`,
      )
    }
    return here[0]
  }

  remember(card: CardState): void {
    const k = callKeyString(card)
    const prev = this.seen.get(k)
    // Bounded: the store (when there is one) keeps the rest.
    setBounded(this.seen, k, { state: card, version: (prev?.version ?? 0) + 1 }, 1000)
  }
}
