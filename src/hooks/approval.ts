/** A tool call's permission (PreToolUse, PermissionRequest) as an approval card: the plain one, or the choices card. */

import type { AskUserQuestionItem } from '../protocol/types.js'
import type { Dialect } from './dialects.js'
import { APPROVAL, CHOICES, type Choice, type ExtraChoice, type HookPlan } from './plan.js'
import { type GrantableUpdate, grantableUpdateSchema, type PermissionUpdate } from './schemas.js'
import { type RenderedTool, renderTool, type WholeInput } from './tool.js'

/** The most of a suggestion an "Always approve: …" label names (the rest is in its description). */
const LABEL_CHARS = 200
const DESCRIPTION_CHARS = 2_000

const DESTINATIONS: Record<string, string> = {
  session: 'for this session',
  localSettings: 'in .claude/settings.local.json',
  projectSettings: 'in .claude/settings.json',
  userSettings: 'in ~/.claude/settings.json',
}

/** "Bash(npm run *) in .claude/settings.local.json", for the card. */
function describeUpdate(u: GrantableUpdate): string {
  const where = DESTINATIONS[u.destination] ?? `in ${u.destination}`
  if (u.type === 'setMode') return `switch to ${u.mode} mode ${where}`
  if ('directories' in u) {
    return `${u.type === 'addDirectories' ? 'add' : 'remove'} ${u.directories.join(', ')} ${where}`
  }
  const rules = u.rules.map((r) => (r.ruleContent ? `${r.toolName}(${r.ruleContent})` : r.toolName))
  const verb = u.type === 'replaceRules' ? 'replace with ' : u.type === 'removeRules' ? 'remove ' : ''
  return `${verb}${u.behavior} ${rules.join(', ')} ${where}`
}

/** The tool input field "Edit, then allow" replaces, for the tools where a person can edit one. */
function editField(toolName: string, input: Record<string, unknown>): 'command' | 'new_string' | undefined {
  if (toolName === 'Bash' && typeof input.command === 'string') return 'command'
  if (toolName === 'Edit' && typeof input.new_string === 'string') return 'new_string'
  return undefined
}

/** The permission hook's input, as far as the approval reads it. */
export interface ApprovalInput {
  hook_event_name: 'PermissionRequest' | 'PreToolUse'
  tool_name: string
  tool_input: Record<string, unknown>
  permission_suggestions?: PermissionUpdate[] | undefined
  mcp_server?: { source: string } | undefined
}

type Approval = Extract<HookPlan, { kind: 'approval' }>
/** What both cards share: the plan without its choices and question, and the question's head. */
type Common = Omit<Approval, 'choices' | 'question' | 'edit'>
type Head = Pick<AskUserQuestionItem, 'id' | 'header' | 'question'>

/** Only suggestions that allow, of a type this version knows; the rest are passed over. */
function grantableSuggestions(input: ApprovalInput, dialect: Dialect): GrantableUpdate[] {
  if (input.hook_event_name !== 'PermissionRequest' || !dialect.permissionExtras) return []
  return (input.permission_suggestions ?? []).flatMap((s) => {
    const known = grantableUpdateSchema.safeParse(s)
    // The parsed entry has only the documented fields (an absent ruleContent stays absent).
    return known.success && (!('behavior' in known.data) || known.data.behavior === 'allow')
      ? [known.data as GrantableUpdate]
      : []
  })
}

