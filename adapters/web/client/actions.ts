/** What the page sends: card actions, and the heartbeat that keeps a "Take my time" hold. */
import { newId } from './dom.js'
import { iHold, personBody, writeHeaders } from './session.js'
import { addOlder, cards, changed, keyOf, notices, olderCursor, upsert } from './store.js'
import type { WebActionReply, WebCardList, WebCardView } from './types.js'

/** A card action as the server's action schema takes it (adapters/web/actions.ts). */
export type WebAction = { type: string } & Record<string, unknown>

function cardPath(card: WebCardView, what: string): string {
  return `/inbox/api/cards/${encodeURIComponent(card.callId)}/${what}?agentId=${encodeURIComponent(card.agentId)}`
}

/** Send an action; the reply's notice and card are shown. Resolves whether it was applied. */
export async function act(card: WebCardView, action: WebAction): Promise<boolean> {
  const key = keyOf(card)
  notices[key] = undefined
  const body = { action, person: personBody(), id: newId() }
  let res: Response
  let data: (Partial<WebActionReply> & { error?: { message?: string } }) | undefined
  try {
    res = await fetch(cardPath(card, 'actions'), {
      method: 'POST',
      headers: writeHeaders(),
      body: JSON.stringify(body),
    })
    data = await res.json()
  } catch (e) {
    notices[key] = { kind: 'bad', text: `Could not reach askbridge: ${(e as Error).message}` }
    changed()
    return false
  }
  if (!res.ok || !data?.ok) {
    notices[key] = { kind: 'bad', text: data?.message || data?.error?.message || 'That did not work.' }
  } else if (data.message) {
    notices[key] = { kind: 'info', text: data.message }
  }
  if (data?.card) upsert(data.card)
  else changed()
  return !!(res.ok && data?.ok)
}

/**
 * A hold ("Take my time") lasts only while this tab is open: the bridge lets go once these
 * heartbeats stop (within its hold lease, 30 s by default).
 */
export function renewHolds(): void {
  cards.forEach((card) => {
    if (card.status !== 'open' || !iHold(card)) return
    fetch(cardPath(card, 'hold'), {
      method: 'POST',
      headers: writeHeaders(),
      body: JSON.stringify({ person: personBody() }),
    }).catch(() => {})
  })
}

/** "Show older": the next page of settled cards, after the last one shown. */
export async function loadOlder(): Promise<void> {
  if (olderCursor === undefined) return
  const res = await fetch(`/inbox/api/cards?cursor=${encodeURIComponent(olderCursor)}`)
  if (!res.ok) throw new Error(`HTTP ${res.status}`)
  const data = (await res.json()) as WebCardList
  addOlder(data.cards, data.nextCursor)
}
