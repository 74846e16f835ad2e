/**
 * askbridge as a library: the protocol, the service, the durable store and the chat answerer.
 * Platform adapters are separate entry points (`askbridge/adapters/slack`, `/discord`, `/web`)
 * so a harness loads only the SDKs it uses.
 */
export {
  type CardHost,
  type ChatAdapter,
  type InboundInteraction,
  type InteractionOutcome,
  NOTICE_TEXT_CHARS,
  type Notice,
} from './answerer/adapter.js'
export { ChatAnswerer, type ChatAnswererOptions } from './answerer/chat.js'
export { applyInteraction } from './card/apply.js'
export { decodeComponentId, encodeComponentId } from './card/codec.js'
export { cardAnswer, newCard } from './card/lifecycle.js'
export type * from './card/types.js'
export { type Config, loadConfig } from './config/index.js'
export { AskbridgeError } from './errors.js'
export { jsonLogger, type Logger, silentLogger } from './log.js'
export type { BuiltPlatform, PlatformBuildInput, PlatformModule } from './platform.js'
export * from './protocol/index.js'
export { loadRoutes, routesRouter, validateRoutes } from './routing/routes.js'
export type { RoutePlan, Router } from './routing/types.js'
export { type BridgeHandle, type ServeOptions, serve } from './server/serve.js'
export * from './service/index.js'
export { connectStore, openStore, SqliteStore } from './store/index.js'
export { PostgresStore } from './store/postgres.js'
export type { Store } from './store/types.js'
