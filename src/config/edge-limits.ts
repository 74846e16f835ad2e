/**
 * Limits of the HTTP server's network edge (src/server/edge.ts), each an environment variable
 * (src/config/env.ts), and their defaults: here, below both, so the configuration reads the
 * defaults without importing the server.
 */
export interface EdgeLimits {
  /** ASKBRIDGE_BODY_TIMEOUT: a request (headers and body) must arrive within this. */
  bodyTimeoutMs: number
  /** ASKBRIDGE_MAX_CONNECTIONS / ASKBRIDGE_MAX_CONNECTIONS_PER_CLIENT */
  connections: number
  connectionsPerClient: number
  /** ASKBRIDGE_MAX_STREAMS / ASKBRIDGE_MAX_STREAMS_PER_CLIENT: Server-Sent Events streams open at once. */
  streams: number
  streamsPerClient: number
}

export const DEFAULT_EDGE_LIMITS: EdgeLimits = {
  bodyTimeoutMs: 30_000,
  connections: 10_000,
  // Above ASKBRIDGE_MAX_WAITING_ASKS' default: one agent host may fill the waiting asks.
  connectionsPerClient: 6_000,
  streams: 1_000,
  streamsPerClient: 100,
}
