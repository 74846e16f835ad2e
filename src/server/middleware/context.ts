/**
 * The request pipeline's vocabulary. http.ts parses a request's path once into a
 * {@link RequestContext}, runs the steps in a fixed order, then routes it. A step answers the
 * request itself ('answered': the pipeline stops), lets it go on ('next'), or refuses it by
 * throwing an HttpError (answered as JSON by refusal.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Caller } from '../credentials.js'
import type { CanonicalPath } from '../path.js'

/** One request as the steps and the router see it. */
export interface RequestContext {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  /** The request URL; its pathname is the canonical one. */
  readonly url: URL
  readonly method: string
  /** The path parsed once: its area picks the guard, its pathname the route. */
  readonly path: CanonicalPath
  /** Who called the `/v1` API: set by the token step, never on inbox requests. */
  caller?: Caller
}

export type StepResult = 'answered' | 'next'

/** One middleware step. */
export type Step = (ctx: RequestContext) => StepResult | Promise<StepResult>
