/**
 * Notices without buttons (Claude Code's `Notification` and `Stop` hooks): routed like a question
 * from the same session, posted only where the route opts in (`notices` in the routes file), and
 * recorded in the audit log. A notice is an FYI: a failure is logged and recorded, never thrown.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../log.js'
import type { NoticeEvent } from '../routing/routes-schema.js'
import type { Router } from '../routing/types.js'
import type { Store } from '../store/types.js'
import { type ChatAdapter, destinationKey, NOTICE_TEXT_CHARS, type Notice } from './adapter.js'

/** What to post: the hook event, who raised it, and what it says. */
export interface NoticeRequest {
  event: NoticeEvent
  agentId: string
  /** An explicit route (`?route=` / `askbridge hook --route`). */
  route?: string
  title: string
  text: string
}

export interface NoticeDeps {
  adapters: ReadonlyMap<string, ChatAdapter>
  router: Router
  store: Pick<Store, 'audit'>
  log: Logger
  now: () => number
}

/** What became of a notice: the route that decided, and where it went. */
export interface NoticeOutcome {
  route: string
  /** Destination keys (`slack:C…:`) the notice was posted to. */
  posted: string[]
  /** Destination keys whose post failed. */
  failed: string[]
}

/** Cut agent text to the notice limit with a visible "…", never inside a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text
  let at = max - 1
  const code = text.charCodeAt(at - 1)
  if (code >= 0xd800 && code <= 0xdbff) at--
  return `${text.slice(0, at)}…`
}

/**
 * Route a notice as a question from the same agent would be routed (first matching route; a
 * route matching a tool or a question's intent or header never matches a notice) and post it
 * to that route's destinations when the route lists the event in `notices`.
 */
export async function postNotice(deps: NoticeDeps, request: NoticeRequest): Promise<NoticeOutcome> {
  const id = `notice-${randomUUID()}`
  const plan = deps.router.resolve({
    questions: [],
    agent: { id: request.agentId },
    signal: new AbortController().signal,
    callId: id,
    ...(request.route === undefined ? {} : { route: request.route }),
  })
  const outcome: NoticeOutcome = { route: plan.name, posted: [], failed: [] }
  if (!plan.notices?.includes(request.event)) return outcome
  const notice: Notice = {
    id,
    agentId: request.agentId,
    title: cut(request.title.trim() || request.event, 200),
    text: cut(request.text, NOTICE_TEXT_CHARS),
    at: deps.now(),
  }
  for (const destination of plan.destinations) {
    const adapter = deps.adapters.get(destination.platform)
    if (!adapter?.postNotice) continue
    const key = destinationKey(destination)
    try {
      // Never a mention: a notice has nothing to answer, so it pings nobody.
      const { mention: _none, ...quiet } = destination
      await adapter.postNotice(notice, quiet)
      outcome.posted.push(key)
    } catch (error) {
      deps.log.warn('a notice could not be posted', { destination: key, event: request.event, error })
      outcome.failed.push(key)
    }
  }
  await deps.store.audit({
    callId: id,
    agentId: request.agentId,
    kind: 'notice',
    detail: {
      event: request.event,
      route: plan.name,
      title: notice.title,
      text: notice.text,
      posted: outcome.posted,
      ...(outcome.failed.length ? { failed: outcome.failed } : {}),
    },
  })
  return outcome
}
