import { CALL_ID_PATTERN } from '../card/codec.js'
import type { LateReply } from '../protocol/types.js'
import type { QueuedReply } from '../service/service.js'
import type { ApiDeps } from './api.js'
import { sendJson } from './body.js'
import { HttpError } from './errors.js'
import type { RouteContext } from './router.js'
import { openSse, wantsEventStream } from './sse.js'

/** Long-polls and SSE never hold a reply request longer than this. */
export const MAX_REPLY_WAIT_SECONDS = 60

/** Late replies: SSE with `Accept: text/event-stream`, else JSON long-polled with `?wait=`. */
export async function replies({ req, res, params, url }: RouteContext, deps: ApiDeps): Promise<void> {
  const { service } = deps
  const agentId = params.agentId ?? ''
  if (!CALL_ID_PATTERN.test(agentId)) throw new HttpError('BAD_REQUEST', 'agentId is malformed')
  const mine = (r: QueuedReply) => r.agentId === agentId

  if (wantsEventStream(req)) {
    const stream = openSse(req, res, { heartbeatMs: deps.heartbeatMs ?? 15_000 })
    // Subscribe before reading the queue so nothing slips between; `sent` drops the overlap.
    const sent = new Set<string>()
    const send = (reply: LateReply) => {
      if (sent.has(reply.payload.callId)) return
      sent.add(reply.payload.callId)
      stream.send('reply', reply, reply.payload.callId)
    }
    const onReply = (r: QueuedReply) => {
      if (mine(r)) send(r.reply)
    }
    // A discarded reply may be answered again; that new reply must be sent too.
    const onGone = (r: { agentId: string; callId: string }) => {
      if (r.agentId === agentId) sent.delete(r.callId)
    }
    service.on('reply', onReply)
    service.on('replyDiscarded', onGone)
    service.on('replyAdmitted', onGone)
    const untrack = deps.track(res, () => stream.close())
    void stream.done.then(() => {
      service.off('reply', onReply)
      service.off('replyDiscarded', onGone)
      service.off('replyAdmitted', onGone)
      untrack()
    })
    for (const r of await service.replies(agentId)) send(r.reply)
    return
  }

  const waitText = url.searchParams.get('wait')
  let wait = 0
  if (waitText !== null) {
    wait = Number(waitText)
    if (!Number.isFinite(wait) || wait < 0) {
      throw new HttpError('BAD_REQUEST', 'wait must be a number of seconds (0-60)')
    }
    wait = Math.min(wait, MAX_REPLY_WAIT_SECONDS)
  }
  const current = async () => (await service.replies(agentId)).map((r) => r.reply)
  let list = await current()
  if (list.length === 0 && wait > 0) {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        service.off('reply', onReply)
        req.off('close', done)
        untrack()
        resolve()
      }
      const onReply = (r: QueuedReply) => {
        if (mine(r)) done()
      }
      const timer = setTimeout(done, wait * 1000)
      service.on('reply', onReply)
      req.on('close', done)
      const untrack = deps.track(res, done)
    })
    if (res.destroyed) return
    list = await current()
  }
  sendJson(res, 200, { replies: list })
}
