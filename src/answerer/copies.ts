import { isLive } from '../card/apply.js'
import type { CardState, Destination } from '../card/types.js'
import type { Logger } from '../log.js'
import { isStorageError } from '../store/errors.js'
import { callKeyOf, callKeyString } from '../store/fold.js'
import type { CallKey, Store } from '../store/types.js'
import { type ChatAdapter, destinationKey, isPostPending, POST_PENDING } from './adapter.js'

/** At start, finished cards this recent get their copies brought up to date once. */
const RECENT_MS = 24 * 60 * 60_000

export interface CopiesOptions {
  store: Store
  adapters: Map<string, ChatAdapter>
  now: () => number
  log: Logger
}

/**
 * A card's copies on the platforms: posting one per destination (once, also across restarts:
 * the store keeps the posts) and keeping every copy up to date.
 */
export class CardCopies {
  readonly #o: CopiesOptions
  readonly #updates = new Map<string, { dirty: boolean; promise: Promise<void> }>()
  readonly #posting = new Map<string, Promise<boolean>>()

  constructor(options: CopiesOptions) {
    this.#o = options
  }

  /** Post the card to each destination that has no copy yet. Returns how many copies exist. */
  async post(card: CardState, destinations: Destination[], keySuffix = ''): Promise<number> {
    const key = callKeyOf(card)
    const existing = new Map((await this.#o.store.listPosts(key)).map((p) => [p.destKey, p]))
    let count = 0
    await Promise.all(
      destinations.map(async (destination) => {
        const destKey = destinationKey(destination) + keySuffix
        const known = existing.get(destKey)
        if (known && !isPostPending(known.ref)) {
          count++
          return
        }
        if (!this.#o.adapters.has(destination.platform)) return
        if (await this.#postOnce(card, destination, destKey, known?.createdAt)) count++
      }),
    )
    return count
  }

  /**
   * Post one copy without ever posting it twice: the intent is stored before the platform sees
   * the post, with a marker the platform keeps (Slack message metadata, a Discord nonce); an
   * intent found without a reference (a crash in between) makes the adapter look for the copy
   * before posting again. In this process one caller at a time posts a given copy.
   */
  #postOnce(
    card: CardState,
    destination: Destination,
    destKey: string,
    intendedAt: number | undefined,
    postIfMissing = true,
  ): Promise<boolean> {
    const key = callKeyOf(card)
    const lock = `${callKeyString(key)}\u0000${destKey}`
    const running = this.#posting.get(lock)
    if (running) return running
    const work = (async () => {
      const adapter = this.#o.adapters.get(destination.platform) as ChatAdapter
      const marker = `${key.agentId}|${key.callId}|${destKey}`
      try {
        let ref: unknown
        if (intendedAt !== undefined) {
          try {
            ref = await adapter.find?.(card, destination, marker, intendedAt)
          } catch (error) {
            // Not knowing is no reason to leave the question unposted.
            this.#o.log.warn('could not look for a copy posted before a restart; posting', {
              ...key,
              destination: destKey,
              error,
            })
          }
          if (ref !== undefined)
            this.#o.log.info('adopted a copy posted before a restart', { ...key, destination: destKey })
        } else {
          const intent = {
            ...key,
            destKey,
            platform: destination.platform,
            ref: POST_PENDING,
            createdAt: this.#o.now(),
          }
          // Someone else stored the intent first: theirs to post.
          if (!(await this.#o.store.addPost(intent))) return true
        }
        // A finished card is not posted anew; a copy found is adopted so it shows the outcome.
        if (ref === undefined && !postIfMissing) return false
        ref ??= await adapter.post(card, destination, marker)
        await this.#o.store.updatePost(key, destKey, ref ?? null)
        return true
      } catch (error) {
        // Not stored: the ask fails with the storage fault (retry the same callId; a copy that
        // was posted is found by its intent then), rather than "could not be posted".
        if (isStorageError(error)) throw error
        this.#o.log.error('posting a card failed', { ...key, destination: destKey, error })
        await this.#o.store
          .audit({
            ...key,
            kind: 'post-failed',
            platform: destination.platform,
            detail: { destination: destKey, message: error instanceof Error ? error.message : String(error) },
          })
          .catch(() => undefined)
        return false
      } finally {
        this.#posting.delete(lock)
      }
    })()
    this.#posting.set(lock, work)
    return work
  }

  /**
   * After a restart: every card gets the copies it should have. A copy whose post was cut short
   * is looked for on the platform and adopted before it is posted again; a live card never
   * posted is posted; a card finished meanwhile only adopts what was posted, so that copy loses
   * its buttons. Live and recently finished cards are brought up to date once.
   */
  async recover(): Promise<void> {
    for (const { state: card } of await this.#o.store.listCards<CardState>()) {
      if (!card.destinations?.length) continue
      const key = callKeyOf(card)
      const destinations = card.destinations.filter((d) => this.#o.adapters.has(d.platform))
      const posts = await this.#o.store.listPosts(key)
      const done = new Set(posts.filter((p) => !isPostPending(p.ref)).map((p) => p.destKey))
      const recent = isLive(card) || (card.answeredAt ?? card.createdAt) > this.#o.now() - RECENT_MS
      if (!destinations.every((d) => done.has(destinationKey(d)))) {
        if (isLive(card)) await this.post(card, destinations)
        else {
          const pending = new Map(posts.filter((p) => isPostPending(p.ref)).map((p) => [p.destKey, p]))
          for (const d of destinations) {
            const intent = pending.get(destinationKey(d))
            if (intent) await this.#postOnce(card, d, intent.destKey, intent.createdAt, false)
          }
        }
      } else if (!recent) continue
      // A change stored just before the crash may never have reached the copies.
      void this.refresh(key).catch(() => undefined)
    }
  }

  /**
   * Bring every copy of a card up to date. Updates for one card never overlap; changes that land
   * while an update runs are folded into one more pass with the latest state.
   */
  refresh(call: CallKey): Promise<void> {
    const key = callKeyOf(call)
    const k = callKeyString(key)
    const running = this.#updates.get(k)
    if (running) {
      running.dirty = true
      return running.promise
    }
    const entry = { dirty: true, promise: Promise.resolve() }
    entry.promise = (async () => {
      try {
        while (entry.dirty) {
          entry.dirty = false
          const card = (await this.#o.store.getCard<CardState>(key))?.state
          if (!card) return
          // A copy still being posted (or cut short by a crash) has no reference to update yet.
          const posts = (await this.#o.store.listPosts(key)).filter((p) => !isPostPending(p.ref))
          await Promise.all(
            posts.map(async (post) => {
              const adapter = this.#o.adapters.get(post.platform)
              if (!adapter) return
              try {
                const next = await adapter.update(card, post.ref)
                if (next !== undefined) await this.#o.store.updatePost(key, post.destKey, next)
              } catch (error) {
                this.#o.log.error('updating a card failed', { ...key, destination: post.destKey, error })
              }
            }),
          )
        }
      } finally {
        this.#updates.delete(k)
      }
    })()
    this.#updates.set(k, entry)
    return entry.promise
  }

  /** Resolves when no update is running. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#updates.values()].map((u) => u.promise))
  }
}