export function planApproval(
  input: ApprovalInput,
  sessionId: string,
  dialect: Dialect,
  whole: WholeInput | undefined,
  extra: readonly ExtraChoice[],
): HookPlan {
  const event = input.hook_event_name
  const rendered = renderTool(input.tool_name, input.tool_input, whole ? { whole } : {})
  const extras = event === 'PermissionRequest' ? dialect.permissionExtras : true
  const suggestions = grantableSuggestions(input, dialect)
  const stop = extras && extra.includes('stop')
  const canEdit = event === 'PermissionRequest' ? dialect.permissionExtras : dialect.preToolUseEdit
  const edit = canEdit && extra.includes('edit') ? editField(input.tool_name, input.tool_input) : undefined
  const only = suggestions.length === 1 ? suggestions[0] : undefined
  // One suggestion that is not a mode change: the plain approval card, its "Always approve"
  // grants exactly that one. Anything more is a list the reviewer picks one line from.
  const plain =
    !stop && !edit && (suggestions.length === 0 || (only !== undefined && only.type !== 'setMode'))
  const head: Head = {
    id: 'permission',
    header: dialect.name,
    question: `Allow ${dialect.name} to use ${rendered.subject}?`,
  }
  const common: Common = {
    kind: 'approval',
    event,
    client: dialect.client,
    sessionId,
    tool: {
      name: input.tool_name,
      input: rendered.text,
      ...(input.mcp_server ? { mcpSource: input.mcp_server.source } : {}),
    },
    toolInput: input.tool_input,
  }
  if (plain) return plainCard(common, head, rendered, only)
  return choicesCard(common, head, rendered, dialect, suggestions, stop, edit)
}

/** Approve / Reject, and "Always approve" when there is one suggestion to grant. */
function plainCard(
  common: Common,
  head: Head,
  rendered: RenderedTool,
  only: GrantableUpdate | undefined,
): HookPlan {
  const alwaysNote = only ? `\n\n**${APPROVAL.always}** also remembers: ${describeUpdate(only)}.` : ''
  const choices: Record<string, Choice> = {
    [APPROVAL.approve]: { do: 'allow' },
    [APPROVAL.reject]: { do: 'deny' },
    ...(only ? { [APPROVAL.always]: { do: 'always', update: only } } : {}),
  }
  return {
    ...common,
    choices,
    question: {
      ...head,
      detail: `${rendered.detail}${alwaysNote}`,
      options: Object.keys(choices).map((label) => ({ label })),
      intent: {
        kind: 'approval',
        approve: APPROVAL.approve,
        reject: APPROVAL.reject,
        ...(only ? { always: APPROVAL.always } : {}),
        subject: { name: rendered.subject },
      },
    },
  }
}

/** A described list to pick one line from: approve, reject, stop, one "Always approve: …" per suggestion, Other…. */
function choicesCard(
  common: Common,
  head: Head,
  rendered: RenderedTool,
  dialect: Dialect,
  suggestions: GrantableUpdate[],
  stop: boolean,
  edit: 'command' | 'new_string' | undefined,
): HookPlan {
  const choices: Record<string, Choice> = {
    [APPROVAL.approve]: { do: 'allow' },
    [APPROVAL.reject]: { do: 'deny' },
  }
  const descriptions: Record<string, string> = {
    [APPROVAL.approve]: 'Run it this once.',
    [APPROVAL.reject]: `Refuse it; ${dialect.name} is told and carries on.`,
  }
  if (stop) {
    choices[CHOICES.stop] = { do: 'stop' }
    descriptions[CHOICES.stop] = `Refuse it and stop ${dialect.name} until someone resumes it.`
  }
  for (const s of suggestions) {
    // A label is the answer value: short enough for any button, distinct from every other one.
    const text = describeUpdate(s)
    const named = `${CHOICES.alwaysPrefix}${text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text}`
    let label = named
    for (let n = 2; Object.hasOwn(choices, label); n++) label = `${named} (${n})`
    choices[label] = { do: 'always', update: s }
    descriptions[label] =
      text.length > LABEL_CHARS
        ? `Run it, and remember only this: ${text.slice(0, DESCRIPTION_CHARS)}`
        : 'Run it, and remember only this.'
  }
  const otherNote = edit
    ? `**Other…**: type the ${edit === 'command' ? 'command' : 'new text'} to use instead, and it runs with your edit (Edit, then allow).`
    : '**Other…**: refuse it with the reason you type.'
  return {
    ...common,
    choices,
    ...(edit ? { edit } : {}),
    question: {
      ...head,
      detail: `${rendered.detail}\n\n${otherNote}`,
      options: Object.keys(choices).map((label) => ({ label, description: descriptions[label] as string })),
    },
  }
}
