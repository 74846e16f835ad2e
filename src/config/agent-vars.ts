/** The variables of agents and routing: the routes file, where clients find the bridge, MCP and hook waits, the MCP agent id, PagerDuty. */
import { z } from 'zod'
import { parseDuration } from '../routing/duration.js'
import { optionalText, seconds, url } from './values.js'

export const agentVars = {
  ASKBRIDGE_ROUTES: optionalText.meta({
    description: 'Routes file (JSON): destinations, responders, quorum, escalation.',
    unset: 'one default route',
  }),
  ASKBRIDGE_URL: url('the bridge')
    .transform((v) => v ?? 'http://127.0.0.1:8787')
    .meta({ description: 'Where the clients (`askbridge ask`, `mcp`, `audit`, `hook`) find the bridge.' }),
  ASKBRIDGE_MCP_TIMEOUT: seconds(50).meta({
    description:
      'Seconds an MCP `ask_user_question` call waits before returning "pending" (`-1`: until answered). Many MCP clients abort tool calls after about 60 s.',
  }),
  /** Hook requests that name no timeout answer "no decision" before this (milliseconds after parsing); Claude Code's own default. */
  ASKBRIDGE_HOOK_TIMEOUT: optionalText
    .transform((v, ctx) => {
      if (v === undefined) return 600_000
      const ms = /^\d+$/.test(v) ? Number(v) * 1000 : parseDuration(v)
      if (ms === undefined || ms < 1000) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a duration such as 55s or 10m (or seconds), got "${v}"`,
        })
        return z.NEVER
      }
      return ms
    })
    .meta({
      description:
        'Claude Code hooks that name no timeout (`?timeout=`, `--timeout`) answer "no decision" before this (600 s, as the default of Claude Code): PreToolUse then answers `ASKBRIDGE_HOOK_TIMEOUT_DECISION`, PermissionRequest `{}` (`90s`, `10m`, or seconds).',
      unit: 'ms',
    }),
  /** What a Claude Code PreToolUse hook answers when nobody decides in time: ask (its own prompt) or deny. */
  ASKBRIDGE_HOOK_TIMEOUT_DECISION: optionalText
    .pipe(z.enum(['ask', 'deny']).optional())
    .transform((v) => v ?? 'ask')
    .meta({
      description:
        'What a PreToolUse hook answers when nobody decides in time: `ask` (Claude Code shows its own prompt) or `deny`. A Codex PreToolUse always denies (Codex has no ask).',
    }),
  ASKBRIDGE_AGENT_ID: optionalText
    .refine((v) => v === undefined || /^[A-Za-z0-9_.:-]{1,64}$/.test(v), {
      message: 'must be 1-64 characters of A-Z a-z 0-9 _ . : -',
    })
    .meta({
      description:
        'The agent id `askbridge mcp` asks as (1-64 characters of `A-Z a-z 0-9 _ . : -`); late replies are queued to it.',
      unset: '`mcp`',
    }),
  PAGERDUTY_API_TOKEN: optionalText.meta({
    description:
      'PagerDuty REST API key, needed when a route names a schedule or escalation policy (`oncall`).',
  }),
  PAGERDUTY_API_URL: url('the PagerDuty REST API').meta({
    description: 'PagerDuty REST base.',
    unset: '`https://api.pagerduty.com`',
  }),
}
