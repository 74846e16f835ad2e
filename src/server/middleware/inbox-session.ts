/** The inbox's own credential: a sign-in session, or without sign-in a one-time link's cookie. */
import type { InboxLinks } from '../inbox-link.js'
import type { HttpMount, InboxGate, SignedInUser } from '../mounts.js'
import type { Step } from './context.js'
import { checkOrigin } from './origin.js'

/** What the inbox step needs. */
export interface InboxSessionOptions {
  signIn?: InboxGate
  links: InboxLinks
  mounts: readonly HttpMount[]
}

/**
 * Inbox requests (`/`, `/inbox/…`): the inbox never takes the API token or an agent token, people
 * hold their own credential. Then the mounts (the web inbox) answer; what none answers goes on to
 * the router without a caller (so never reaches a `/v1` route).
 */
export function inboxSessionStep({ signIn, links, mounts }: InboxSessionOptions): Step {
  return async ({ req, res, url, method, path }) => {
    if (path.area !== 'inbox') return 'next'
    let user: SignedInUser | undefined
    if (signIn) {
      // Signed in: the session (and its CSRF token on writes) is the inbox's authentication.
      user = await signIn.handle(req, res, url)
      if (!user) return 'answered'
    } else {
      // The cookie is SameSite=Strict, but another port of this host is the same site: writes
      // must come from this very origin (and be JSON, which no other origin may send unasked).
      checkOrigin(req, method)
      if (!links.handle(req, res, url, method)) return 'answered'
    }
    for (const mount of mounts) {
      if (await mount.handleHttp(req, res, url, user ? { user } : {})) return 'answered'
    }
    return 'next'
  }
}
