/** `GET /v1/audit`: who did what to which call. */
import { sendJson } from '../body.js'
import { listedAgent } from '../credentials.js'
import { HttpError } from '../errors.js'
import { agentParam } from '../query.js'
import type { Router } from '../router.js'
import { type ApiDeps, callerOf } from './deps.js'

/** Register `GET /v1/audit`. */
export function addAuditRoutes(router: Router, deps: ApiDeps): void {
  router.add('GET', '/v1/audit', async ({ url, res, caller: who }) => {
    const caller = callerOf(who)
    const callId = url.searchParams.get('callId') ?? undefined
    const named = agentParam(url)
    // The whole audit is the admin's; an agent's token reads its own calls' entries.
    const agentId = listedAgent(caller, named)
    const since = sinceOf(url)
    const events = await deps.store.listAudit({
      ...(callId === undefined ? {} : { callId }),
      ...(agentId === undefined ? {} : { agentId }),
      ...(since === undefined ? {} : { since }),
    })
    sendJson(res, 200, { events })
  })
}

/** `?since=`: epoch milliseconds or an ISO date. */
function sinceOf(url: URL): number | undefined {
  const sinceText = url.searchParams.get('since')
  if (sinceText === null) return undefined
  const since = /^\d+$/.test(sinceText) ? Number(sinceText) : Date.parse(sinceText)
  if (!Number.isFinite(since)) {
    throw new HttpError('BAD_REQUEST', 'since must be epoch milliseconds or an ISO date')
  }
  return since
}
