import { z } from 'zod'
import type { CardState } from '../../src/adapter-kit.js'
import { pageQuery } from '../../src/server/query.js'
import { callKeyString } from '../../src/store/fold.js'
import type { CallKey, VersionedCard } from '../../src/store/types.js'

/** The most finished cards one page of the inbox's settled list may ask for. */
export const MAX_SETTLED_PAGE = 100

type Card = VersionedCard<CardState> & CallKey

/** Where a finished card sits in the settled list: most recently written first, then by call key. */
interface Position {
  t: number
  k: string
}

/** Last written first (the store's order); without a store, by when it finished. */
const positionOf = (card: Card & { updatedAt?: number }): Position => ({
  t: card.updatedAt ?? card.state.answeredAt ?? card.state.createdAt,
  k: callKeyString(card),
})

/** True when `a` comes before `b` in the settled list. */
const before = (a: Position, b: Position) => a.t > b.t || (a.t === b.t && a.k < b.k)

const cursorSchema = z
  .string()
  .max(400)
  .regex(/^[A-Za-z0-9_-]+$/)
  .transform((c, ctx) => {
    try {
      return JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as unknown
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not a cursor' })
      return z.NEVER
    }
  })
  .pipe(z.strictObject({ t: z.number().int().nonnegative(), k: z.string().min(1).max(200) }))

/** An opaque cursor: the settled list continues after this card. */
function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify(p), 'utf8').toString('base64url')
}

/** `?limit=` and `?cursor=` of `GET /inbox/api/cards`, validated (400 BAD_REQUEST otherwise). */
export function feedParams(url: URL, defaultLimit: number): { limit: number; after?: Position } {
  const { limit, cursor } = pageQuery(url, { defaultLimit, maxLimit: MAX_SETTLED_PAGE, cursor: cursorSchema })
  return cursor === undefined ? { limit } : { limit, after: cursor }
}

/** Finished cards, newest written first: the `count` most recent, and whether that is all of them. */
export type FinishedCards = (
  count: number,
) => Promise<{ cards: Array<Card & { updatedAt?: number }>; all: boolean }>

/**
 * One page of finished cards, newest first, after `after`: up to `limit` that `shown` accepts
 * (posted to the inbox), and a cursor when more follow. It reads the most recently written
 * cards, more each round, instead of every finished card: a card not read was written no later
 * than the oldest one read, so everything newer than that is in order. The first page costs the
 * same at any history.
 */
export async function settledPage(
  finished: FinishedCards,
  shown: (card: CardState) => Promise<boolean>,
  limit: number,
  after?: Position,
): Promise<{ cards: Card[]; nextCursor?: string }> {
  const accepted = new Map<string, boolean>()
  const isShown = async (card: Card) => {
    const k = callKeyString(card)
    const known = accepted.get(k)
    if (known !== undefined) return known
    const ok = await shown(card.state)
    accepted.set(k, ok)
    return ok
  }
  for (let count = (limit + 1) * 4; ; count *= 4) {
    const read = await finished(count)
    // Cards not read were written (so finished) no later than this: only what is newer is sure.
    const floor = read.all
      ? Number.NEGATIVE_INFINITY
      : read.cards.reduce((min, c) => Math.min(min, c.updatedAt ?? 0), Number.POSITIVE_INFINITY)
    const ordered = read.cards
      .map((card) => ({ card, at: positionOf(card) }))
      .filter((c) => after === undefined || before(after, c.at))
      .sort((a, b) => (before(a.at, b.at) ? -1 : before(b.at, a.at) ? 1 : 0))
    const page: Array<{ card: Card; at: Position }> = []
    let more = false
    for (const c of ordered) {
      // Not newer than every unread card: an unread one might come first.
      if (c.at.t <= floor) break
      if (!(await isShown(c.card))) continue
      if (page.length === limit) {
        more = true
        break
      }
      page.push(c)
    }
    // The page is sure once one more card than it holds is sure, or when every card was read.
    if (!more && !read.all) continue
    const last = page.at(-1)
    return { cards: page.map((p) => p.card), ...(more && last ? { nextCursor: encodeCursor(last.at) } : {}) }
  }
}
