/** The hook routes' query parameters (`?timeout=`, `?route=`, `?client=`, `?choices=`) and errors. */
import { z } from 'zod'
import { HOOK_CLIENTS, type HookClient } from '../../hooks/dialects.js'
import { HookError } from '../../hooks/errors.js'
import { EXTRA_CHOICES, type ExtraChoice } from '../../hooks/plan.js'
import { parseDuration } from '../../routing/duration.js'
import { HttpError } from '../errors.js'

const routeName = z.string().min(1).max(200)

/** `?timeout=600` (seconds, as in Claude Code's hook settings) or `?timeout=10m`. */
export function timeoutOf(url: URL, fallback: number): number {
  const text = url.searchParams.get('timeout')
  if (text === null) return fallback
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : parseDuration(text)
  if (ms === undefined || !Number.isSafeInteger(ms) || ms < 1000 || ms > 86_400_000) {
    throw new HttpError(
      'BAD_REQUEST',
      'timeout must be seconds (1 to 86400), or a duration such as 90s or 10m',
    )
  }
  return ms
}

export function routeOf(url: URL): string | undefined {
  const text = url.searchParams.get('route')
  if (text === null) return undefined
  const parsed = routeName.safeParse(text)
  if (!parsed.success) throw new HttpError('BAD_REQUEST', 'route must be 1-200 characters')
  return parsed.data
}

/** `?client=codex`: the hook's dialect (default Claude Code). */
export function clientOf(url: URL): HookClient {
  const text = url.searchParams.get('client')
  if (text === null) return 'claude-code'
  if (!(HOOK_CLIENTS as readonly string[]).includes(text)) {
    throw new HttpError('BAD_REQUEST', `client must be one of ${HOOK_CLIENTS.join(', ')}`)
  }
  return text as HookClient
}

/** `?choices=stop,edit`: reviewer choices beyond approve / reject / always. */
export function choicesOf(url: URL): ExtraChoice[] {
  const text = url.searchParams.get('choices')
  if (text === null || text.trim() === '') return []
  const list = text.split(',').map((c) => c.trim())
  const bad = list.find((c) => !(EXTRA_CHOICES as readonly string[]).includes(c))
  if (bad !== undefined) {
    throw new HttpError('BAD_REQUEST', `choices must be among ${EXTRA_CHOICES.join(', ')} (got "${bad}")`)
  }
  return list as ExtraChoice[]
}

/** A hook body askbridge cannot turn into a card: 400 naming what is unsupported. */
export function asHttp(error: unknown): unknown {
  return error instanceof HookError ? new HttpError(error.code, error.message) : error
}
