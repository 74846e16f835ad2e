/** How Slack says no: the error string of a platform error, and start-up failures worded for people. */

/** The `error` string of a Slack platform error (`{ok:false, error}`), if that is what this is. */
export function slackError(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const data = (error as { data?: { error?: unknown } }).data
  return typeof data?.error === 'string' ? data.error : undefined
}

/** Errors by which Slack refuses a token (as opposed to a network failure or an outage). */
const TOKEN_ERRORS = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
  'missing_scope',
])

/** A start failure that says which token Slack refused, so the fix is obvious; never the token itself. */
export function tokenError(error: unknown, which: string, hint: string): Error {
  const code = slackError(error)
  if (code && TOKEN_ERRORS.has(code)) {
    return new Error(`Slack refused the ${which}: ${code}; ${hint}`, { cause: error })
  }
  return error instanceof Error ? error : new Error(String(error))
}
