import { randomUUID } from 'node:crypto'
import { FINISHED_STATUSES, isLive, LIVE_STATUSES } from '../card/lifecycle.js'
import type { CardState, Destination } from '../card/types.js'
import type { Logger } from '../log.js'
import { isStorageError } from '../store/errors.js'
import { callKeyOf, callKeyString } from '../store/fold.js'
import type { CallKey, Store } from '../store/types.js'
import { type ChatAdapter, destinationKey, isPostPending, POST_PENDING } from './adapter.js'

/** At start, finished cards this recent get their copies brought up to date once. */
const RECENT_MS = 24 * 60 * 60_000
/** How many of the most recently finished cards a start brings up to date. */
const RECOVER_FINISHED = 200
/**
 * How long a claim to post a copy holds without renewal. The holder renews it every third of
 * this while it posts; a claim that lapses is a process that died between claiming and posting.
 */
const CLAIM_MS = 3000
/** How often a bridge waiting on another's post looks whether it is done (or its holder died). */
const HOLDER_POLL_MS = 100

export interface CopiesOptions {
  store: Store
  adapters: Map<string, ChatAdapter>
  now: () => number
  log: Logger
  /** A later turn of the event loop for work that follows an acknowledgement (see turns.ts). */
  turn: () => Promise<void>
}

type Outcome = 'posted' | 'held' | 'failed'

/**
 * A card's copies on the platforms: posting one per destination (once, also across restarts
 * and across bridges sharing the database: the store keeps the posts and who is posting each)
 * and keeping every copy up to date.
 */
export class CardCopies {
  readonly #o: CopiesOptions
  readonly #updates = new Map<string, { dirty: boolean; promise: Promise<void> }>()
  readonly #posting = new Map<string, Promise<Outcome>>()
  /** This process, as the holder of claims to post. */
  readonly #owner = randomUUID()
  #timer: ReturnType<typeof setInterval> | undefined
  #stopped = false
  #sweeping = false

  constructor(options: CopiesOptions) {
    this.#o = options
  }

