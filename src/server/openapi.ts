/**
 * The OpenAPI document of the `/v1` HTTP API, served at `GET /v1/openapi.json` (see
 * docs/http-api.md). Request bodies are the zod schemas the routes parse with, handed in by
 * the route files (routes/openapi.ts); responses are described in one place, as zod schemas
 * (openapi-schemas.ts); the paths are built per resource below. Both kinds of schema become JSON
 * Schema through zod's own `z.toJSONSchema`, so the document cannot drift from the parsers.
 */
import { z } from 'zod'
import { elicitRequestSchema, hookInputSchema } from '../hooks/schemas.js'
import { answerItemSchema, questionsSchema } from '../protocol/schemas.js'
import { MAX_TIMEOUT_MS } from '../protocol/validate.js'
import { RESPONSES } from './openapi-schemas.js'

/** The request bodies the API parses with, as the API hands them in. */
export interface RequestSchemas {
  ask: z.ZodObject
  answer: z.ZodObject
}

type Component = keyof typeof RESPONSES | 'AskRequest' | 'AnswerRequest' | 'ElicitRequest' | 'HookInput'

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' })
  return rest
}

const ref = (name: Component) => ({ $ref: `#/components/schemas/${name}` })
const json = (name: Component, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
})
const errors = { default: json('Error', 'An error: `{error: {name, code, message}}`.') }
const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
})
const path = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } })
const agentQuery = query('agentId', "The call's agent; needed when several agents use the callId.")
const body = (name: Component) => ({ required: true, content: { 'application/json': { schema: ref(name) } } })

/** Build the OpenAPI 3.1 document of the HTTP API. */
export function openApiDocument(requests: RequestSchemas): Record<string, unknown> {
  const schemas: Record<string, unknown> = {
    // The protocol's own checks run after the body parses; the document states them.
    AskRequest: jsonSchema(
      requests.ask.extend({
        questions: questionsSchema.min(1),
        timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().meta({
          description:
            'Wait at most this long, then answer `{pending: true, callId}`; absent: wait until answered.',
        }),
      }),
      'input',
    ),
    AnswerRequest: jsonSchema(requests.answer.extend({ answers: z.array(answerItemSchema) }), 'input'),
    ElicitRequest: jsonSchema(elicitRequestSchema, 'input'),
    HookInput: jsonSchema(hookInputSchema, 'input'),
  }
  for (const [name, schema] of Object.entries(RESPONSES)) schemas[name] = jsonSchema(schema, 'output')
  return {
    openapi: '3.1.0',
    info: {
      title: 'askbridge HTTP API',
      version: '1',
      description: 'Ask people questions in Slack, Discord or the web inbox, and read their answers.',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas,
    },
    security: [{ bearer: [] }, {}],
    paths: {
      ...askPaths(),
      ...questionPaths(),
      ...replyPaths(),
      ...auditPaths(),
      ...hookPaths(),
      ...metaPaths(),
    },
  }
}

type PathItems = Record<string, unknown>

/** `POST /v1/ask`. */
function askPaths(): PathItems {
  return {
    '/v1/ask': {
      post: {
        summary: 'Ask questions; wait until answered, or for `timeoutMs` at most.',
        requestBody: body('AskRequest'),
        responses: { 200: json('AskResult', 'The answers, or pending when the window closed.'), ...errors },
      },
    },
  }
}

