/** The `/v1` API's credential: a bearer token (admin or agent), or loopback without one; rate limits. */
import type { Logger } from '../../log.js'
import { Credentials } from '../credentials.js'
import { HttpError } from '../errors.js'
import type { RateLimiter } from '../rate-limit.js'
import type { Step } from './context.js'
import { checkOrigin } from './origin.js'

/** Names the caller of an API request (`ctx.caller`), or refuses it (401, 403, 429). */
export function tokenStep(credentials: Credentials, limiter: RateLimiter, log: Logger): Step {
  return (ctx) => {
    if (ctx.path.area !== 'api') return 'next'
    const { req, method } = ctx
    let caller = credentials.fromRequest(req)
    if (!caller) {
      if (credentials.required) throw unauthorized()
      checkOrigin(req, method)
      caller = Credentials.loopback()
    }
    if (caller.key && caller.ratePerMinute) {
      const wait = limiter.take(caller.key, caller.ratePerMinute)
      if (wait > 0) {
        log.info('rate limited', { caller: caller.label })
        throw new HttpError(
          'RATE_LIMITED',
          `this token made more than ${caller.ratePerMinute} requests a minute; try again in ${wait} s`,
          { retryAfter: wait },
        )
      }
    }
    ctx.caller = caller
    return 'next'
  }
}

function unauthorized(): HttpError {
  return new HttpError(
    'UNAUTHORIZED',
    'missing or wrong bearer token (ASKBRIDGE_API_TOKEN or a token of ASKBRIDGE_AGENT_TOKENS)',
  )
}
