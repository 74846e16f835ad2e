/**
 * The network edge of the HTTP server: who may talk to a bridge that has no API token (a
 * loopback peer, naming a loopback host, not through a proxy unless it is trusted), how long a
 * request may take to arrive, and how many connections and event streams one client and all
 * clients may hold. The rest of the server sees only requests that got past it.
 */
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { DEFAULT_EDGE_LIMITS, type EdgeLimits } from '../config/edge-limits.js'
import { type Logger, silentLogger } from '../log.js'
import { errorResponse, HttpError } from './errors.js'
import { wantsEventStream } from './sse.js'

export interface EdgeOptions {
  /** ASKBRIDGE_TRUSTED_PROXIES: peers whose `Forwarded` / `X-Forwarded-*` headers are accepted. */
  trustedProxies?: readonly string[]
  limits?: Partial<EdgeLimits>
  logger?: Logger
}

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d+)?$/i
/** A refused connection that sends no request is closed after this. */
const REFUSED_IDLE_MS = 5_000
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto']

/** 127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

/** An IPv4 address and its IPv6-mapped form are the same client. */
function canonical(address: string | undefined): string {
  const a = (address ?? 'unknown').toLowerCase()
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a
}

/** A raw response for a refusal node reports outside any request (one that did not arrive in time). */
function rawRefusal(refusal: HttpError): string {
  const { status, body: error } = errorResponse(refusal)
  const body = JSON.stringify(error)
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    '',
    body,
  ].join('\r\n')
}

/** Counts per key, with a total. */
class Counts {
  private readonly byKey = new Map<string, number>()
  total = 0

  of(key: string): number {
    return this.byKey.get(key) ?? 0
  }

  add(key: string): void {
    this.byKey.set(key, this.of(key) + 1)
    this.total++
  }

  remove(key: string): void {
    const n = this.of(key) - 1
    if (n > 0) this.byKey.set(key, n)
    else this.byKey.delete(key)
    this.total--
  }
}

export class Edge {
  private readonly proxies: Set<string>
  readonly limits: EdgeLimits
  private readonly log: Logger
  private readonly connections = new Counts()
  private readonly streams = new Counts()
  /** Connections over a cap, with the refusal their first request gets. */
  private readonly refused = new WeakMap<object, HttpError>()

  constructor(options: EdgeOptions = {}) {
    this.proxies = new Set((options.trustedProxies ?? []).map(canonical))
    this.limits = { ...DEFAULT_EDGE_LIMITS, ...options.limits }
    this.log = options.logger ?? silentLogger
  }

