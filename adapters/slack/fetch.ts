/**
 * The Web API client's transport: undici's `request` on one keep-alive pool, handed to
 * @slack/web-api's WebClient through its documented `fetch` option (the `FetchFunction` /
 * `FetchResponse` types it exports).
 *
 * Why not the global `fetch`: every card post and card update is one Web API call, and Node's
 * fetch runs each through the WHATWG stream machinery (a request body stream, a response body
 * stream, their promises). Measured with the WebClient posting a card's blocks to a local server,
 * that cost the event loop about twice the CPU per call that `request` does, and on the click path
 * it ran beside every acknowledgement (docs/benchmarks.md, click). The WebClient keeps everything
 * else it does: serializing, retries, rate-limit errors, result checks.
 *
 * Behaviour kept from fetch as the WebClient uses it: redirects are not followed (it asks
 * `redirect: 'error'`; a 3xx comes back as a status and the WebClient refuses it as it refuses any
 * non-200), the abort signal ends the request, and the response body is read whole. A body that is
 * not a string (a multipart file upload, which askbridge never makes) goes to the global fetch.
 * Idle pooled sockets do not keep the process alive (undici unrefs them).
 */

import type { webApi } from '@slack/bolt'
import { Agent, type Dispatcher, request } from 'undici'

type RawHeaders = Record<string, string | string[] | undefined>
type FetchResponse = Awaited<ReturnType<webApi.FetchFunction>>

/** A whole, already-read response in the shape the WebClient reads. */
class ReadResponse implements FetchResponse {
  readonly ok: boolean
  readonly statusText = ''
  readonly headers: FetchResponse['headers']

  constructor(
    readonly url: string,
    readonly status: number,
    raw: RawHeaders,
    private readonly body: Buffer,
  ) {
    this.ok = status >= 200 && status < 300
    const value = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v)
    this.headers = {
      get: (name: string) => value(raw[name.toLowerCase()]) ?? null,
      *entries() {
        for (const [k, v] of Object.entries(raw)) {
          const joined = value(v)
          if (joined !== undefined) yield [k, joined] as [string, string]
        }
      },
    }
  }

  async text(): Promise<string> {
    return this.body.toString('utf8')
  }

  async json(): Promise<unknown> {
    return JSON.parse(this.body.toString('utf8'))
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return new Uint8Array(this.body).buffer
  }
}

/** A `fetch` for the WebClient over one keep-alive pool of its own. */
export function slackFetch(): webApi.FetchFunction {
  const pool = new Agent({ keepAliveTimeout: 30_000 })
  return async (url, init = {}) => {
    if (init.body !== undefined && typeof init.body !== 'string') {
      // Node's Response has Headers.entries(); TypeScript's DOM types leave it out.
      return (await globalThis.fetch(url, init)) as unknown as FetchResponse
    }
    const href = String(url)
    const res = await request(href, {
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      ...(init.headers ? { headers: init.headers } : {}),
      ...(init.body !== undefined ? { body: init.body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
      dispatcher: pool,
    })
    const body = Buffer.from(await res.body.arrayBuffer())
    return new ReadResponse(href, res.statusCode, res.headers, body)
  }
}
