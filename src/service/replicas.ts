import { type Logger, silentLogger } from '../log.js'
import { isSharedStore } from '../store/capabilities.js'
import { callKeyString } from '../store/fold.js'
import type { CallKey } from '../store/types.js'
import type { UserQuestionService } from './service.js'

export interface ReplicaOptions {
  /**
   * How often to re-check without a notification: due deadlines of dead processes, and replies
   * whose notification was missed. @default 2000
   */
  intervalMs?: number
  /**
   * How often due deadlines of dead processes are taken over. With the store's 3 s lease, a timed
   * wait whose process died turns pending by its deadline + 4 s. @default the lesser of 1000 and
   * `intervalMs`
   */
  takeoverMs?: number
  logger?: Logger
}

/**
 * Make this process's service one of several bridges on one database:
 * - a late reply queued, admitted or discarded through another process reaches this process's
 *   reply streams (SSE, long-polls) at once, and within `intervalMs` should the notification be
 *   lost;
 * - a call cancelled through another process ends the ask waiting here;
 * - a timed call whose waiting process died turns pending at its deadline (`takeOverDue`).
 * Returns the function that stops following. A store that is not shared needs none of this.
 */
export function followReplicas(service: UserQuestionService, options: ReplicaOptions = {}): () => void {
  const store = service.store
  if (!isSharedStore(store)) return () => {}
  const log = options.logger ?? silentLogger
  const intervalMs = options.intervalMs ?? 2000
  /** Replies this process has announced, by call, so a re-check announces only new ones. */
  const announced = new Map<string, string>()
  let stopped = false

  const onLocalReply = ({ agentId, callId, reply }: { agentId: string; callId: string; reply: unknown }) => {
    announced.set(callKeyString({ agentId, callId }), JSON.stringify(reply))
  }
  const onLocalGone = (key: CallKey) => {
    announced.delete(callKeyString(key))
  }
  service.on('reply', onLocalReply)
  service.on('replyAdmitted', onLocalGone)
  service.on('replyDiscarded', onLocalGone)

  const announceReply = async (key: CallKey) => {
    const call = await service.store.getCall(key)
    if (!call?.queuedReply || call.state !== 'continued') return
    const k = callKeyString(key)
    const json = JSON.stringify(call.queuedReply)
    if (announced.get(k) === json) return
    service.emit('reply', { agentId: key.agentId, callId: key.callId, reply: call.queuedReply })
  }

  const remoteEvent = async (key: CallKey, type: string | undefined) => {
    switch (type) {
      case 'reply_queued':
        return announceReply(key)
      case 'reply_admitted':
        service.emit('replyAdmitted', key)
        return
      case 'reply_discarded':
        service.emit('replyDiscarded', key)
        return
      case 'dropped': {
        // Cancelled elsewhere while the ask waits here: end it the same way.
        if (!service.inflight(key.agentId, key.callId)) return
        const call = await service.store.getCall(key)
        if (call?.state === 'dropped' && call.dropCode === 'ASK_CANCELLED') await service.cancel(key)
        return
      }
    }
  }

  /** Replies queued anywhere that this process has not announced (a missed notification). */
  const recheckReplies = async () => {
    const live = new Set<string>()
    for (const call of await service.store.listCalls({ states: ['continued'] })) {
      if (!call.queuedReply) continue
      live.add(callKeyString(call))
      await announceReply(call)
    }
    for (const [k] of announced) if (!live.has(k)) announced.delete(k)
  }

  const takeOver = async () => {
    const taken = await store.takeOverDue()
    for (const key of taken) {
      log.info('took over the deadline of a call whose process is gone', { ...key })
      service.emit('pending', key)
    }
  }

  const run = (what: string, work: () => Promise<unknown>) => {
    if (stopped) return
    work().catch((error: unknown) => log.warn(`replica ${what} failed; retried on the next pass`, { error }))
  }

  const unwatch = store.watch((change) => {
    if (change.kind === 'resync') run('re-check', recheckReplies)
    else if (change.kind === 'event') run('follow-up', () => remoteEvent(change, change.type))
  })
  const timer = setInterval(() => run('re-check', recheckReplies), intervalMs)
  timer.unref()
  const takeoverTimer = setInterval(
    () => run('deadline takeover', takeOver),
    options.takeoverMs ?? Math.min(1000, intervalMs),
  )
  takeoverTimer.unref()

  return () => {
    stopped = true
    clearInterval(timer)
    clearInterval(takeoverTimer)
    unwatch()
    service.off('reply', onLocalReply)
    service.off('replyAdmitted', onLocalGone)
    service.off('replyDiscarded', onLocalGone)
  }
}