  /**
   * Keep this process's claims alive while it posts, and take over the copies of a process that
   * died between claiming and posting.
   */
  start(): void {
    this.#stopped = false
    this.#timer ??= setInterval(() => {
      void this.#tick().catch((error: unknown) =>
        this.#o.log.warn('renewing or sweeping card posts failed; retried shortly', { error }),
      )
    }, CLAIM_MS / 3)
    this.#timer.unref()
  }

  stop(): void {
    this.#stopped = true
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
  }

  async #tick(): Promise<void> {
    if (this.#posting.size > 0) await this.#o.store.renewPostClaims(this.#owner, this.#o.now() + CLAIM_MS)
    // One sweep at a time: a take-over that posts may outlast the interval.
    if (this.#sweeping) return
    this.#sweeping = true
    try {
      await this.sweep()
    } finally {
      this.#sweeping = false
    }
  }

  /**
   * Copies whose holder died between claiming and posting: looked for on the platform and
   * adopted, else posted (a live card) or left alone (a finished one).
   */
  async sweep(): Promise<void> {
    for (const post of await this.#o.store.lapsedPosts(this.#o.now(), 20)) {
      const card = (await this.#o.store.getCard<CardState>(post))?.state
      const destination = card?.destinations?.find((d) => destinationKey(d) === post.destKey)
      if (!card || !destination || !this.#o.adapters.has(destination.platform)) {
        // Nothing this process can post (an escalation tier counts as fired): end the claim.
        if ((await this.#o.store.claimPost(post, this.#claim())) !== undefined)
          await this.#o.store.releasePost(post, post.destKey, this.#owner)
        continue
      }
      this.#o.log.info('the process posting a copy is gone: taking it over', {
        ...callKeyOf(post),
        destination: post.destKey,
      })
      await this.#postOnce(card, destination, post.destKey, isLive(card))
    }
  }

  #claim() {
    const now = this.#o.now()
    return { owner: this.#owner, until: now + CLAIM_MS, now }
  }

  /**
   * Post the card to each destination that has no copy yet. Returns how many copies exist. A
   * copy another bridge is posting is waited for and adopted (or taken over should that bridge
   * die); with `wait: false` it is left to that bridge (or to the sweep). `made`: the card was
   * just made where none was stored, so it has no copies to look up first (its claims would
   * still find one).
   */
  async post(
    card: CardState,
    destinations: Destination[],
    {
      keySuffix = '',
      wait = true,
      made = false,
    }: { keySuffix?: string; wait?: boolean; made?: boolean } = {},
  ): Promise<number> {
    const key = callKeyOf(card)
    const posts = made ? [] : await this.#o.store.listPosts(key)
    const existing = new Map(posts.map((p) => [p.destKey, p]))
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
        let outcome = await this.#postOnce(card, destination, destKey)
        while (outcome === 'held' && wait && !this.#stopped)
          outcome = await this.#held(card, destination, destKey)
        // Held: another process is posting it (and its claim passes on should that one die).
        if (outcome !== 'failed') count++
      }),
    )
    return count
  }

  /** Another process holds the copy: once it is posted, adopt it; should the holder die, take over. */
  async #held(card: CardState, destination: Destination, destKey: string): Promise<Outcome> {
    const post = (await this.#o.store.listPosts(callKeyOf(card))).find((p) => p.destKey === destKey)
    if (post && !isPostPending(post.ref)) return 'posted'
    await new Promise((resolve) => setTimeout(resolve, HOLDER_POLL_MS))
    return this.#postOnce(card, destination, destKey)
  }

  /**
   * Post one copy without ever posting it twice. A claim is stored before the platform sees the
   * post, with a marker the platform keeps (Slack message metadata, a Discord nonce): one process
   * (of however many share the database) holds it at a time and renews it while it posts. A claim
   * taken over (its holder died, perhaps after posting) makes the adapter look for the copy
   * before posting again. In this process one caller at a time posts a given copy.
   */
  #postOnce(
    card: CardState,
    destination: Destination,
    destKey: string,
    postIfMissing = true,
  ): Promise<Outcome> {
    const key = callKeyOf(card)
    const lock = `${callKeyString(key)}\u0000${destKey}`
    const running = this.#posting.get(lock)
    if (running) return running
    const work = (async (): Promise<Outcome> => {
      const adapter = this.#o.adapters.get(destination.platform) as ChatAdapter
      const marker = `${key.agentId}|${key.callId}|${destKey}`
      const intent = {
        ...key,
        destKey,
        platform: destination.platform,
        ref: POST_PENDING,
        createdAt: this.#o.now(),
      }
      try {
        const claim = await this.#o.store.claimPost(intent, this.#claim())
        // Posted already, or another live process is posting it: asked again, this looks again.
        if (!claim) return 'held'
        let ref: unknown
        if (claim.taken) {
          try {
            ref = await adapter.find?.(card, destination, marker, claim.createdAt)
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
        }
        // A finished card is not posted anew; a copy found is adopted so it shows the outcome.
        if (ref === undefined && !postIfMissing) {
          await this.#o.store.releasePost(key, destKey, this.#owner)
          return 'failed'
        }
        const adopted = ref !== undefined
        ref ??= await adapter.post(card, destination, marker)
        await this.#o.store.updatePost(key, destKey, ref ?? null)
        // An adopted copy shows the card as it was when it was posted; the card may have moved on
        // (answered through it while its claim lapsed), so bring it up to date.
        if (adopted) void this.refresh(key).catch(() => undefined)
        return 'posted'
      } catch (error) {
        // Not stored: the ask fails with the storage fault (retry the same callId; a copy that
        // was posted is found by its intent then), rather than "could not be posted".
        if (isStorageError(error)) throw error
        this.#o.log.error('posting a card failed', { ...key, destination: destKey, error })
        // A retry (the same callId, on any bridge) takes it over at once.
        await this.#o.store.releasePost(key, destKey, this.#owner).catch(() => undefined)
        await this.#o.store
          .audit({
            ...key,
            kind: 'post-failed',
            platform: destination.platform,
            detail: { destination: destKey, message: error instanceof Error ? error.message : String(error) },
          })
          .catch(() => undefined)
        return 'failed'
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
   * its buttons. Live and recently finished cards are brought up to date once. A copy whose
   * claim has not lapsed yet is left to the sweep.
   */
  async recover(): Promise<void> {
    // Live cards, and the finished ones changed last before this start (a change stored just
    // before a crash is among the latest updates; the newest RECOVER_FINISHED, within
    // RECENT_MS), read without reading history. An older finished card's copy cut short by a
    // crash is left to the lapsed-claim sweep.
    const live = await this.#o.store.listCards<CardState>({ statuses: [...LIVE_STATUSES] })
    const recent = await this.#o.store.listCards<CardState>({
      statuses: [...FINISHED_STATUSES],
      updatedSince: this.#o.now() - RECENT_MS,
      latest: RECOVER_FINISHED,
    })
    for (const { state: card } of [...live, ...recent]) {
      if (!card.destinations?.length) continue
      const key = callKeyOf(card)
      const destinations = card.destinations.filter((d) => this.#o.adapters.has(d.platform))
      const posts = await this.#o.store.listPosts(key)
      const done = new Set(posts.filter((p) => !isPostPending(p.ref)).map((p) => p.destKey))
      const recent = isLive(card) || (card.answeredAt ?? card.createdAt) > this.#o.now() - RECENT_MS
      if (!destinations.every((d) => done.has(destinationKey(d)))) {
        if (isLive(card)) await this.post(card, destinations, { wait: false })
        else {
          const pending = new Set(posts.filter((p) => isPostPending(p.ref)).map((p) => p.destKey))
          for (const d of destinations) {
            if (pending.has(destinationKey(d))) await this.#postOnce(card, d, destinationKey(d), false)
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
        // Start on a turn of its own: whatever asked for this (a click) answers its person first,
        // and changes made meanwhile fold into this one pass.
        await this.#o.turn()
        while (entry.dirty) {
          entry.dirty = false
          const read = await this.#o.store.getCardWithPosts<CardState>(key)
          if (!read) return
          const card = read.state
          // A copy still being posted (or cut short by a crash) has no reference to update yet.
          const posts = read.posts.filter((p) => !isPostPending(p.ref))
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
