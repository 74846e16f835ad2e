/**
 * Transports: how Slack's interactivity payloads reach the Bolt app.
 *
 * - Socket Mode (an app-level token): Bolt's own SocketModeReceiver; no public URL needed.
 * - HTTP (a signing secret): {@link SlackHttpReceiver}, a Bolt receiver the askbridge server mounts
 *   at `POST /slack/events` on its own port. It verifies the signature itself (401 on failure) and
 *   answers Slack as soon as a listener acks, or when processing ends (a payload no listener took).
 *
 * When to acknowledge is decided once, by the listeners (inbound.ts, ACK_DEADLINE_MS), for both
 * transports; a transport only delivers the acknowledgement.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  App,
  type Logger,
  LogLevel,
  type Receiver,
  type ReceiverEvent,
  SocketModeReceiver,
  type webApi,
} from '@slack/bolt'
import type { Logger as AskbridgeLogger } from '../../src/adapter-kit.js'
import { errorResponse, HttpError, readFailure, readRaw } from '../../src/adapter-kit.js'
import { readSlackPayload } from './decode.js'
import { verifySlackSignature } from './verify.js'

export interface SlackHttpReceiverOptions {
  signingSecret: string
  logger: Logger
  /** Clock for the five-minute replay window (tests). @default Date.now */
  now?: () => number
}

/** A Bolt receiver for HTTP interactivity whose HTTP server belongs to someone else. */
export class SlackHttpReceiver implements Receiver {
  #app: App | undefined
  readonly #options: SlackHttpReceiverOptions

  constructor(options: SlackHttpReceiverOptions) {
    this.#options = options
  }

  init(app: App): void {
    this.#app = app
  }

