/** Inbound Teams requests: the SDK's JWT check, the body read and checked as an activity, and invoke answers. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { authorizeJWT } from '@microsoft/agents-hosting'
import type { Logger } from '../../src/adapter-kit.js'
import { readActivity, type TeamsActivity } from './decode.js'
import { noMentions } from './text.js'

export type InvokeBody = { statusCode: number; type: string; value: unknown }

/** Largest activity askbridge reads from Teams. */
const MAX_BODY = 256 * 1024

/** The channel of a conversation id that names a message in it (`19:…@thread.tacv2;messageid=…`). */
export function channelOf(conversationId: string): string {
  return conversationId.split(';')[0] || conversationId
}

/** An invoke response that shows the person a message (and leaves the card as it is). */
export function message(text: string): InvokeBody {
  return { statusCode: 200, type: 'application/vnd.microsoft.activity.message', value: noMentions(text) }
}

export const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))

/**
 * The activity of a verified request, or undefined once the request has been refused (401 for a
 * token that did not verify, 413 too large, 400 not JSON or not an activity).
 */
export async function readVerified(
  req: IncomingMessage,
  res: ServerResponse,
  verify: ReturnType<typeof authorizeJWT>,
  log: Logger,
): Promise<TeamsActivity | undefined> {
  const refused = await authenticate(verify, req)
  if (refused) {
    log.warn('Refused a Teams request: its token did not verify', { reason: refused })
    json(res, 401, {
      error: { name: 'Unauthorized', code: 'UNAUTHORIZED', message: 'The bearer token did not verify.' },
    })
    return undefined
  }
  const raw = await readBody(req, MAX_BODY)
  if (raw === undefined) {
    json(res, 413, {
      error: { name: 'PayloadTooLarge', code: 'PAYLOAD_TOO_LARGE', message: 'The activity is too large.' },
    })
    return undefined
  }
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    json(res, 400, { error: { name: 'BadRequest', code: 'INVALID_JSON', message: 'The body is not JSON.' } })
    return undefined
  }
  const checked = readActivity(value)
  if (!checked.ok) {
    log.warn('Refused a Teams activity', { reason: checked.reason })
    json(res, 400, { error: { name: 'BadRequest', code: 'INVALID_ACTIVITY', message: checked.reason } })
    return undefined
  }
  return checked.activity
}

/** Why the request's token is refused, or undefined when the SDK verified it. */
async function authenticate(
  verify: ReturnType<typeof authorizeJWT>,
  req: IncomingMessage,
): Promise<string | undefined> {
  let status = 200
  let reason: string | undefined
  let passed = false
  const shim = {
    status(code: number) {
      status = code
      return shim
    },
    send(body: unknown) {
      const r = (body as { 'jwt-auth-error'?: unknown } | undefined)?.['jwt-auth-error']
      reason = typeof r === 'string' ? r : 'unauthorized'
      return shim
    },
    setHeader() {
      return shim
    },
    end() {
      return shim
    },
  }
  const request = { method: req.method, headers: req.headers } as unknown as Parameters<typeof verify>[0]
  await verify(request, shim as unknown as Parameters<typeof verify>[1], () => {
    passed = true
  })
  if (passed && status === 200) return undefined
  return reason ?? `HTTP ${status}`
}

async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > max) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}
