/** The `/v1` API's query parameters: paging, the agent a call belongs to, and which call a route names. */
import { z } from 'zod'
import { CALL_ID_PATTERN } from '../card/codec.js'
import type { UserQuestionService } from '../service/service.js'
import type { CallKey } from '../store/types.js'
import { HttpError } from './errors.js'

/** How many settled calls `GET /v1/questions` returns without `?limit=`, and at most. */
export const DEFAULT_PAGE = 100
export const MAX_PAGE = 1000

const cursorSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,40}$/)
  .transform((c) => /^s(\d{1,15})$/.exec(Buffer.from(c, 'base64url').toString('utf8'))?.[1])
  .pipe(z.string())
  .transform(Number)

/** An opaque cursor for the settled list: where the next page starts. */
export function encodeCursor(settledSeq: number): string {
  return Buffer.from(`s${settledSeq}`, 'utf8').toString('base64url')
}

/**
 * A paged list's `?limit=` (1 to `maxLimit`, default `defaultLimit`) and `?cursor=` (the previous
 * page's `nextCursor`, read with `cursor`). Anything else is a 400 BAD_REQUEST that says why.
 */
export function pageQuery<C>(
  url: URL,
  options: { defaultLimit: number; maxLimit: number; cursor: z.ZodType<C> },
): { limit: number; cursor?: C } {
  const rawLimit = url.searchParams.get('limit')
  const limit =
    rawLimit === null
      ? { success: true as const, data: options.defaultLimit }
      : z.coerce.number().int().min(1).max(options.maxLimit).safeParse(rawLimit)
  if (!limit.success)
    throw new HttpError('BAD_REQUEST', `limit must be a whole number from 1 to ${options.maxLimit}`)
  const rawCursor = url.searchParams.get('cursor')
  if (rawCursor === null) return { limit: limit.data }
  const cursor = options.cursor.safeParse(rawCursor)
  if (!cursor.success)
    throw new HttpError('BAD_REQUEST', 'cursor is not one this server gave out (use nextCursor as is)')
  return { limit: limit.data, cursor: cursor.data }
}

/** `GET /v1/questions`: `?limit=` (1-1000, default 100) and `?cursor=`. */
export function pageParams(url: URL): { limit: number; afterSeq?: number } {
  const { limit, cursor } = pageQuery(url, {
    defaultLimit: DEFAULT_PAGE,
    maxLimit: MAX_PAGE,
    cursor: cursorSchema,
  })
  return cursor === undefined ? { limit } : { limit, afterSeq: cursor }
}

/** An optional agent as spread-able options. */
export function optionalAgent(agentId: string | undefined): { agentId?: string } {
  return agentId === undefined ? {} : { agentId }
}

/** The `?agentId=` query parameter, validated like every id (undefined when absent). */
export function agentParam(url: URL): string | undefined {
  const agentId = url.searchParams.get('agentId')
  if (agentId === null) return undefined
  if (!CALL_ID_PATTERN.test(agentId)) {
    throw new HttpError('BAD_REQUEST', 'agentId must be 1-64 characters of A-Z a-z 0-9 _ . : -')
  }
  return agentId
}

/**
 * The call a route names. callIds are unique per agent only: with an agent named, that agent's
 * call; without, the one agent's call with this callId (the `default` agent when there is none),
 * and 409 AMBIGUOUS_CALL when several agents have one. Never picks one silently.
 */
export async function resolveCall(
  service: Pick<UserQuestionService, 'callsNamed'>,
  callId: string,
  agentId: string | undefined,
): Promise<CallKey> {
  if (agentId !== undefined) return { agentId, callId }
  const found = await service.callsNamed(callId)
  if (found.length > 1) {
    const agents = found.map((c) => `"${c.agentId}"`).join(', ')
    throw new HttpError(
      'AMBIGUOUS_CALL',
      `callId "${callId}" names calls of several agents (${agents}); say which with agentId`,
    )
  }
  return found[0] ?? { agentId: 'default', callId }
}
