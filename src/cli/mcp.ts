import { randomUUID } from 'node:crypto'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { HttpError } from '../errors.js'
import { asUserQuestionError } from '../protocol/errors.js'
import type { AskUserQuestionItem, LateReply } from '../protocol/types.js'
import { MAX_TIMEOUT_MS } from '../protocol/validate.js'
import {
  answererName,
  approverNames,
  askThroughRestarts,
  type BridgeClient,
  type QuestionView,
} from './client.js'
import { clientEnv, clientFromEnv, nonEmpty } from './env.js'

/** Options of {@link createMcpServer}. */
export interface McpOptions {
  client: BridgeClient
  /** The agent id replies are queued to. @default 'mcp' */
  agentId?: string
  /** Default seconds a tool call waits before returning pending; stays below the ~60 s many clients allow. @default 50 */
  defaultTimeoutSeconds?: number
  /** @default package version */
  version?: string
}

// Strict: a model that writes `multiSelect` or `descripton` gets an error naming the key,
// rather than a single-choice question or a lost description.
const optionShape = z.strictObject({
  label: z.string().describe('Shown to the person AND the value you read back when chosen.'),
  description: z.string().optional().describe('Extra help text under the option.'),
})

const questionShape = z.strictObject({
  id: z.string().describe('Stable id, echoed in the answer so you can match it.'),
  question: z.string().describe('The question, complete and self-contained.'),
  header: z.string().optional().describe('A short heading or group label.'),
  detail: z.string().optional().describe('Supporting context in markdown, shown with the question.'),
  options: z
    .array(optionShape)
    .optional()
    .describe(
      'Choices. Omit for a free-text question. People may always answer "Other" with their own text.',
    ),
  multi_select: z.boolean().optional().describe('Allow several options. Default: one.'),
})

export const ASK_DESCRIPTION = `Ask one or more people a question (in Slack, Discord or the askbridge web inbox) and wait for their answer.
Use it when you need a human decision or information you cannot find yourself. Batch related questions in one call; each answer is keyed by the question id.
The answer for each question is {id, selected: [option labels], custom?: free text}. An empty selected with no custom means the person skipped it.
If nobody answers within the timeout the result is PENDING: that is NOT an answer and NOT permission. Keep working on what does not depend on it and collect the answer later with get_question_replies.`

export const PENDING_TEXT = (callId: string) =>
  `PENDING: nobody has answered yet (callId: ${callId}).
This is NOT an answer, NOT a refusal and NOT permission: do not assume any choice was made.
The question stays open and people can still answer it.
Continue with work that does not depend on it, and collect the answer later by calling get_question_replies with callId "${callId}" (pass wait: 30 to wait up to 30 seconds).`

/** The `askbridge mcp` server: `ask_user_question` and `get_question_replies` over the HTTP API. */
export function createMcpServer(options: McpOptions): McpServer {
  const tools: Tools = {
    client: options.client,
    agentId: options.agentId ?? 'mcp',
    defaultTimeout: options.defaultTimeoutSeconds ?? 50,
  }
  const server = new McpServer({ name: 'askbridge', version: options.version ?? '0.1.0' })
  registerAsk(server, tools)
  registerReplies(server, tools)
  return server
}

/** What both tools share: the bridge, the agent replies are queued to, the default wait. */
interface Tools {
  client: BridgeClient
  agentId: string
  defaultTimeout: number
}