/** The calls: the projection, one call, cancelling and answering it. */
function questionPaths(): PathItems {
  return {
    '/v1/questions': {
      get: {
        summary: 'The projection: active calls whole, settled calls paged.',
        parameters: [
          query('agentId', "One agent's calls; absent: every agent's."),
          query('limit', 'Settled calls per page (1-1000, default 100).', { type: 'integer' }),
          query('cursor', "The previous page's `nextCursor`."),
        ],
        responses: { 200: json('ProjectionPage', 'One page.'), ...errors },
      },
    },
    '/v1/questions/{callId}': {
      parameters: [path('callId'), agentQuery],
      get: {
        summary: 'One call: its questions, state, answers, card and posts.',
        responses: { 200: json('Call', 'The call.'), ...errors },
      },
      delete: {
        summary: 'Cancel the call: the waiting ask fails with 410 ASK_CANCELLED.',
        responses: { 200: json('Cancelled', 'Cancelled.'), ...errors },
      },
    },
    '/v1/questions/{callId}/answer': {
      parameters: [path('callId'), agentQuery],
      post: {
        summary: 'Answer a continued call late; the answer becomes a reply queued to its agent.',
        requestBody: body('AnswerRequest'),
        responses: { 200: json('Accepted', 'Whether the answer was taken.'), ...errors },
      },
    },
  }
}

/** An agent's late replies. */
function replyPaths(): PathItems {
  return {
    '/v1/agents/{agentId}/replies': {
      parameters: [path('agentId')],
      get: {
        summary: 'Late replies: JSON, long-polled with `?wait=`, or Server-Sent Events (`reply` events).',
        parameters: [
          query('wait', 'Seconds to wait for a reply when none is queued (0-60).', { type: 'number' }),
        ],
        responses: {
          200: {
            description:
              'The queued replies (JSON), or a stream of `reply` events with `Accept: text/event-stream`.',
            content: {
              'application/json': { schema: ref('Replies') },
              'text/event-stream': { schema: { type: 'string' } },
            },
          },
          ...errors,
        },
      },
    },
    '/v1/agents/{agentId}/replies/{callId}/admit': {
      parameters: [path('agentId'), path('callId')],
      post: {
        summary: 'The agent took the reply: the call settles.',
        responses: { 200: json('Admitted', 'Admitted.'), ...errors },
      },
    },
    '/v1/agents/{agentId}/replies/{callId}': {
      parameters: [path('agentId'), path('callId')],
      delete: {
        summary: 'Discard the reply: the call is answerable again.',
        responses: { 200: json('Discarded', 'Discarded.'), ...errors },
      },
    },
  }
}

/** The audit. */
function auditPaths(): PathItems {
  return {
    '/v1/audit': {
      get: {
        summary: 'The audit: who did what to which call.',
        parameters: [
          query('callId', "One call's entries."),
          query('agentId', "One agent's entries."),
          query('since', 'Entries at or after this: epoch milliseconds or an ISO date.'),
        ],
        responses: { 200: json('Audit', 'The entries, oldest first.'), ...errors },
      },
    },
  }
}

/** Claude Code hooks and MCP elicitations. */
function hookPaths(): PathItems {
  return {
    '/v1/hooks/claude-code': {
      post: {
        summary: 'A Claude Code hook (PermissionRequest, PreToolUse, Elicitation, Notification, Stop).',
        parameters: [
          query('timeout', 'Answer "no decision" after this: seconds (1-86400) or a duration such as 10m.'),
          query('route', 'A route from the routes file.'),
        ],
        requestBody: body('HookInput'),
        responses: { 200: json('HookOutput', "The hook's answer; `{}` is no decision."), ...errors },
      },
    },
    '/v1/elicit': {
      post: {
        summary: 'An MCP elicitation (form mode) answered by people.',
        requestBody: body('ElicitRequest'),
        responses: { 200: json('ElicitResult', 'accept with content, decline or cancel.'), ...errors },
      },
    },
  }
}

/** This document and liveness. */
function metaPaths(): PathItems {
  return {
    '/v1/openapi.json': {
      get: {
        summary: 'This document.',
        responses: { 200: json('OpenApi', 'The OpenAPI document.'), ...errors },
      },
    },
    '/healthz': {
      get: {
        summary: 'Liveness; needs no token.',
        security: [{}],
        responses: {
          200: json('Health', 'Serving.'),
          503: json('Health', 'Shutting down (`ok: false`).'),
        },
      },
    },
  }
}
