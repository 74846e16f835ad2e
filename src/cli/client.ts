import { Agent, type Dispatcher, request } from 'undici'
import { HttpError } from '../errors.js'
import { asUserQuestionError, UserQuestionError } from '../protocol/errors.js'
import type {
  AskUserQuestionAnswer,
  AskUserQuestionItem,
  LateReply,
  UserQuestionProjectionView,
} from '../protocol/types.js'

/** Options of {@link BridgeClient}. */
export interface BridgeClientOptions {
  /** Base URL of a running bridge. @default 'http://127.0.0.1:8787' */
  url?: string
  /** Bearer token (ASKBRIDGE_API_TOKEN). */
  token?: string
  /** What set `url`, named when it is not a usable URL. @default 'ASKBRIDGE_URL' */
  urlSource?: string
}

export const DEFAULT_BRIDGE_URL = 'http://127.0.0.1:8787'

/**
 * The bridge's base URL, checked once for every client (`ask`, `mcp`, `audit`, `hook`): without
 * a scheme, fetch would fail with a confusing "is askbridge serve running?". Throws an HttpError
 * (code BAD_URL) that names `source` and the fix.
 */
export function bridgeUrl(value: string, source = 'ASKBRIDGE_URL'): string {
  const text = value.trim()
  let parsed: URL | undefined
  try {
    parsed = new URL(text)
  } catch {
    parsed = undefined
  }
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.host !== '') {
    return text.replace(/\/+$/, '')
  }
  // Credentials in a URL are never echoed.
  const shown = text.includes('@') ? '(a value with credentials, not shown)' : `"${text}"`
  const noScheme = !/^[a-z][a-z0-9+.-]*:\/\//i.test(text)
  const fix =
    noScheme && text !== '' && !text.includes('@')
      ? `; for example ${source === '--url' ? '--url ' : `${source}=`}http://${text}`
      : ''
  throw new HttpError('BAD_URL', `${source} needs http:// or https:// (got ${shown})${fix}`)
}

/** The body of `POST /v1/ask`. */
export interface AskBody {
  questions: AskUserQuestionItem[]
  agentId?: string
  callId?: string
  timeoutMs?: number
  route?: string
}

export type AskResponse = (AskUserQuestionAnswer & { callId: string }) | { pending: true; callId: string }

/** `GET /v1/questions/:callId`. */
export interface QuestionView {
  callId: string
  agentId: string
  questions: AskUserQuestionItem[]
  state: string
  answers?: AskUserQuestionAnswer['answers']
  answeredBy?: { platform: string; userId: string; name?: string }
  [key: string]: unknown
}

/** Options of {@link askThroughRestarts}. */
export interface RestartOptions {
  signal?: AbortSignal
  /** Called each time the bridge says it is restarting, before re-attaching. */
  onRestart?: (callId: string) => void
  /** How long the bridge may stay unreachable after a restart notice. @default 300000 (5 min) */
  retryForMs?: number
}

/**
 * `POST /v1/ask` that rides out a restart of the bridge. A graceful shutdown ends waiting asks
 * with 503 SHUTTING_DOWN while the question stays open in the store, so this asks again with
 * the same callId until the bridge is back: the same card, no second message. A timed ask keeps
 * its original deadline. `body.callId` must be set (the caller generates it).
 */
export async function askThroughRestarts(
  client: BridgeClient,
  body: AskBody & { callId: string },
  options: RestartOptions = {},
): Promise<AskResponse> {
  const retryFor = options.retryForMs ?? 300_000
  const deadline = body.timeoutMs === undefined ? undefined : Date.now() + body.timeoutMs
  let current: AskBody = body
  let down: number | undefined
  let delay = 250
  for (;;) {
    try {
      return await client.ask(current, options.signal)
    } catch (error) {
      if (options.signal?.aborted || !(error instanceof HttpError)) throw error
      if (error.code === 'SHUTTING_DOWN') {
        down = Date.now()
        delay = 250
        options.onRestart?.(body.callId)
      } else if (error.code === 'OVERLOADED') {
        // Too many asks waiting at the bridge; this one was not stored. Ask again shortly.
        down ??= Date.now()
        if (Date.now() - down > retryFor) throw error
      } else if (error.code !== 'UNREACHABLE' || down === undefined || Date.now() - down > retryFor) {
        // Unreachable before it ever answered: not a restart, say so at once.
        throw error
      }
      await sleep(delay, options.signal)
      delay = Math.min(delay * 2, 2000)
      // Past the deadline the re-ask still goes out (1 ms) so the answer is pending, not lost.
      if (deadline !== undefined) current = { ...body, timeoutMs: Math.max(1, deadline - Date.now()) }
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

// Blocking asks may wait for hours: no header or body timeout, TCP keep-alive on.
const dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 4000 })

/**
 * Where a redirect points, fit to show in an error: read as a URL (relative to the bridge's), and
 * left out when it is none or carries credentials (they are never echoed).
 */
function shownLocation(header: string | string[] | undefined, base: string): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (value === undefined) return undefined
  let url: URL
  try {
    url = new URL(value, base)
  } catch {
    return undefined
  }
  return url.username === '' && url.password === '' ? url.href.slice(0, 200) : undefined
}

/** A small client of the askbridge HTTP API, shared by `askbridge ask` and `askbridge mcp`. */
export class BridgeClient {
  readonly url: string
  private readonly token: string | undefined

  constructor(options: BridgeClientOptions = {}) {
    this.url = bridgeUrl(options.url ?? DEFAULT_BRIDGE_URL, options.urlSource)
    this.token = options.token
  }

  ask(body: AskBody, signal?: AbortSignal): Promise<AskResponse> {
    return this.call<AskResponse>('POST', '/v1/ask', body, signal)
  }

