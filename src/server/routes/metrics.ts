/** `GET /metrics`: the Prometheus text of every counter and gauge. */
import type { Metrics } from '../metrics.js'
import type { Router } from '../router.js'

/** Register `GET /metrics`. */
export function addMetricsRoutes(router: Router, metrics: Metrics): void {
  router.add('GET', '/metrics', async ({ res }) => {
    const text = await metrics.render()
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text)
  })
}
