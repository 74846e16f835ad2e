import { z } from 'zod'
import { HookError } from '../hooks/errors.js'
import { answerClaudeCodeHook, answerElicitation, type HookDeps } from '../hooks/run.js'
import { elicitRequestSchema } from '../hooks/schemas.js'
import { parseDuration } from '../routing/duration.js'
import { type ApiDeps, callerOf } from './api.js'
import { parseBody, readJson, sendJson } from './body.js'
import { agentOf, requireAgent, requireScope } from './credentials.js'
import { HttpError } from './errors.js'
import type { RouteContext, Router } from './router.js'

/** What the hook routes need beyond the API's own dependencies. */
export interface HookRouteDeps extends ApiDeps, Pick<HookDeps, 'notices' | 'publicUrl' | 'agentFor'> {
  /** The hook timeout when a request names none (ASKBRIDGE_HOOK_TIMEOUT). @default 55000 */
  hookTimeoutMs?: number
}

const routeName = z.string().min(1).max(200)

/** `?timeout=600` (seconds, as in Claude Code's hook settings) or `?timeout=10m`. */
function timeoutOf(url: URL, fallback: number): number {
  const text = url.searchParams.get('timeout')
  if (text === null) return fallback
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : parseDuration(text)
  if (ms === undefined || !Number.isSafeInteger(ms) || ms < 1000 || ms > 86_400_000) {
    throw new HttpError(
      400,
      'BAD_REQUEST',
      'timeout must be seconds (1 to 86400), or a duration such as 90s or 10m',
    )
  }
  return ms
}

function routeOf(url: URL): string | undefined {
  const text = url.searchParams.get('route')
  if (text === null) return undefined
  const parsed = routeName.safeParse(text)
  if (!parsed.success) throw new HttpError(400, 'BAD_REQUEST', 'route must be 1-200 characters')
  return parsed.data
}

/** A hook body askbridge cannot turn into a card: 400 naming what is unsupported. */
function asHttp(error: unknown): unknown {
  return error instanceof HookError ? new HttpError(400, error.code, error.message) : error
}

/**
 * `POST /v1/hooks/claude-code` (a Claude Code `http` hook; `askbridge hook` posts here too) and
 * `POST /v1/elicit` (an MCP elicitation answered by people).
 */
export function addHookRoutes(router: Router, deps: HookRouteDeps): void {
  const fallback = deps.hookTimeoutMs ?? 55_000

  /** The hook deps for one caller: asks run as an agent its token may act for. */
  const forCaller = (who: RouteContext['caller']): HookRouteDeps => {
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

  router.add('POST', '/v1/hooks/claude-code', async ({ req, res, url, caller }) => {
    const callerDeps = forCaller(caller)
    if (deps.closing()) return sendJson(res, 200, {}) // no decision: Claude Code asks in its prompt
    const timeoutMs = timeoutOf(url, fallback)
    const route = routeOf(url)
    const body = await readJson(req)
    const gone = new AbortController()
    // Claude Code closed the request (its own timeout, or it was answered there): stop waiting.
    res.on('close', () => gone.abort())
    // Shutting down decides nothing either: answer "no decision" at once.
    const untrack = deps.track(res, () => {
      gone.abort()
      sendJson(res, 200, {})
    })
    try {
      const output = await answerClaudeCodeHook(callerDeps, body, {
        timeoutMs,
        signal: gone.signal,
        ...(route === undefined ? {} : { route }),
      })
      sendJson(res, 200, output)
    } catch (error) {
      throw asHttp(error)
    } finally {
      untrack()
    }
  })

  router.add('POST', '/v1/elicit', async ({ req, res, caller }) => {
    const callerDeps = forCaller(caller)
    if (deps.closing())
      throw new HttpError(503, 'SHUTTING_DOWN', 'the bridge is shutting down; ask again shortly')
    const parsed = parseBody(elicitRequestSchema, await readJson(req))
    // The agent is the token's when the request names none (403 when it names another).
    const request = { ...parsed, agentId: agentOf(callerOf(caller), parsed.agentId, 'mcp') }
    const gone = new AbortController()
    res.on('close', () => gone.abort())
    const untrack = deps.track(res, () => {
      gone.abort()
      sendJson(res, 200, { action: 'cancel' })
    })
    try {
      sendJson(res, 200, await answerElicitation(callerDeps, request, { signal: gone.signal }))
    } catch (error) {
      throw asHttp(error)
    } finally {
      untrack()
    }
  })
}
