/** The server's metrics: requests by route and status, waiting requests, live questions, call events. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from '../../log.js'
import type { UserQuestionService } from '../../service/service.js'
import type { Metrics } from '../metrics.js'

type Counter = ReturnType<Metrics['counter']>

/** The server-wide metrics, registered once; `detach` stops counting the service's events. */
export interface ServerMetrics {
  requests: Counter
  detach(): void
}

/** Register the server's counters and gauges; `waiting` counts the requests held open. */
export function serverMetrics(
  metrics: Metrics,
  service: UserQuestionService,
  waiting: () => number,
): ServerMetrics {
  const requests = metrics.counter(
    'askbridge_http_requests_total',
    'HTTP requests by method, route and status.',
  )
  metrics.gauge(
    'askbridge_http_waiting',
    'HTTP requests held open (blocking asks, long-polls, SSE).',
    waiting,
  )
  metrics.gauge(
    'askbridge_questions_active',
    'Timed questions still answerable (open or continued).',
    // Live calls only, through the state index: the settled history never loads for a scrape.
    async () => (await service.store.listCalls({ states: ['open', 'continued'], timed: true })).length,
  )
  const calls = metrics.counter(
    'askbridge_calls_total',
    'Call lifecycle events: answered, pending, dropped, reply.',
  )
  const onAnswered = () => calls({ event: 'answered' })
  const onPending = () => calls({ event: 'pending' })
  const onDropped = (_c: unknown, code: string) => calls({ event: 'dropped', code })
  const onReply = () => calls({ event: 'reply' })
  service.on('answered', onAnswered)
  service.on('pending', onPending)
  service.on('dropped', onDropped)
  service.on('reply', onReply)
  return {
    requests,
    detach() {
      service.off('answered', onAnswered)
      service.off('pending', onPending)
      service.off('dropped', onDropped)
      service.off('reply', onReply)
    },
  }
}

/**
 * Count and log a request when its response finishes, under `route` (the matched pattern, taken
 * up front: many handlers end the response before their promise settles).
 */
export function observeRequest(
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  requests: Counter,
  log: Logger,
): void {
  const started = process.hrtime.bigint()
  res.on('finish', () => {
    requests({ method: req.method ?? '', route, status: String(res.statusCode) })
    const fields = {
      method: req.method,
      route,
      status: res.statusCode,
      ms: Number((process.hrtime.bigint() - started) / 1_000_000n),
    }
    if (route === '/healthz' || route === '/metrics') log.debug('request', fields)
    else log.info('request', fields)
  })
}
