import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Caller } from './credentials.js'

/** What a route handler receives. */
export interface RouteContext {
  req: IncomingMessage
  res: ServerResponse
  url: URL
  params: Record<string, string>
  /** Who called the `/v1` API (its bearer token, or loopback without one). */
  caller?: Caller
}

export type RouteHandler = (ctx: RouteContext) => Promise<void> | void

interface Route {
  method: string
  /** The pattern as added (`/v1/questions/:callId`): the route's label in metrics and logs. */
  path: string
  parts: string[]
  handler: RouteHandler
}

/** A tiny method + path table; `:name` segments become params (URI-decoded). */
export class Router {
  private readonly routes: Route[] = []

  add(method: string, path: string, handler: RouteHandler): this {
    this.routes.push({ method, path, parts: path.split('/').filter(Boolean), handler })
    return this
  }

  /**
   * Find the handler for a request. `allowed` lists the methods of a path that exists under
   * another method, so the caller can answer 405 rather than 404.
   */
  match(
    method: string,
    pathname: string,
  ): { handler: RouteHandler; params: Record<string, string> } | { allowed: string[] } {
    const segs = pathname.split('/').filter(Boolean)
    const allowed: string[] = []
    for (const route of this.routes) {
      const params = matchParts(route.parts, segs)
      if (!params) continue
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) {
        return { handler: route.handler, params }
      }
      allowed.push(route.method)
    }
    return { allowed }
  }

  /** The pattern (`/v1/questions/:callId`) of the route a path matches under any method. */
  pattern(pathname: string): string | undefined {
    const segs = pathname.split('/').filter(Boolean)
    return this.routes.find((route) => matchParts(route.parts, segs))?.path
  }
}

function matchParts(parts: string[], segs: string[]): Record<string, string> | undefined {
  if (parts.length !== segs.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as string
    const s = segs[i] as string
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(s)
      } catch {
        return undefined
      }
    } else if (p !== s) return undefined
  }
  return params
}
