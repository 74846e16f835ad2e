/**
 * Everything a platform adapter (adapters/<platform>/) may take from the core, in one module:
 * the adapter contract, the card model, view and controls, the component-id codec, text cleaning,
 * the acknowledgement deadline helper (`within`), the latest-wins update queue (`Superseding`),
 * the start-up reachability check, raw request bodies for signed webhooks, and the logger.
 * Adapters import nothing else from src/ (test/boundary.test.ts holds them to it), so the core can
 * change behind this module and a new platform needs no core file.
 */
export {
  type CardHost,
  type ChatAdapter,
  type InboundInteraction,
  type InteractionOutcome,
  type Notice,
  notAppliedMessage,
  within,
} from './answerer/adapter.js'
export { checkReachable } from './answerer/reachable.js'
export { Superseding } from './answerer/supersede.js'
export { setBounded } from './bounded.js'
export {
  type CardRef,
  COMPONENT_ID_PREFIX,
  type ComponentRef,
  cardRef,
  decodeComponentId,
  encodeComponentId,
} from './card/codec.js'
export type { Control, ControlRef, FormKind, OptionView, Tone } from './card/controls.js'
export { displayName, FINISHED_STATUSES, LIVE_STATUSES } from './card/lifecycle.js'
export {
  listItemText,
  type Nodes,
  type PhrasingContent,
  parseMarkdown,
  plainText,
  safeUrl,
  tableCells,
  tableLines,
  wrapMarker,
} from './card/markdown.js'
export { type ComponentInput, type Resolution, resolveComponent } from './card/resolve.js'
export { type StatusLine, statusText } from './card/status.js'
export { cleanDeep, cleanText, pickLocale } from './card/text.js'
export type {
  CardAction,
  CardState,
  CardStatus,
  Destination,
  Interaction,
  Mention,
  Person,
} from './card/types.js'
export { type CardView, cardView, type QuestionView } from './card/view.js'
export { optionalText, url as urlVariable } from './config/env.js'
export { AskbridgeError, HttpError } from './errors.js'
export { type Logger, silentLogger } from './log.js'
export {
  envOf,
  type IdRule,
  type PlatformModule,
  respondersOn,
} from './platform.js'
export { describeZodError, LIMITS } from './protocol/schemas.js'
export { readFailure, readRaw } from './server/body.js'
export { errorResponse } from './server/errors.js'
export type { LeaderHandlers, Leadership } from './store/capabilities.js'
