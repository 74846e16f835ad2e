/** What else answers HTTP on the bridge's port: the web inbox, its sign-in, platform webhooks. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { SignedInUser } from './signin.js'

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