  /**
   * Set the server's timeouts and count its connections. A request must arrive (headers and
   * body) within the body timeout; a long wait after it (a blocking ask, SSE) is not limited.
   */
  attach(server: Server): void {
    const ms = this.limits.bodyTimeoutMs
    server.requestTimeout = ms
    server.headersTimeout = Math.min(30_000, ms)
    // How often node checks those timeouts (a createServer option, read when it starts listening).
    Object.assign(server, { connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(ms / 4))) })
    server.on('connection', (socket: Socket) => this.connection(socket))
  }

  /**
   * Count a connection, or mark it refused: over a cap, its first request is answered with the
   * coded refusal and the connection closes (answered, never left hanging; nothing it asks for is
   * done). One that sends nothing is closed soon.
   */
  private connection(socket: Socket): void {
    const client = canonical(socket.remoteAddress)
    const over =
      this.connections.of(client) >= this.limits.connectionsPerClient
        ? new HttpError(
            'TOO_MANY_CONNECTIONS',
            `this client has ${this.limits.connectionsPerClient} connections open (ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT)`,
            { retryAfter: 1 },
          )
        : this.connections.total >= this.limits.connections
          ? new HttpError(
              'OVERLOADED',
              `the bridge has ${this.limits.connections} connections open (ASKBRIDGE_MAX_CONNECTIONS)`,
              { retryAfter: 1 },
            )
          : undefined
    if (over) {
      this.log.info('connection refused', { client, status: errorResponse(over).status, code: over.code })
      this.refused.set(socket, over)
      socket.setTimeout(REFUSED_IDLE_MS, () => socket.destroy())
      return
    }
    this.connections.add(client)
    socket.once('close', () => this.connections.remove(client))
  }

  /**
   * A client error node reports on a connection: a request that did not arrive in time gets a
   * coded 408. True when it was answered here.
   */
  clientError(error: NodeJS.ErrnoException, socket: Duplex): boolean {
    if (error.code !== 'ERR_HTTP_REQUEST_TIMEOUT' && error.code !== 'ERR_HTTP_HEADERS_TIMEOUT') return false
    const client = canonical((socket as Partial<Socket>).remoteAddress)
    const refusal = new HttpError(
      'REQUEST_TIMEOUT',
      `the request did not arrive within ${this.limits.bodyTimeoutMs} ms (ASKBRIDGE_BODY_TIMEOUT)`,
    )
    this.log.info('request refused', { client, status: errorResponse(refusal).status, code: refusal.code })
    if (socket.writable) socket.end(rawRefusal(refusal))
    else socket.destroy()
    return true
  }

  /**
   * Every request first (throws a coded HttpError): a connection over its caps, and an event
   * stream over its caps. The refusal closes the connection.
   */
  admit(req: IncomingMessage, res: ServerResponse): void {
    const refused = this.refused.get(req.socket)
    if (refused) {
      res.setHeader('connection', 'close')
      throw refused
    }
    if (wantsEventStream(req)) this.stream(req, res)
  }

  /**
   * Where no token is configured (the caller decides; throws a coded HttpError): a peer that is not loopback, forwarding headers
   * from a peer that is not a trusted proxy, and a Host that is not a loopback name (DNS
   * rebinding), on every path, the inbox's and sign-in's included. Platform webhooks (verified by
   * signature) and /healthz are answered before this.
   */
  loopbackOnly(req: IncomingMessage): void {
    const peer = req.socket.remoteAddress
    const forwarded = FORWARDING_HEADERS.find((h) => req.headers[h] !== undefined)
    if (forwarded && !this.proxies.has(canonical(peer))) {
      throw new HttpError(
        'FORWARDED_REFUSED',
        `a request through a proxy (${forwarded}) needs a token (ASKBRIDGE_API_TOKEN or ASKBRIDGE_AGENT_TOKENS), or the proxy's address in ASKBRIDGE_TRUSTED_PROXIES`,
      )
    }
    if (!isLoopbackAddress(peer)) {
      throw new HttpError(
        'FORBIDDEN_PEER',
        'without a token (ASKBRIDGE_API_TOKEN or ASKBRIDGE_AGENT_TOKENS) only clients on this machine (a loopback address) are served',
      )
    }
    if (!LOOPBACK_HOST.test(req.headers.host ?? '')) {
      throw new HttpError(
        'FORBIDDEN_HOST',
        'without a token (ASKBRIDGE_API_TOKEN or ASKBRIDGE_AGENT_TOKENS) only loopback host names are served',
      )
    }
  }

  /** The client a request counts against: the peer, or the address a trusted proxy names. */
  private clientOf(req: IncomingMessage): string {
    const peer = canonical(req.socket.remoteAddress)
    const chain = req.headers['x-forwarded-for']
    if (!this.proxies.has(peer) || typeof chain !== 'string') return peer
    // The rightmost address is the one the trusted proxy saw; the rest are the client's say-so.
    const last = chain.split(',').at(-1)?.trim()
    return last ? canonical(last) : peer
  }

  private stream(req: IncomingMessage, res: ServerResponse): void {
    const client = this.clientOf(req)
    if (this.streams.of(client) >= this.limits.streamsPerClient) {
      throw new HttpError(
        'TOO_MANY_STREAMS',
        `this client has ${this.limits.streamsPerClient} event streams open (ASKBRIDGE_MAX_STREAMS_PER_CLIENT)`,
        { retryAfter: 5 },
      )
    }
    if (this.streams.total >= this.limits.streams) {
      throw new HttpError(
        'OVERLOADED',
        `the bridge has ${this.limits.streams} event streams open (ASKBRIDGE_MAX_STREAMS)`,
        { retryAfter: 5 },
      )
    }
    this.streams.add(client)
    res.once('close', () => this.streams.remove(client))
  }
}
