/**
 * The HTTP transport for interactions (`POST /discord/interactions`): read the raw body, verify the
 * Ed25519 signature, parse. Responses for failures are written here; success is left to the caller.
 */
import type { KeyObject } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { APIInteraction } from 'discord.js'
import {
  errorResponse,
  HttpError,
  type Logger,
  readFailure,
  readRaw,
  silentLogger,
} from '../../src/adapter-kit.js'
import { readInteraction } from './decode.js'
import { type ReplayGuard, verifyDiscordSignature } from './verify.js'

function fail(res: ServerResponse, status: number, message: string): undefined {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message }))
  return undefined
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * The verified payload, or undefined after answering 405 / 413 / 401 / 400. A bad or missing
 * signature, a stale timestamp and a replayed request all get 401.
 */
export async function readInteractionRequest(
  req: IncomingMessage,
  res: ServerResponse,
  key: KeyObject,
  guard: ReplayGuard,
  log: Logger = silentLogger,
): Promise<APIInteraction | undefined> {
  if (req.method !== 'POST') return fail(res, 405, 'method not allowed')
  let body: Buffer
  try {
    body = await readRaw(req)
  } catch (error) {
    const failure = readFailure(error)
    return fail(res, errorResponse(failure).status, failure.message)
  }
  const signature = header(req, 'x-signature-ed25519')
  const timestamp = header(req, 'x-signature-timestamp')
  if (!signature || !timestamp || !verifyDiscordSignature(key, signature, timestamp, body))
    return fail(res, 401, 'invalid request signature')
  if (!(await guard.admitShared(signature, timestamp))) return fail(res, 401, 'stale or replayed request')
  let value: unknown
  try {
    value = JSON.parse(body.toString('utf8'))
  } catch {
    return refuse(res, log, 'BAD_JSON', 'invalid JSON')
  }
  const checked = readInteraction(value)
  if (!checked.ok) return refuse(res, log, 'BAD_INTERACTION', checked.reason)
  return checked.payload
}

/** A verified request we cannot use: a coded 400, and a log line saying why. */
function refuse(res: ServerResponse, log: Logger, code: string, message: string): undefined {
  log.warn(`Refused a signed Discord interaction (${code}): ${message}`)
  const { status, body } = errorResponse(new HttpError(code, message))
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ message, code, ...body }))
  return undefined
}
