/** `GET /healthz`: liveness, answered without a token. */
import { sendJson } from '../body.js'
import type { Router } from '../router.js'

/** Register `GET /healthz`: 200 while serving, 503 once shutdown began. */
export function addHealthRoutes(router: Router, closing: () => boolean): void {
  router.add('GET', '/healthz', ({ res }) => sendJson(res, closing() ? 503 : 200, { ok: !closing() }))
}
