/** What the page knows: the cards it shows, per-card notices and what is typed in text boxes. */
import type { WebCardView, WebFyi, WebFyiList } from './types.js'

export interface Notice {
  kind: 'bad' | 'info'
  text: string
}

/** Cards by {@link keyOf}. */
export let cards = new Map<string, WebCardView>()
/** The latest notice per card (by {@link keyOf}); cleared by the next action. */
export const notices: Record<string, Notice | undefined> = {}
/** Text typed into boxes, by {@link inputKey}, so a re-render keeps it. */
export const inputs: Record<string, string | undefined> = {}

/** Notices without buttons, newest first (at most as many as the server keeps). */
export let fyis: WebFyi[] = []
/** How many notices the server keeps (its list says); none are dropped before the first list. */
let fyiLimit = Number.POSITIVE_INFINITY

let render: () => void = () => {}

/** The function that redraws the page after a change (render.ts). */
export function onChange(redraw: () => void): void {
  render = redraw
}

/** Something the page shows changed: redraw. */
export function changed(): void {
  render()
}

/** callIds are unique per agent only: a card is known by both. */
export function keyOf(card: { agentId: string; callId: string }): string {
  return `${card.agentId}\u0000${card.callId}`
}

export function inputKey(cardKey: string, questionId: string, what: string): string {
  return `${cardKey}\u0000${questionId}\u0000${what}`
}

/** Keep a card view, unless it is older than the one shown (an out-of-order update). */
function take(view: WebCardView): void {
  const key = keyOf(view)
  if (olderThanShown(view, cards.get(key))) return
  cards.set(key, view)
  learned.set(key, ++learning)
}

function olderThanShown(view: WebCardView, shown: WebCardView | undefined): boolean {
  return !!shown && shown.version !== undefined && view.version !== undefined && view.version < shown.version
}

/** When each card was last learned (a counter, not a clock): see {@link learnedMark}. */
const learned = new Map<string, number>()
let learning = 0

/** A mark to pass to {@link replaceAll}: taken just before the list is requested. */
export function learnedMark(): number {
  return learning
}

/** Where the settled list continues (older finished cards), while there are more to show. */
export let olderCursor: string | undefined

/** One card changed (an action's reply, a live update). */
export function upsert(view: WebCardView): void {
  take(view)
  changed()
}

/**
 * Replace every card with the server's list (live cards and the newest settled page), requested
 * after `mark` ({@link learnedMark}). A card learned after that (a live event, an action's reply)
 * may be newer than the list, which was read while it changed: it stays, or keeps its newer
 * version, instead of vanishing until its next change.
 */
export function replaceAll(list: WebCardView[], next: string | undefined, mark: number): void {
  const fresh = new Map(list.map((c) => [keyOf(c), c]))
  for (const [key, shown] of cards) {
    if ((learned.get(key) ?? 0) <= mark) continue
    const listed = fresh.get(key)
    if (!listed || olderThanShown(listed, shown)) fresh.set(key, shown)
  }
  cards = fresh
  for (const key of learned.keys()) if (!cards.has(key)) learned.delete(key)
  olderCursor = next
  changed()
}

/** The next, older page of settled cards ("Show older"). */
export function addOlder(list: WebCardView[], next: string | undefined): void {
  for (const view of list) take(view)
  olderCursor = next
  changed()
}

/** When each notice without buttons was pushed live (the same counter as cards'). */
const fyiLearned = new Map<string, number>()

/**
 * The server's notices without buttons, as listed, requested after `mark` ({@link learnedMark}).
 * A notice pushed live after that is newer than the list, which may have been read before it
 * existed: it stays first, instead of vanishing until the next reload.
 */
export function setFyis({ notices: list, limit }: WebFyiList, mark: number): void {
  fyiLimit = limit
  const listed = new Set(list.map((n) => n.id))
  const pushed = fyis.filter((n) => !listed.has(n.id) && (fyiLearned.get(n.id) ?? 0) > mark)
  fyis = [...pushed, ...list].slice(0, fyiLimit)
  const kept = new Set(fyis.map((n) => n.id))
  for (const id of fyiLearned.keys()) if (!kept.has(id)) fyiLearned.delete(id)
  changed()
}

/** One new notice without buttons (pushed live): first in the list. */
export function addFyi(notice: WebFyi): void {
  fyiLearned.set(notice.id, ++learning)
  fyis = [notice, ...fyis.filter((x) => x.id !== notice.id)].slice(0, fyiLimit)
  changed()
}