  question(callId: string): Promise<QuestionView> {
    return this.call('GET', `/v1/questions/${encodeURIComponent(callId)}`)
  }

  questions(agentId?: string): Promise<UserQuestionProjectionView> {
    const q = agentId === undefined ? '' : `?agentId=${encodeURIComponent(agentId)}`
    return this.call('GET', `/v1/questions${q}`)
  }

  answer(
    callId: string,
    answers: AskUserQuestionAnswer['answers'],
    agentId?: string,
  ): Promise<{ accepted: boolean }> {
    return this.call('POST', `/v1/questions/${encodeURIComponent(callId)}/answer`, {
      answers,
      ...(agentId === undefined ? {} : { agentId }),
    })
  }

  cancel(callId: string): Promise<unknown> {
    return this.call('DELETE', `/v1/questions/${encodeURIComponent(callId)}`)
  }

  /** Late replies for an agent; `waitSeconds` long-polls when none is queued yet. */
  replies(agentId: string, waitSeconds = 0, signal?: AbortSignal): Promise<{ replies: LateReply[] }> {
    const q = waitSeconds > 0 ? `?wait=${waitSeconds}` : ''
    return this.call('GET', `/v1/agents/${encodeURIComponent(agentId)}/replies${q}`, undefined, signal)
  }

  admit(agentId: string, callId: string): Promise<unknown> {
    return this.call(
      'POST',
      `/v1/agents/${encodeURIComponent(agentId)}/replies/${encodeURIComponent(callId)}/admit`,
      {},
    )
  }

  discard(agentId: string, callId: string): Promise<unknown> {
    return this.call(
      'DELETE',
      `/v1/agents/${encodeURIComponent(agentId)}/replies/${encodeURIComponent(callId)}`,
    )
  }

  audit(params: { callId?: string; since?: number }): Promise<{ events: unknown[] }> {
    const q = new URLSearchParams()
    if (params.callId !== undefined) q.set('callId', params.callId)
    if (params.since !== undefined) q.set('since', String(params.since))
    const qs = q.toString()
    return this.call('GET', `/v1/audit${qs ? `?${qs}` : ''}`)
  }

  /**
   * A Claude Code hook payload for `POST /v1/hooks/claude-code`; resolves to the hook's JSON answer
   * (`{}`: no decision; PreToolUse fails closed). `timeoutMs` is the hook's own timeout; the bridge answers before it.
   */
  hook(
    payload: unknown,
    options: { timeoutMs: number; route?: string; client?: string; choices?: readonly string[] },
    signal?: AbortSignal,
  ): Promise<unknown> {
    const q = new URLSearchParams({ timeout: String(Math.ceil(options.timeoutMs / 1000)) })
    if (options.route !== undefined) q.set('route', options.route)
    if (options.client !== undefined && options.client !== 'claude-code') q.set('client', options.client)
    if (options.choices?.length) q.set('choices', options.choices.join(','))
    return this.call('POST', `/v1/hooks/claude-code?${q}`, payload, signal)
  }

  /** One request; protocol errors come back as UserQuestionError, the rest as HttpError (with the status it got). */
  async call<T>(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`
    let status: number
    let location: string | undefined
    let text: string
    try {
      // undici's request rather than fetch: the answer of a blocking ask is what the agent waits
      // for, and fetch reads it through the WHATWG stream machinery, which costs the agent's event
      // loop measurably more CPU per response (docs/benchmarks.md, click).
      const res = await request(`${this.url}${path}`, {
        method,
        headers,
        dispatcher,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      })
      status = res.statusCode
      location = shownLocation(res.headers.location, this.url)
      text = await res.body.text()
    } catch (error) {
      if (signal?.aborted) throw error
      const code = (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code
      throw new HttpError(
        'UNREACHABLE',
        `cannot reach askbridge at ${this.url}${typeof code === 'string' ? ` (${code})` : ''}: is \`askbridge serve\` running? (ASKBRIDGE_URL)`,
      )
    }
    // Not followed: a proxy that redirects (http to https, say) would turn the ask into a GET.
    if (status >= 300 && status < 400) {
      throw new HttpError(
        'BAD_RESPONSE',
        `askbridge at ${this.url} answered ${status}, a redirect${location ? ` to ${location}` : ''}: set ASKBRIDGE_URL to the address it redirects to`,
        { status },
      )
    }
    let json: unknown
    try {
      json = text === '' ? {} : JSON.parse(text)
    } catch {
      throw new HttpError(
        'BAD_RESPONSE',
        `askbridge answered ${status} with non-JSON: ${text.slice(0, 200)}`,
        {
          status,
        },
      )
    }
    if (status >= 200 && status < 300) return json as T
    const err = (json as { error?: unknown }).error
    const uq = asUserQuestionError(err)
    if (uq) throw new UserQuestionError(uq.code, uq.message)
    const e = (err ?? {}) as { code?: unknown; message?: unknown }
    throw new HttpError(
      typeof e.code === 'string' ? e.code : `HTTP_${status}`,
      typeof e.message === 'string' ? e.message : `askbridge answered HTTP ${status}`,
      { status },
    )
  }
}

/** The name of whoever answered a call (their display name, else their platform user id). */
export function answererName(view: QuestionView | undefined): string | undefined {
  const by = view?.answeredBy
  if (!by) return undefined
  return by.name ?? by.userId
}

/** Everyone who approved a call that needed a quorum, in order. */
export function approverNames(view: QuestionView | undefined): string[] {
  const card = view?.card as { approvals?: Array<{ name?: string; userId: string }> } | undefined
  return (card?.approvals ?? []).map((p) => p.name ?? p.userId)
}
