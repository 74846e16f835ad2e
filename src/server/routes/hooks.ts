/** `POST /v1/hooks/claude-code`: a Claude Code `http` hook (`askbridge hook` posts here too). */

import type { TimeoutDecision } from '../../hooks/dialects.js'
import { noDecisionOutput } from '../../hooks/output.js'
import { answerClaudeCodeHook, type HookDeps } from '../../hooks/run.js'
import { readJson, sendJson } from '../body.js'
import { requireAgent, requireScope } from '../credentials.js'
import type { RouteContext, Router } from '../router.js'
import { type ApiDeps, callerOf } from './deps.js'
import { asHttp, choicesOf, clientOf, routeOf, timeoutOf } from './hook-params.js'

/** What the hook routes need beyond the API's own dependencies. */
export interface HookRouteDeps extends ApiDeps, Pick<HookDeps, 'notices' | 'publicUrl' | 'agentFor'> {
  /** The hook timeout when a request names none (ASKBRIDGE_HOOK_TIMEOUT). @default 600000 */
  hookTimeoutMs?: number
  /** What PreToolUse answers when nobody decides in time (ASKBRIDGE_HOOK_TIMEOUT_DECISION). @default 'ask' */
  hookTimeoutDecision?: TimeoutDecision
}

/** The hook deps for one caller: asks run as an agent its token may act for. */
export function forCaller(deps: HookRouteDeps, who: RouteContext['caller']): HookRouteDeps {
  const caller = callerOf(who)
  requireScope(caller, 'ask')
  const notices = deps.notices
  return {
    ...deps,
    agentFor: (agentId) => {
      requireAgent(caller, agentId)
      return deps.service.agents.ensure(agentId, caller.requester)
    },
    // A notice names its session's agent too: only one the token may act for.
    ...(notices
      ? {
          notices: (request) => {
            requireAgent(caller, request.agentId)
            return notices(request)
          },
        }
      : {}),
  }
}

/** Register `POST /v1/hooks/claude-code`. */
export function addHookRoutes(router: Router, deps: HookRouteDeps): void {
  const fallback = deps.hookTimeoutMs ?? 600_000
  const timeoutDecision = deps.hookTimeoutDecision ?? 'ask'

  router.add('POST', '/v1/hooks/claude-code', async ({ req, res, url, caller }) => {
    const callerDeps = forCaller(deps, caller)
    const timeoutMs = timeoutOf(url, fallback)
    const route = routeOf(url)
    const client = clientOf(url)
    const choices = choicesOf(url)
    const body = await readJson(req)
    // Nobody decides: PreToolUse fails closed (ask or deny), the other events answer {}.
    const nobody = () =>
      noDecisionOutput(
        (body as { hook_event_name?: unknown } | null)?.hook_event_name,
        client,
        { timeoutDecision },
        'askbridge is shutting down',
      )
    if (deps.closing()) return sendJson(res, 200, nobody())
    const gone = new AbortController()
    // Claude Code closed the request (its own timeout, or it was answered there): stop waiting.
    res.on('close', () => gone.abort())
    // Shutting down decides nothing either: answer at once.
    const untrack = deps.track(res, () => {
      gone.abort()
      sendJson(res, 200, nobody())
    })
    try {
      const output = await answerClaudeCodeHook(callerDeps, body, {
        timeoutMs,
        signal: gone.signal,
        client,
        timeoutDecision,
        ...(choices.length > 0 ? { choices } : {}),
        ...(route === undefined ? {} : { route }),
      })
      sendJson(res, 200, output)
    } catch (error) {
      throw asHttp(error)
    } finally {
      untrack()
    }
  })
}
