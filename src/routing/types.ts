import type { Destination, EscalationTier, Mention, Responders } from '../card/types.js'
import type { AnswererRequest } from '../protocol/types.js'
import type { NoticeEvent } from './routes-schema.js'

/** What routing decided for one request. */
export interface RoutePlan {
  /** The route's name; `default` for the env defaults. */
  name: string
  destinations: Destination[]
  responders?: Responders
  /** Distinct approvers needed for an approval. @default 1 */
  quorum: number
  excludeRequester: boolean
  escalation: EscalationTier[]
  /** Mention and allow whoever is on call now (looked up at ask time). */
  oncall?: OnCallRule
  /** Claude Code hook events posted to the destinations as notices without buttons. */
  notices?: NoticeEvent[]
}

/** A route's on-call rule. */
export interface OnCallRule {
  pagerduty: { schedule?: string | undefined; escalationPolicy?: string | undefined }
  /** Mentions used when PagerDuty is unreachable and nobody is known yet. */
  fallback: Mention[]
}

export interface Router {
  resolve(request: AnswererRequest): RoutePlan
}

/** The router used without a routes file: every request to the default destinations. */
export function defaultRouter(destinations: Destination[]): Router {
  return {
    resolve: () => ({ name: 'default', destinations, quorum: 1, excludeRequester: false, escalation: [] }),
  }
}
