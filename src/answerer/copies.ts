import type { CardState, Destination } from '../card/types.js'
import type { Logger } from '../log.js'
import { callKeyOf, callKeyString } from '../store/fold.js'
import type { CallKey, Store } from '../store/types.js'
import { type ChatAdapter, destinationKey } from './adapter.js'

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

  constructor(options: CopiesOptions) {
    this.#o = options
  }

  /** Post the card to each destination that has no copy yet. Returns how many copies exist. */
  async post(card: CardState, destinations: Destination[], keySuffix = ''): Promise<number> {
    const key = callKeyOf(card)
    const existing = new Set((await this.#o.store.listPosts(key)).map((p) => p.destKey))
    let count = 0
    await Promise.all(
      destinations.map(async (destination) => {
        const destKey = destinationKey(destination) + keySuffix
        if (existing.has(destKey)) {
          count++
          return
        }
        const adapter = this.#o.adapters.get(destination.platform)
        if (!adapter) return
        try {
          const ref = await adapter.post(card, destination)
          await this.#o.store.addPost({
            ...key,
            destKey,
            platform: destination.platform,
            ref: ref ?? null,
            createdAt: this.#o.now(),
          })
          count++
        } catch (error) {
          this.#o.log.error('posting a card failed', { ...key, destination: destKey, error })
          await this.#o.store.audit({
            ...key,
            kind: 'post-failed',
            platform: destination.platform,
            detail: { destination: destKey, message: error instanceof Error ? error.message : String(error) },
          })
        }
      }),
    )
    return count
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
          const posts = await this.#o.store.listPosts(key)
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
