import { isLive, LIVE_STATUSES } from '../card/lifecycle.js'
import type { CardState, Destination } from '../card/types.js'
import type { Logger } from '../log.js'
import type { CallKey, Store } from '../store/types.js'
import { escalationTargets, mergeResponders, type Staffer } from './staffing.js'

export interface EscalationDeps {
  store: Store
  now: () => number
  log: Logger
  staffer: Staffer
  /** Compare-and-set a change to a card (undefined: no change); true when written. */
  mutate: (call: CallKey, change: (card: CardState) => CardState | undefined) => Promise<boolean>
  /** Post the card to destinations that have no copy under this key suffix yet. */
  postCopies: (card: CardState, destinations: Destination[], keySuffix: string) => Promise<number>
}

/**
 * Fire escalation tiers that are due. Times count from the card's creation, so a restart
 * neither loses nor repeats a tier (the tier count is compare-and-set in the store).
 */
export async function escalate(deps: EscalationDeps): Promise<void> {
  const { store, now, log } = deps
  // Only live cards: the work grows with open questions, not with history.
  const cards = await store.listCards<CardState>({ statuses: [...LIVE_STATUSES] })
  for (const { agentId, callId, state } of cards) {
    const key = { agentId, callId }
    if (!isLive(state) || !state.escalation) continue
    let card = state
    while (card.escalated < (card.escalation?.length ?? 0)) {
      const tier = card.escalation?.[card.escalated]
      if (!tier || now() < card.createdAt + tier.afterMs) break
      const index = card.escalated
      // The next on-call level, looked up when the tier is due: mentioned, and allowed to answer.
      const staffing = tier.oncall ? await deps.staffer.onCall(tier.oncall, tier.oncall.level) : undefined
      let fired: CardState | undefined
      const ok = await deps.mutate(key, (c) => {
        if (c.escalated !== index || !isLive(c)) return undefined
        fired = { ...c, escalated: index + 1 }
        if (staffing) {
          fired.responders = mergeResponders(c.responders ?? { web: false }, staffing.responders)
          fired.oncall = [...(c.oncall ?? []), staffing.shown]
        }
        return fired
      })
      if (!ok || !fired) break
      card = fired
      await deps.postCopies(card, escalationTargets(tier, card, staffing), `#escalation-${index + 1}`)
      await store.audit({ ...key, kind: 'escalated', detail: { tier: index + 1, after: tier.afterMs } })
      log.info('question escalated', { ...key, tier: index + 1 })
    }
  }
}
