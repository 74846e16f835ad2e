/** Every route of the bridge's own HTTP API, one file per resource, registered in one order. */
import type { Router } from '../router.js'
import { addAnswerRoutes } from './answer.js'
import { addAskRoutes } from './ask.js'
import { addAuditRoutes } from './audit.js'
import { addElicitRoutes } from './elicit.js'
import { addHealthRoutes } from './health.js'
import { addHookRoutes, type HookRouteDeps } from './hooks.js'
import { addMetricsRoutes } from './metrics.js'
import { addOpenApiRoutes } from './openapi.js'
import { addQuestionRoutes } from './questions.js'
import { addReplyRoutes } from './replies.js'

/** Register `/healthz`, `/metrics` and the `/v1` API (see docs/http-api.md) on a router. */
export function addRoutes(router: Router, deps: HookRouteDeps): void {
  addHealthRoutes(router, deps.closing)
  addMetricsRoutes(router, deps.metrics)
  addAskRoutes(router, deps)
  addQuestionRoutes(router, deps)
  addAnswerRoutes(router, deps)
  addReplyRoutes(router, deps)
  addOpenApiRoutes(router)
  addAuditRoutes(router, deps)
  addHookRoutes(router, deps)
  addElicitRoutes(router, deps)
}
