/**
 * The one code path behind `POST /v1/hooks/claude-code`, `askbridge hook` (which posts there)
 * and `POST /v1/elicit`: plan the question, ask it, wait at most the hook's budget, and map the
 * outcome to the exact answer. Waiting never allows: when the time runs out a PreToolUse answers
 * "ask" (or "deny"), every other event "no decision", and the cards say the agent moved on.
 */
import { randomUUID } from 'node:crypto'
import { within } from '../answerer/adapter.js'
import type { NoticeRequest } from '../answerer/notices.js'
import { displayName } from '../card/lifecycle.js'
import type { CardState } from '../card/types.js'
import { type Logger, silentLogger } from '../log.js'
import { asUserQuestionError, UserQuestionError } from '../protocol/errors.js'
import type { FormSpec } from '../protocol/form.js'
import type { Agent, AskUserQuestionItem, ToolCallInfo } from '../protocol/types.js'
import type { UserQuestionService } from '../service/service.js'
import { planHook } from './claude-code.js'
import { DIALECTS, type HookClient, type TimeoutDecision } from './dialects.js'
import { elicitationForm } from './elicit.js'
import { HookError } from './errors.js'
import { elicitResult, hookOutput } from './output.js'
import { type ExtraChoice, type HookOutcome, planQuestionsOf } from './plan.js'
import type { ElicitRequest, ElicitResult, HookOutput } from './schemas.js'

/** What the hook path needs. */
export interface HookDeps {
  service: UserQuestionService
  /** Post a `Notification` / `Stop` notice where its route opts in (the chat answerer's `notice`). */
  notices?: (request: NoticeRequest) => Promise<unknown>
  logger?: Logger
  /** The bridge's public URL (ASKBRIDGE_PUBLIC_URL): cards link to the whole tool input in the inbox. */
  publicUrl?: string
  /**
   * The agent an ask runs as, checked against the caller's credential (it throws when the token
   * may not act for that agent, and names the requester the token acts for).
   * @default the service's live agent with this id
   */
  agentFor?: (agentId: string) => Agent
}

export interface HookCallOptions {
  /** The hook's own timeout (ms). The answer comes before it: see {@link waitBudget}. */
  timeoutMs: number
  /** The caller went away (Claude Code gave up, or answered in its own prompt). */
  signal?: AbortSignal
  /** An explicit route from the routes file. */
  route?: string
  /** The hook's dialect. @default 'claude-code' */
  client?: HookClient
  /** Reviewer choices beyond approve / reject / always. */
  choices?: readonly ExtraChoice[]
  /** What PreToolUse answers when nobody decides in time. @default 'ask' */
  timeoutDecision?: TimeoutDecision
}

/** How long to wait for people within a hook timeout: leave 10% (0.5 s to 5 s) to answer in. */
export function waitBudget(timeoutMs: number): number {
  return Math.max(1, timeoutMs - Math.min(5_000, Math.max(500, Math.round(timeoutMs * 0.1))))
}

/**
 * Claude Code sessions ask as agent `claude-code:SESSION`, Codex sessions as `codex:SESSION`
 * (routes can match `claude-code:*`).
 */
export function hookAgentId(sessionId: string, prefix = 'claude-code'): string {
  const safe = sessionId.replace(/[^A-Za-z0-9_.:-]/g, '-').slice(0, 52)
  return `${prefix}:${safe || 'session'}`
}

const MOVED_ON = 'the agent moved on: Claude Code stopped waiting and asks in its own prompt'

interface AskPlan {
  questions: AskUserQuestionItem[]
  agentId: string
  callId: string
  form?: FormSpec
  tool?: ToolCallInfo
  route?: string
}