  /** The owner's server listens; nothing to start. */
  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  /** Handle `POST /slack/events`: verify, parse, dispatch, ack. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { logger } = this.#options
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end()
      return
    }
    let raw: Buffer
    try {
      raw = await readRaw(req)
    } catch (error) {
      res.writeHead(errorResponse(readFailure(error)).status).end()
      return
    }
    const check = verifySlackSignature(
      this.#options.signingSecret,
      {
        timestamp: header(req, 'x-slack-request-timestamp'),
        signature: header(req, 'x-slack-signature'),
        body: raw,
      },
      (this.#options.now ?? Date.now)(),
    )
    if (!check.ok) {
      logger.warn(`Refused a Slack request: ${check.reason}`)
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid signature')
      return
    }
    let body: Record<string, unknown>
    try {
      body = parseBody(raw, header(req, 'content-type') ?? '')
    } catch (error) {
      return refuse(res, logger, 'BAD_BODY', `unreadable body: ${(error as Error).message}`)
    }
    const checked = readSlackPayload(body)
    if (!checked.ok) return refuse(res, logger, 'BAD_PAYLOAD', checked.reason)
    if (body.type === 'url_verification' && typeof body.challenge === 'string') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ challenge: body.challenge }))
      return
    }
    if (body.ssl_check !== undefined) {
      res.writeHead(200).end()
      return
    }
    const app = this.#app
    if (!app) {
      res.writeHead(503).end()
      return
    }

    let acked = false
    const ack = async (response?: unknown) => {
      if (acked) return
      acked = true
      if (response === undefined || response === '') {
        res.writeHead(200).end()
      } else if (typeof response === 'string') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(response)
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response))
      }
    }
    const retryNum = Number(header(req, 'x-slack-retry-num'))
    const retryReason = header(req, 'x-slack-retry-reason')
    const event: ReceiverEvent = {
      body,
      ack,
      ...(Number.isInteger(retryNum) && retryNum > 0 ? { retryNum } : {}),
      ...(retryReason ? { retryReason } : {}),
    }
    try {
      await app.processEvent(event)
    } catch (error) {
      logger.error('Slack event processing failed', error)
    } finally {
      await ack()
    }
  }
}

/** A signed request we cannot use: a coded 400, and a log line saying why. */
function refuse(res: ServerResponse, logger: Logger, code: string, message: string): void {
  logger.warn(`Refused a signed Slack request (${code}): ${message}`)
  const { status, body } = errorResponse(new HttpError(code, message))
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Interactivity arrives form-encoded with one `payload` field of JSON; events arrive as JSON. */
export function parseBody(raw: Buffer, contentType: string): Record<string, unknown> {
  const text = raw.toString('utf8')
  const params = contentType.startsWith('application/json') ? undefined : new URLSearchParams(text)
  const json = params === undefined ? text : params.get('payload')
  if (params !== undefined && json === null) return Object.fromEntries(params)
  const value: unknown = JSON.parse(json as string)
  // `payload=null`, a JSON array or a bare number: signed, but nothing Slack sends.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('the payload is not a JSON object')
  }
  return value as Record<string, unknown>
}

export interface BoltAppOptions {
  botToken: string
  /** Socket Mode when set. */
  appToken?: string
  /** HTTP mode when set (and no app token). */
  signingSecret?: string
  /** Web API base, e.g. `http://127.0.0.1:PORT/api/`. */
  apiUrl?: string
  logger: Logger
  clientOptions?: webApi.WebClientOptions
  /** Socket Mode: reconnect when the server sends no ping for this long. @default 30000 */
  serverPingTimeoutMs?: number
  /** Socket Mode: pong deadline, and the base delay before a reconnect. @default 5000 */
  clientPingTimeoutMs?: number
  now?: () => number
}

/** Build the Bolt app for the configured transport. */
export function createBoltApp(options: BoltAppOptions): { app: App; http?: SlackHttpReceiver } {
  const clientOptions: webApi.WebClientOptions = {
    ...options.clientOptions,
    ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
  }
  if (options.appToken) {
    const receiver = new SocketModeReceiver({
      appToken: options.appToken,
      logger: options.logger,
      installerOptions: { clientOptions },
      ...(options.serverPingTimeoutMs ? { serverPingTimeout: options.serverPingTimeoutMs } : {}),
      ...(options.clientPingTimeoutMs ? { clientPingTimeout: options.clientPingTimeoutMs } : {}),
    })
    const app = new App({
      token: options.botToken,
      receiver,
      socketMode: true,
      logger: options.logger,
      clientOptions,
      deferInitialization: true,
      convoStore: false, // Bolt's conversation-state middleware: askbridge keeps no conversation state
    })
    return { app }
  }
  if (!options.signingSecret) {
    throw new Error('Slack needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP interactivity)')
  }
  const http = new SlackHttpReceiver({
    signingSecret: options.signingSecret,
    logger: options.logger,
    ...(options.now ? { now: options.now } : {}),
  })
  const app = new App({
    token: options.botToken,
    receiver: http,
    logger: options.logger,
    clientOptions,
    deferInitialization: true,
    convoStore: false,
  })
  return { app, http }
}

/**
 * Bolt's logger interface over askbridge's structured logger. Bolt's debug chatter is dropped;
 * its info and above go through with the `slack` source, errors as fields.
 */
export function boltLogger(log: AskbridgeLogger, level: LogLevel = LogLevel.INFO): Logger {
  let current = level
  const order = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR]
  const on = (l: LogLevel) => order.indexOf(l) >= order.indexOf(current)
  const write = (l: 'debug' | 'info' | 'warn' | 'error', msg: unknown[]) => {
    if (!on(l as LogLevel)) return
    const errors = msg.filter((m) => m instanceof Error)
    const text = msg
      .filter((m) => !(m instanceof Error))
      .map((m) => (typeof m === 'string' ? m : JSON.stringify(m)))
      .join(' ')
    log[l](text || (errors[0] as Error | undefined)?.message || 'slack', {
      source: 'slack',
      ...(errors.length > 0 ? { error: errors[0] } : {}),
    })
  }
  return {
    debug: (...msg: unknown[]) => write('debug', msg),
    info: (...msg: unknown[]) => write('info', msg),
    warn: (...msg: unknown[]) => write('warn', msg),
    error: (...msg: unknown[]) => write('error', msg),
    setLevel: (l: LogLevel) => {
      current = l
    },
    getLevel: () => current,
    setName: () => {},
  }
}
