/** The Teams message and Adaptive Card shapes askbridge sends, the keys its actions carry, and the render options. */

/** The key of Action.Execute data that names the component. */
export const ACTION_KEY = 'askbridge'
/** Action.Execute `verb` of every askbridge button. */
export const ACTION_VERB = 'askbridge'
/** Action.Execute `verb` of the card's `refresh`: Teams asks for the card as one person sees it. */
export const REFRESH_VERB = 'refresh'
/** The key of the refresh action's data that names the card (`{callId, agent}`). */
export const CARD_KEY = 'askbridgeCard'
export const CARD_CONTENT_TYPE = 'application/vnd.microsoft.card.adaptive'

/** An Adaptive Card element, as laid out by render.ts. */
type Json = object

export interface ExecuteAction {
  type: 'Action.Execute'
  title: string
  verb: typeof ACTION_VERB
  data: { [ACTION_KEY]: string }
  style?: 'positive' | 'destructive' | 'default'
}

export interface AdaptiveCard {
  type: 'AdaptiveCard'
  $schema: string
  version: string
  body: Json[]
  actions?: Json[]
  refresh?: Refresh
  msteams: { width: 'Full'; entities?: MentionEntity[] }
}

export interface Refresh {
  action: {
    type: 'Action.Execute'
    title: string
    verb: typeof REFRESH_VERB
    data: { [CARD_KEY]: { callId: string; agent: string } }
  }
  userIds: string[]
}

export interface MentionEntity {
  type: 'mention'
  text: string
  mentioned: { id: string; name: string }
}

/** One message as sent to `POST /v3/conversations/{id}/activities` (or PUT for an update). */
export interface TeamsMessage {
  type: 'message'
  /** Mentions are the card's `msteams.entities`: only the configured ones, never agent text. */
  attachments: [{ contentType: typeof CARD_CONTENT_TYPE; content: AdaptiveCard }]
}

export interface TeamsMention {
  /** The user's Microsoft Entra object id (or Teams user id). */
  id: string
  /** The name shown inside `<at>…</at>`. */
  name: string
}

export interface RenderOptions {
  /** People to mention (the destination's `user:ID` entries, with their names). */
  mentions?: readonly TeamsMention[]
  locale?: string
  /** The inbox (ASKBRIDGE_PUBLIC_URL + /inbox), linked from a card cut down to fit. */
  inboxUrl?: string
  /** Bytes the message may take. @default TEAMS_LIMITS.messageBytes */
  maxBytes?: number
  /**
   * The people who may answer (Teams user ids, `29:…`): while the card has controls, everyone's
   * copy shows none and Teams fetches the controls for these people (`refresh.userIds`).
   * `actionable`: this copy is for one of them (the answer to their refresh or click). Ignored
   * when empty or over Teams' 60: then every copy has the controls.
   */
  refresh?: { userIds: readonly string[]; actionable: boolean }
}