/** Ask and wait for at most `budgetMs` (or until the signal aborts): the outcome, never a guess. */
async function askWithin(
  deps: HookDeps,
  plan: AskPlan,
  budgetMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<HookOutcome> {
  const { service } = deps
  const controller = new AbortController()
  const stop = () => controller.abort(new UserQuestionError('ASK_TIMED_OUT', MOVED_ON))
  const timer = budgetMs === undefined ? undefined : setTimeout(stop, budgetMs)
  if (signal?.aborted) stop()
  signal?.addEventListener('abort', stop, { once: true })
  try {
    const answer = await service.ask({
      questions: plan.questions,
      agent: deps.agentFor ? deps.agentFor(plan.agentId) : service.agents.ensure(plan.agentId),
      signal: controller.signal,
      wait: { callId: plan.callId },
      ...(plan.route === undefined ? {} : { route: plan.route }),
      ...(plan.form ? { form: plan.form } : {}),
      ...(plan.tool ? { tool: plan.tool } : {}),
    })
    const card = (await service.store.getCard<CardState>({ agentId: plan.agentId, callId: plan.callId }))
      ?.state
    return {
      kind: 'answered',
      answers: answer.answers,
      ...(card?.answeredBy ? { by: displayName(card.answeredBy) } : {}),
      ...(card?.reason ? { reason: card.reason } : {}),
    }
  } catch (error) {
    const code = asUserQuestionError(error)?.code
    if (code === 'ASK_CANCELLED') return { kind: 'cancelled' }
    if (controller.signal.aborted && code === 'ASK_ABORTED') return { kind: 'no-decision' }
    throw error
  } finally {
    if (timer) clearTimeout(timer)
    signal?.removeEventListener('abort', stop)
  }
}

/**
 * Answer a Claude Code hook request. Throws HookError (unsupported event or schema, malformed
 * body) before anything is posted, and UserQuestionErrors the service raises.
 */
export async function answerClaudeCodeHook(
  deps: HookDeps,
  payload: unknown,
  options: HookCallOptions,
): Promise<HookOutput> {
  const callId = `hook-${randomUUID()}`
  const client = options.client ?? 'claude-code'
  const plan = planHook(
    payload,
    { callId, publicUrl: deps.publicUrl },
    { client, ...(options.choices ? { choices: options.choices } : {}) },
  )
  const agentId = hookAgentId(plan.sessionId, DIALECTS[client].agentPrefix)
  const outputOptions = options.timeoutDecision ? { timeoutDecision: options.timeoutDecision } : {}
  if (plan.kind === 'record') {
    await deps.service.store.audit({ callId, kind: 'hook', detail: { event: plan.event, ...plan.detail } })
    return {}
  }
  if (plan.kind === 'fyi') {
    // An FYI never holds Claude Code up: posted within the hook's budget, failures only logged.
    const posting = deps.notices?.({
      event: plan.event,
      agentId,
      title: plan.title,
      text: plan.text,
      ...(options.route === undefined ? {} : { route: options.route }),
    })
    if (posting) {
      const failed = (error: unknown) => {
        ;(deps.logger ?? silentLogger).error('a hook notice failed', { event: plan.event, error })
      }
      await within(posting.catch(failed), waitBudget(options.timeoutMs), undefined)
    }
    return hookOutput(plan, { kind: 'no-decision' }, outputOptions)
  }
  const ask: AskPlan = {
    agentId,
    callId,
    questions: planQuestionsOf(plan),
    ...(options.route === undefined ? {} : { route: options.route }),
    ...(plan.kind === 'form'
      ? { form: { fields: plan.form.fields, defaults: plan.form.defaults } }
      : { tool: plan.tool }),
  }
  if (plan.kind !== 'form') {
    // The card shows a preview; the whole input is kept with the call.
    await deps.service.store.audit({
      callId,
      kind: 'hook',
      detail: { event: plan.event, tool_name: plan.tool.name, tool_input: plan.toolInput },
    })
  }
  const outcome = await askWithin(deps, ask, waitBudget(options.timeoutMs), options.signal)
  return hookOutput(plan, outcome, outputOptions)
}

/**
 * Answer an MCP elicitation (`elicitation/create` params) with people: accept with typed
 * content, decline, or cancel (cancelled, or `timeoutMs` passed without an answer).
 */
export async function answerElicitation(
  deps: HookDeps,
  request: ElicitRequest,
  options: { signal?: AbortSignal } = {},
): Promise<ElicitResult> {
  if (request.mode === 'url') {
    throw new HookError(
      'UNSUPPORTED_SCHEMA',
      'URL-mode elicitation is not supported: the person who started it must open the URL and complete it themselves, so it cannot be handed to someone in chat',
    )
  }
  const form = elicitationForm(request.requestedSchema ?? { type: 'object', properties: {} }, request.message)
  const outcome = await askWithin(
    deps,
    {
      questions: form.questions,
      agentId: request.agentId ?? 'mcp',
      callId: `elicit-${randomUUID()}`,
      form: { fields: form.fields, defaults: form.defaults },
      ...(request.route === undefined ? {} : { route: request.route }),
    },
    request.timeoutMs,
    options.signal,
  )
  return elicitResult(form, outcome)
}
