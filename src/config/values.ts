/** Zod building blocks for environment variables: optional text, URLs, ports, seconds, counts, retention periods. */
import { z } from 'zod'
import { parseDuration } from '../routing/duration.js'

/** An optional variable: trimmed, and unset when empty. */
export const optionalText = z
  .string()
  .transform((v) => v.trim())
  .optional()
  .transform((v) => (v === '' ? undefined : v))

/** An optional http(s) URL variable; the message names what it is for. */
export const url = (what: string) =>
  optionalText.refine((v) => v === undefined || /^https?:\/\/[^\s]+$/.test(v), {
    message: `must be an http(s) URL for ${what}`,
  })

export const port = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return 8787
    const n = Number(v)
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      ctx.addIssue({ code: 'custom', message: `must be a port number 0-65535, got "${v}"` })
      return z.NEVER
    }
    return n
  })

export const seconds = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback
      const n = Number(v)
      if (!Number.isInteger(n) || (n <= 0 && n !== -1)) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number of seconds (or -1), got "${v}"` })
        return z.NEVER
      }
      return n
    })

/** A retention period in ms: a duration such as `30d`, or `0` to keep everything. */
export const retention = (fallback: number) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return fallback
    if (/^0+$/.test(v)) return 0
    const ms = parseDuration(v)
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration such as 30d, 12h or 90m, or 0 to keep everything, got "${v}"`,
      })
      return z.NEVER
    }
    return ms
  })

/** A whole number, 1 or more, of `what`; `fallback` when unset. */
export const count = (fallback: number, what: string) =>
  optionalText.transform((v, ctx) => {
    if (v === undefined) return fallback
    const n = Number(v)
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number of ${what} (1 or more), got "${v}"` })
      return z.NEVER
    }
    return n
  })
