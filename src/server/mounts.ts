/** What else answers HTTP on the bridge's port: the web inbox, its sign-in, platform webhooks. */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** Who is signed in to the inbox, as the inbox and its answers see them (signin.ts). */
export interface SignedInUser {
  /** The verified e-mail address (lower case): the person's identity for responders and quorum. */
  email: string
  name: string
  /** The session's CSRF token: every write must send it as `x-csrf-token`. */
  csrf: string
}

/** Something else that answers HTTP on the bridge's port (the web inbox). */
export interface HttpMount {
  /** Resolves true when it answered the request. `context.user`: who is signed in to the inbox. */
  handleHttp(req: IncomingMessage, res: ServerResponse, url: URL, context?: InboxContext): Promise<boolean>
  /** The pattern of its route a path matches (`/inbox/tool/:callId`): the metrics label. */
  routeOf?(pathname: string): string | undefined
}

/** What the server knows about an inbox request. */
export interface InboxContext {
  /** The signed-in person (inbox sign-in through OpenID Connect). */
  user?: SignedInUser
}

/** Inbox sign-in: answers its own routes and refusals (undefined), or names the signed-in person. */
export interface InboxGate {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<SignedInUser | undefined>
  /** Its own routes (`/inbox/login`, …): the metrics label. */
  routeOf?(pathname: string): string | undefined
}

/** A platform webhook on the bridge's port (Slack HTTP mode, Discord interactions). Verified by signature, not by the API token. */
export interface WebhookMount {
  method: 'POST'
  path: string
  handle(req: IncomingMessage, res: ServerResponse): Promise<void> | void
}
