/** The network edge's steps: platform webhooks and health before any guard, then loopback-only. */
import type { Credentials } from '../credentials.js'
import type { Edge } from '../edge.js'
import type { WebhookMount } from '../mounts.js'
import type { Router } from '../router.js'
import type { Step } from './context.js'

/** A platform webhook answers its own path (verified by its signature, not by a token). */
export function webhookStep(webhooks: readonly WebhookMount[]): Step {
  const byRoute = new Map(webhooks.map((w) => [`${w.method} ${w.path}`, w]))
  return async ({ req, res, method, path }) => {
    const webhook = byRoute.get(`${method} ${path.pathname}`)
    if (!webhook) return 'next'
    await webhook.handle(req, res)
    return 'answered'
  }
}

/** `/healthz` needs no credential and passes no guard. */
export function healthStep(router: Router): Step {
  return async ({ req, res, url, method, path }) => {
    if (path.area !== 'health') return 'next'
    const m = router.match(method, path.pathname)
    if ('handler' in m) await m.handler({ req, res, url, params: m.params })
    return 'answered'
  }
}

/**
 * Without a token only this machine is served: a loopback peer naming a loopback host (which
 * defeats DNS rebinding), no proxy in between. The inbox and sign-in included (edge.ts).
 */
export function loopbackStep(edge: Edge, credentials: Credentials): Step {
  return ({ req }) => {
    if (!credentials.required) edge.loopbackOnly(req)
    return 'next'
  }
}
