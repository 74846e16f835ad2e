import { z } from 'zod'
import { EXTRA_CHOICES, type ExtraChoice, noDecisionOutput } from '../hooks/claude-code.js'
import { HOOK_CLIENTS, type HookClient, type TimeoutDecision } from '../hooks/dialects.js'
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
  /** The hook timeout when a request names none (ASKBRIDGE_HOOK_TIMEOUT). @default 600000 */
  hookTimeoutMs?: number
  /** What PreToolUse answers when nobody decides in time (ASKBRIDGE_HOOK_TIMEOUT_DECISION). @default 'ask' */
  hookTimeoutDecision?: TimeoutDecision
}

const routeName = z.string().min(1).max(200)

/** `?timeout=600` (seconds, as in Claude Code's hook settings) or `?timeout=10m`. */
function timeoutOf(url: URL, fallback: number): number {
  const text = url.searchParams.get('timeout')
  if (text === null) return fallback
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : parseDuration(text)
  if (ms === undefined || !Number.isSafeInteger(ms) || ms < 1000 || ms > 86_400_000) {
    throw new HttpError(
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
  if (!parsed.success) throw new HttpError('BAD_REQUEST', 'route must be 1-200 characters')
  return parsed.data
}

/** `?client=codex`: the hook's dialect (default Claude Code). */
function clientOf(url: URL): HookClient {
  const text = url.searchParams.get('client')
  if (text === null) return 'claude-code'
  if (!(HOOK_CLIENTS as readonly string[]).includes(text)) {
    throw new HttpError('BAD_REQUEST', `client must be one of ${HOOK_CLIENTS.join(', ')}`)
  }
  return text as HookClient
}

/** `?choices=stop,edit`: reviewer choices beyond approve / reject / always. */
function choicesOf(url: URL): ExtraChoice[] {
  const text = url.searchParams.get('choices')
  if (text === null || text.trim() === '') return []
  const list = text.split(',').map((c) => c.trim())
  const bad = list.find((c) => !(EXTRA_CHOICES as readonly string[]).includes(c))
  if (bad !== undefined) {
    throw new HttpError('BAD_REQUEST', `choices must be among ${EXTRA_CHOICES.join(', ')} (got "${bad}")`)
  }
  return list as ExtraChoice[]
}

/** A hook body askbridge cannot turn into a card: 400 naming what is unsupported. */
function asHttp(error: unknown): unknown {
  return error instanceof HookError ? new HttpError(error.code, error.message, { cause: error }) : error
}

/**
 * `POST /v1/hooks/claude-code` (a Claude Code `http` hook; `askbridge hook` posts here too) and
 * `POST /v1/elicit` (an MCP elicitation answered by people).
 */
export function addHookRoutes(router: Router, deps: HookRouteDeps): void {
  const fallback = deps.hookTimeoutMs ?? 600_000
  const timeoutDecision = deps.hookTimeoutDecision ?? 'ask'

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

  router.add('POST', '/v1/elicit', async ({ req, res, caller }) => {
    const callerDeps = forCaller(caller)
    if (deps.closing()) throw new HttpError('SHUTTING_DOWN', 'the bridge is shutting down; ask again shortly')
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
