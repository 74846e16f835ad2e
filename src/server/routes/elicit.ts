/** `POST /v1/elicit`: an MCP elicitation (form mode) answered by people. */
import { answerElicitation } from '../../hooks/run.js'
import { elicitRequestSchema } from '../../hooks/schemas.js'
import { parseBody, readJson, sendJson } from '../body.js'
import { agentOf } from '../credentials.js'
import { HttpError } from '../errors.js'
import type { Router } from '../router.js'
import { callerOf } from './deps.js'
import { asHttp } from './hook-params.js'
import { forCaller, type HookRouteDeps } from './hooks.js'

/** Register `POST /v1/elicit`. */
export function addElicitRoutes(router: Router, deps: HookRouteDeps): void {
  router.add('POST', '/v1/elicit', async ({ req, res, caller }) => {
    const callerDeps = forCaller(deps, caller)
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
