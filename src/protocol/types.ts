import type { FormSpec } from './form.js'

/**
 * The user-questions protocol (see docs/protocol.md). Field names and semantics are the interface:
 * an agent written against the seam works against askbridge unchanged.
 */

/** One selectable answer. `label` is shown to the user AND is the value the model reads back. */
export interface AskUserQuestionOption {
  label: string
  /** Extra help text for capable UIs. */
  description?: string
}

/** Localized wording keyed by locale; `en` is always present. */
export type LocalizedText = { en: string; [locale: string]: string }

/** Presentation intent: changes how a UI shows the question, never the answer encoding. */
export type AskUserQuestionIntent =
  | {
      kind: 'plan-review'
      /** The option label that approves; every other option declines. */
      approve: string
      callId?: string
    }
  | {
      kind: 'approval'
      approve: string
      reject: string
      always?: string
      /** For human recognition only, NEVER an identity for authorization. */
      subject?: { name: string; icon?: string }
      display?: {
        question: LocalizedText
        detail?: LocalizedText
        approve?: LocalizedText
      }
    }

export interface AskUserQuestionItem {
  /** Stable, caller-provided; echoed in the answer so batches stay routable. */
  id: string
  question: string
  /** Supporting text (markdown), rendered with the question, never inside option labels. */
  detail?: string
  header?: string
  /** Absent or empty: a free-text question. */
  options?: AskUserQuestionOption[]
  /** @default false */
  multiSelect?: boolean
  intent?: AskUserQuestionIntent
}

/** The identity of an asking agent. Liveness is decided by the {@link AgentRegistry}, by object identity. */
export interface Agent {
  readonly id: string
  /** A delegated sub-agent has no human to ask. */
  readonly delegated?: boolean
  /** Optional human requester (for example the Slack user who started the agent); used by `excludeRequester`. */
  readonly requester?: { platform: string; userId: string }
}

export interface AskUserQuestionRequest {
  questions: AskUserQuestionItem[]
  agent?: Agent
  signal?: AbortSignal
  wait?: { callId: string; timed?: boolean }
  /** askbridge extension: an explicit route name chosen by the caller. */
  route?: string
  /** askbridge extension: typed form fields (an MCP elicitation) the card checks answers against. */
  form?: FormSpec
  /** askbridge extension: the tool call behind a hook's question (routes match it). */
  tool?: ToolCallInfo
}

export interface AskUserQuestionAnswerItem {
  id: string
  selected: string[]
  custom?: string
}

export interface AskUserQuestionAnswer {
  answers: AskUserQuestionAnswerItem[]
}

export interface PendingResult {
  pending: true
  callId: string
}

export type TimedUserQuestionResult = AskUserQuestionAnswer | PendingResult

export function isPending(result: TimedUserQuestionResult): result is PendingResult {
  return (result as PendingResult).pending === true
}

export type UserQuestionState = 'open' | 'continued'

export interface PendingUserQuestion {
  callId: string
  questions: AskUserQuestionItem[]
  state: UserQuestionState
}

export interface SettledUserQuestion {
  callId: string
  answers: AskUserQuestionAnswerItem[]
}

export interface UserQuestionProjectionView {
  active: PendingUserQuestion[]
  settled: SettledUserQuestion[]
}

/** A late answer queued to the owning agent as a user message. */
export interface LateReply {
  source: 'user-question-reply'
  outcome: 'answered'
  payload: {
    kind: 'answer_to_pending_question'
    tool: 'ask_user_question'
    callId: string
    questions: AskUserQuestionItem[]
    answers: AskUserQuestionAnswerItem[]
  }
}

/**
 * An answerer in the waterfall: answer the request (claim it) or call `next()` to delegate.
 * A plain function of this shape can be registered directly by a host harness.
 */
export type Answerer = (
  request: AnswererRequest,
  next: () => Promise<AskUserQuestionAnswer>,
) => Promise<AskUserQuestionAnswer>

/** What an answerer receives: the request with the waterfall's own signal and a resolved call id. */
export interface AnswererRequest {
  questions: AskUserQuestionItem[]
  agent?: Agent
  /** The waterfall's signal: aborts on caller abort, cancel, close, or an unclaimed timeout. Its `reason` is a UserQuestionError. */
  signal: AbortSignal
  wait?: { callId: string; timed?: boolean }
  /** askbridge: the call id (the wait's, or generated for a blocking ask). */
  callId: string
  route?: string
  /** askbridge: when the timed wait's deadline falls (epoch ms), for display. */
  deadline?: number
  form?: FormSpec
  tool?: ToolCallInfo
}

/** askbridge: a Claude Code tool call as routes see it. */
export interface ToolCallInfo {
  /** `Bash`, `Edit`, `mcp__server__tool`, ... */
  name: string
  /** The rendered tool input (the Bash command, the file path, the URL, or JSON). */
  input: string
  /** An MCP tool's server source as Claude Code reports it (`mcp_server.source`: user, project, plugin, managed, ...). */
  mcpSource?: string
}
