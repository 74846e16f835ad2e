/**
 * The hook dialects askbridge speaks: Claude Code's and OpenAI Codex's. Both send the same event
 * names and nearly the same fields, and read nearly the same answers; every difference lives
 * here, so the one code path (plan, ask, answer) never asks which client it serves.
 *
 * Codex's hook schemas (openai/codex, codex-rs/hooks/schema/generated/):
 * - pre-tool-use.command.output.schema.json: `permissionDecision` allow | deny | ask, but a call
 *   answered "ask" still runs, so askbridge never answers "ask" to Codex: no decision is deny.
 * - permission-request.command.output.schema.json: `decision.updatedInput` and
 *   `decision.interrupt` are "reserved" and make the hook fail closed; `updatedPermissions` only
 *   takes Codex's own `prefixRule` rules. askbridge offers none of them to Codex.
 */
import type { HookOutput, PreToolUseDecision } from './schemas.js'

export const HOOK_CLIENTS = ['claude-code', 'codex'] as const
export type HookClient = (typeof HOOK_CLIENTS)[number]

/** What PreToolUse answers when nobody decides in time (ASKBRIDGE_HOOK_TIMEOUT_DECISION). */
export type TimeoutDecision = 'ask' | 'deny'

export interface Dialect {
  client: HookClient
  /** Shown on cards: "Allow Claude Code to use Bash?" */
  name: string
  /** The agent id prefix of its sessions: `claude-code:SESSION`, `codex:SESSION`. */
  agentPrefix: string
  /** PermissionRequest may answer updatedInput, updatedPermissions and interrupt. */
  permissionExtras: boolean
  /** PreToolUse may answer updatedInput. */
  preToolUseEdit: boolean
  /** The PreToolUse decision when nobody decided: what the configuration asks, if the client can honour it. */
  noDecision: (configured: TimeoutDecision) => TimeoutDecision
  /** The last word on an answer: anything the client cannot take is turned into a refusal. */
  translate: (output: HookOutput) => HookOutput
}

const claudeCode: Dialect = {
  client: 'claude-code',
  name: 'Claude Code',
  agentPrefix: 'claude-code',
  permissionExtras: true,
  preToolUseEdit: true,
  noDecision: (configured) => configured,
  translate: (output) => output,
}

const CODEX_CANNOT = 'askbridge cannot give Codex this answer, so it refuses the call'

const codex: Dialect = {
  client: 'codex',
  name: 'Codex',
  agentPrefix: 'codex',
  permissionExtras: false,
  preToolUseEdit: false,
  // Codex runs a call answered "ask": only deny keeps it from running.
  noDecision: () => 'deny',
  translate: (output) => {
    const specific = output.hookSpecificOutput
    if (specific?.hookEventName === 'PreToolUse') {
      const { updatedInput: _edit, ...rest } = specific
      const decision: PreToolUseDecision =
        specific.permissionDecision === 'ask' ||
        (_edit !== undefined && specific.permissionDecision === 'allow')
          ? 'deny'
          : specific.permissionDecision
      const reason = decision === specific.permissionDecision ? rest.permissionDecisionReason : CODEX_CANNOT
      return {
        ...output,
        hookSpecificOutput: { ...rest, permissionDecision: decision, permissionDecisionReason: reason },
      }
    }
    if (specific?.hookEventName === 'PermissionRequest') {
      const d = specific.decision
      if (d.behavior === 'deny') {
        const { interrupt: _stop, ...deny } = d
        return { ...output, hookSpecificOutput: { ...specific, decision: deny } }
      }
      if (d.updatedInput !== undefined) {
        return {
          hookSpecificOutput: {
            hookEventName: 'PermissionRequest',
            decision: { behavior: 'deny', message: CODEX_CANNOT },
          },
        }
      }
      return {
        ...output,
        hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
      }
    }
    return output
  },
}

export const DIALECTS: Record<HookClient, Dialect> = { 'claude-code': claudeCode, codex }
