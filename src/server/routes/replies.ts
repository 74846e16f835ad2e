/**
 * An agent's late replies: read them (SSE with `Accept: text/event-stream`, else JSON long-polled
 * with `?wait=`), admit one (the call settles) or discard it (answerable again).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { CALL_ID_PATTERN } from '../../card/codec.js'
import type { LateReply } from '../../protocol/types.js'
import type { QueuedReply } from '../../service/service.js'
import { sendJson } from '../body.js'
import { requireAgent } from '../credentials.js'
import { HttpError } from '../errors.js'
import type { Router } from '../router.js'
import { openSse, wantsEventStream } from '../sse.js'
import { type ApiDeps, callerOf } from './deps.js'

/** Long-polls and SSE never hold a reply request longer than this. */
const MAX_REPLY_WAIT_SECONDS = 60

/** Register `GET /v1/agents/:agentId/replies`, its `admit` and its `DELETE`. */
export function addReplyRoutes(router: Router, deps: ApiDeps): void {
  const { service } = deps
  router.add('GET', '/v1/agents/:agentId/replies', async ({ req, res, params, url, caller }) => {
    requireAgent(callerOf(caller), params.agentId ?? '')
    const agentId = params.agentId ?? ''
    if (!CALL_ID_PATTERN.test(agentId)) throw new HttpError('BAD_REQUEST', 'agentId is malformed')
    if (wantsEventStream(req)) return streamReplies(req, res, agentId, deps)
    return pollReplies(req, res, url, agentId, deps)
  })

  router.add('POST', '/v1/agents/:agentId/replies/:callId/admit', async ({ params, res, caller }) => {
    const agentId = params.agentId ?? ''
    requireAgent(callerOf(caller), agentId)
    const callId = params.callId ?? ''
    if (!(await service.admitReply(agentId, callId))) throw noReply(agentId, callId)
    sendJson(res, 200, { admitted: true, callId })
  })

  router.add('DELETE', '/v1/agents/:agentId/replies/:callId', async ({ params, res, caller }) => {
    const agentId = params.agentId ?? ''
    requireAgent(callerOf(caller), agentId)
    const callId = params.callId ?? ''
    if (!(await service.discardReply(agentId, callId))) throw noReply(agentId, callId)
    sendJson(res, 200, { discarded: true, callId })
  })
}

/** Server-Sent Events: the queued replies, then each new one as it comes. */
async function streamReplies(
  req: IncomingMessage,
  res: ServerResponse,
  agentId: string,
  deps: ApiDeps,
): Promise<void> {
  const { service } = deps
  const stream = openSse(req, res, { heartbeatMs: deps.heartbeatMs ?? 15_000 })
  // Subscribe before reading the queue so nothing slips between; `sent` drops the overlap.
  const sent = new Set<string>()
  const send = (reply: LateReply) => {
    if (sent.has(reply.payload.callId)) return
    sent.add(reply.payload.callId)
    stream.send('reply', reply, reply.payload.callId)
  }
  const onReply = (r: QueuedReply) => {
    if (r.agentId === agentId) send(r.reply)
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
}

/** JSON: the queued replies; with `?wait=` and none queued, the first that comes in time. */
async function pollReplies(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  agentId: string,
  deps: ApiDeps,
): Promise<void> {
  const { service } = deps
  const wait = waitOf(url)
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
        if (r.agentId === agentId) done()
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

/** `?wait=`: seconds, capped at {@link MAX_REPLY_WAIT_SECONDS}; 0 when absent. */
function waitOf(url: URL): number {
  const waitText = url.searchParams.get('wait')
  if (waitText === null) return 0
  const wait = Number(waitText)
  if (!Number.isFinite(wait) || wait < 0) {
    throw new HttpError('BAD_REQUEST', 'wait must be a number of seconds (0-60)')
  }
  return Math.min(wait, MAX_REPLY_WAIT_SECONDS)
}

function noReply(agentId: string, callId: string): HttpError {
  return new HttpError('NOT_FOUND', `no queued reply for agent "${agentId}" and call "${callId}"`)
}