function registerAsk(server: McpServer, tools: Tools): void {
  server.registerTool(
    'ask_user_question',
    {
      title: 'Ask people a question',
      description: ASK_DESCRIPTION,
      inputSchema: z.strictObject({
        questions: z.array(questionShape).min(1).describe('The questions of one batch.'),
        timeout: z
          .union([z.literal(-1), z.number().int().min(1).max(MAX_TIMEOUT_SECONDS)])
          .optional()
          .describe(
            `Seconds to wait before returning PENDING: 1 to ${MAX_TIMEOUT_SECONDS} (default ${tools.defaultTimeout}). -1 waits until answered, which many clients abort after about 60 s.`,
          ),
      }),
    },
    async ({ questions, timeout }, extra): Promise<CallToolResult> => {
      try {
        return await ask(tools, questions, timeout ?? tools.defaultTimeout, extra.signal)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/** `ask_user_question`: ask, riding out restarts; the answers and who gave them, or PENDING. */
async function ask(
  { client, agentId }: Tools,
  questions: Array<z.infer<typeof questionShape>>,
  seconds: number,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const callId = `mcp-${randomUUID()}`
  const result = await askThroughRestarts(
    client,
    {
      questions: questions.map(toItem),
      agentId,
      callId,
      ...(seconds === -1 ? {} : { timeoutMs: seconds * 1000 }),
    },
    { signal },
  )
  if ('pending' in result) {
    return {
      content: [{ type: 'text', text: PENDING_TEXT(result.callId) }],
      structuredContent: { pending: true, callId: result.callId },
    }
  }
  const who = await whoAnswered(client, result.callId)
  return {
    content: [{ type: 'text', text: JSON.stringify({ answers: result.answers, ...who.text }) }],
    structuredContent: { answers: result.answers, callId: result.callId, ...who.structured },
  }
}

function registerReplies(server: McpServer, tools: Tools): void {
  server.registerTool(
    'get_question_replies',
    {
      title: 'Collect late answers',
      description:
        'Collect answers people gave after ask_user_question returned PENDING. Each reply returned is marked as received (admitted). Returns nothing when no late answer has arrived yet.',
      inputSchema: z.strictObject({
        callId: z.string().optional().describe('Only the reply to this call (from the PENDING result).'),
        wait: z
          .number()
          .int()
          .min(0)
          .max(50)
          .optional()
          .describe('Seconds to wait for a reply when none is there yet (default 0, at most 50).'),
      }),
    },
    async ({ callId, wait }, extra): Promise<CallToolResult> => {
      try {
        return await collectReplies(tools, callId, wait ?? 0, extra.signal)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/** `get_question_replies`: wait for late replies (of one call, or all), admit them, and say who answered. */
async function collectReplies(
  { client, agentId }: Tools,
  callId: string | undefined,
  wait: number,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const picked = await pollReplies(client, agentId, callId, wait, signal)
  for (const r of picked) await client.admit(agentId, r.payload.callId)
  if (picked.length === 0 && callId !== undefined) {
    // Nothing queued for this call: say why, so the model neither waits forever on a call
    // that is settled or cancelled nor mistakes a typo for "still pending".
    const settled = await callOutcome(client, callId)
    if (settled) return settled
    return {
      content: [
        {
          type: 'text',
          text: `No late answer yet for callId ${callId}: it is still pending. This is not an answer. Try again later.`,
        },
      ],
      structuredContent: { replies: [], pending: [callId] },
    }
  }
  if (picked.length === 0) return await nothingQueued(client, agentId)
  const replies = []
  for (const r of picked) {
    const who = await whoAnswered(client, r.payload.callId)
    replies.push({ callId: r.payload.callId, answers: r.payload.answers, ...who })
  }
  return {
    content: [
      {
        type: 'text',
        text: JSON.stringify({
          replies: replies.map((r) => ({ callId: r.callId, answers: r.answers, ...r.text })),
        }),
      },
    ],
    structuredContent: {
      replies: replies.map((r) => ({ callId: r.callId, answers: r.answers, ...r.structured })),
    },
  }
}

/** Long-poll until a matching reply arrives or `wait` seconds run out. */
async function pollReplies(
  client: BridgeClient,
  agentId: string,
  callId: string | undefined,
  wait: number,
  signal: AbortSignal,
): Promise<LateReply[]> {
  const deadline = Date.now() + wait * 1000
  for (;;) {
    const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000))
    const { replies } = await client.replies(agentId, left, signal)
    const picked = replies.filter((r) => callId === undefined || r.payload.callId === callId)
    if (picked.length > 0 || left === 0) return picked
  }
}

/** The largest `timeout` in seconds: the service's timer limit. */
export const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMEOUT_MS / 1000)

interface Who {
  /** For the text result: names, as `askbridge ask --json` prints them. */
  text: { answeredBy?: string; approvedBy?: string[] }
  /** For structuredContent: the platform, the user id and the name. */
  structured: {
    answeredBy?: { platform: string; userId: string; name?: string }
    approvedBy?: string[]
  }
}

/** Who answered a settled call (nothing when the bridge cannot say). */
async function whoAnswered(client: BridgeClient, callId: string): Promise<Who> {
  const view = await client.question(callId).catch(() => undefined)
  const name = answererName(view)
  const approvers = approverNames(view)
  const approvedBy = approvers.length > 1 ? { approvedBy: approvers } : {}
  return {
    text: { ...(name === undefined ? {} : { answeredBy: name }), ...approvedBy },
    structured: { ...(view?.answeredBy ? { answeredBy: view.answeredBy } : {}), ...approvedBy },
  }
}

/** No callId and no late answer queued: say whether anything is still waiting, and what. */
async function nothingQueued(client: BridgeClient, agentId: string): Promise<CallToolResult> {
  const { active } = await client.questions(agentId)
  const pending = active.map((q) => q.callId)
  if (pending.length === 0) {
    return {
      content: [
        {
          type: 'text',
          text: 'Nothing pending: no question you asked is waiting for an answer, and no late answer is queued.',
        },
      ],
      structuredContent: { replies: [], pending: [] },
    }
  }
  return {
    content: [
      {
        type: 'text',
        text: `No late answers yet. Still pending (${pending.length}): ${pending.join(', ')}. This is not an answer. Try again later.`,
      },
    ],
    structuredContent: { replies: [], pending },
  }
}

/** A tool result for a call with no queued reply that is not waiting either; undefined while it is. */
async function callOutcome(client: BridgeClient, callId: string): Promise<CallToolResult | undefined> {
  let view: QuestionView
  try {
    view = await client.question(callId)
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) {
      return toolError(
        'NOT_FOUND',
        `no question has callId "${callId}". Use the callId from the PENDING result, or call get_question_replies without callId to collect every late answer.`,
      )
    }
    throw error
  }
  if (view.state === 'settled' && view.answers) {
    const replies = [{ callId, answers: view.answers }]
    return {
      content: [
        {
          type: 'text',
          text: `This question was already answered and its answer collected earlier: ${JSON.stringify({ replies })}`,
        },
      ],
      structuredContent: { replies, alreadyCollected: true },
    }
  }
  if (view.state === 'dropped') {
    const why = typeof view.dropCode === 'string' ? ` (${view.dropCode})` : ''
    return {
      content: [
        {
          type: 'text',
          text: `The question ${callId} was cancelled${why}: it will not be answered. This is NOT an answer and NOT permission; ask again if you still need it.`,
        },
      ],
      structuredContent: { replies: [], cancelled: true },
    }
  }
  return undefined
}

function toItem(q: z.infer<typeof questionShape>): AskUserQuestionItem {
  return {
    id: q.id,
    question: q.question,
    ...(q.header === undefined ? {} : { header: q.header }),
    ...(q.detail === undefined ? {} : { detail: q.detail }),
    ...(q.options === undefined
      ? {}
      : {
          options: q.options.map((o) => ({
            label: o.label,
            ...(o.description === undefined ? {} : { description: o.description }),
          })),
        }),
    ...(q.multi_select === undefined ? {} : { multiSelect: q.multi_select }),
  }
}

function toolError(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] }
}

function errorResult(error: unknown): CallToolResult {
  const uq = asUserQuestionError(error)
  if (uq) return toolError(uq.code, uq.message)
  if (error instanceof HttpError) return toolError(error.code, error.message)
  return toolError('ERROR', (error as Error).message ?? String(error))
}

/** `askbridge mcp`: serve on stdio until stdin closes. */
export async function runMcp(env: Record<string, string | undefined> = process.env): Promise<void> {
  const e = clientEnv(env)
  const timeout = Number(nonEmpty(e.ASKBRIDGE_MCP_TIMEOUT) ?? 50)
  if (!Number.isInteger(timeout) || (timeout !== -1 && (timeout < 1 || timeout > MAX_TIMEOUT_SECONDS))) {
    throw new Error(
      `ASKBRIDGE_MCP_TIMEOUT must be whole seconds from 1 to ${MAX_TIMEOUT_SECONDS}, or -1, got "${e.ASKBRIDGE_MCP_TIMEOUT}"`,
    )
  }
  const client = clientFromEnv(env)
  const server = createMcpServer({
    client,
    agentId: nonEmpty(e.ASKBRIDGE_AGENT_ID) ?? 'mcp',
    defaultTimeoutSeconds: timeout,
  })
  const transport = new StdioServerTransport()
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve()
    process.stdin.once('end', () => resolve())
  })
  await server.connect(transport)
  await closed
  await server.close().catch(() => {})
}
