/** Hook payloads -> question batches -> exact hook output JSON (pure functions). */
import { describe, expect, it } from 'vitest'
import { planHook } from '../../src/hooks/claude-code.js'
import { hookOutput } from '../../src/hooks/output.js'
import { APPROVAL } from '../../src/hooks/plan.js'
import { codeBlock, renderTool, TOOL_PREVIEW_CHARS } from '../../src/hooks/tool.js'
import { checkIntents, checkQuestions } from '../../src/protocol/validate.js'
import { fixture } from '../helpers/claude-code.js'

const answered = (label: string, extra: { by?: string; reason?: string } = {}) => ({
  kind: 'answered' as const,
  answers: [{ id: 'permission', selected: [label] }],
  ...extra,
})

describe('PermissionRequest', () => {
  const plan = planHook(fixture('permission-request-bash'))
  if (plan.kind !== 'approval') throw new Error('not an approval')

  it('becomes one valid approval: the Bash command in a code block with its description', () => {
    checkQuestions([plan.question])
    checkIntents([plan.question], false)
    expect(plan.question.question).toBe('Allow Claude Code to use Bash?')
    expect(plan.question.options?.map((o) => o.label)).toEqual(['Approve', 'Reject', 'Always approve'])
    expect(plan.question.detail).toBe(
      'Remove node_modules directory\n\n```sh\nrm -rf node_modules\n```\n\n**Always approve** also remembers: allow Bash(rm -rf node_modules) in .claude/settings.local.json.',
    )
    expect(plan.tool).toEqual({ name: 'Bash', input: 'rm -rf node_modules' })
  })

  it('Approve -> allow; Reject -> deny with the reason; Always -> allow plus the suggested rule', () => {
    expect(hookOutput(plan, answered(APPROVAL.approve, { by: 'Grace' }))).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    })
    expect(hookOutput(plan, answered(APPROVAL.reject, { by: 'Grace', reason: 'not on a Friday' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: 'not on a Friday' },
      },
    })
    expect(hookOutput(plan, answered(APPROVAL.reject, { by: 'Grace' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: 'Rejected by Grace in askbridge.' },
      },
    })
    expect(hookOutput(plan, answered(APPROVAL.always))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: {
          behavior: 'allow',
          updatedPermissions: [
            {
              type: 'addRules',
              rules: [{ toolName: 'Bash', ruleContent: 'rm -rf node_modules' }],
              behavior: 'allow',
              destination: 'localSettings',
            },
          ],
        },
      },
    })
  })

  it('no decision and cancel are {}: Claude Code shows its own prompt', () => {
    expect(hookOutput(plan, { kind: 'no-decision' })).toEqual({})
    expect(hookOutput(plan, { kind: 'cancelled' })).toEqual({})
  })

  it('without suggestions there is no "Always approve"; an Edit renders as a diff', () => {
    const edit = planHook(fixture('permission-request-edit'))
    if (edit.kind !== 'approval') throw new Error('not an approval')
    expect(edit.question.options?.map((o) => o.label)).toEqual(['Approve', 'Reject'])
    expect(edit.question.detail).toBe(
      'Edit `/Users/dev/demo/src/config.ts`\n\n```diff\n- export const retries = 3\n+ export const retries = 5\n```',
    )
  })
})

describe('PreToolUse', () => {
  const plan = planHook(fixture('pre-tool-use-bash'))
  it('answers permissionDecision with a reason', () => {
    expect(hookOutput(plan, answered(APPROVAL.approve, { by: 'Linus' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'Approved by Linus in askbridge.',
      },
    })
    expect(hookOutput(plan, answered(APPROVAL.reject, { reason: 'use the release pipeline' }))).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'use the release pipeline',
      },
    })
  })

  it('fails closed: nobody deciding answers "ask" (or "deny" when configured), never {} or allow', () => {
    const ask = {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: 'Nobody decided in askbridge in time; asking here instead.',
      },
    }
    expect(hookOutput(plan, { kind: 'no-decision' })).toEqual(ask)
    expect(hookOutput(plan, { kind: 'cancelled' })).toEqual(ask)
    // An answer that names no option of the card decides nothing either.
    expect(hookOutput(plan, answered('Maybe'))).toEqual(ask)
    expect(hookOutput(plan, { kind: 'no-decision' }, { timeoutDecision: 'deny' })).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Nobody decided in askbridge in time; the call is refused.',
      },
    })
  })
})

describe('Elicitation', () => {
  const plan = planHook(fixture('elicitation-form'))
  if (plan.kind !== 'form') throw new Error('not a form')
  it('one question per property (the card adds Submit and Decline)', () => {
    checkQuestions(plan.form.questions)
    expect(plan.form.questions.map((q) => q.id)).toEqual(['environment', 'notify', 'contact'])
  })
  it('accept with typed content, decline, cancel, and no decision on timeout', () => {
    expect(
      hookOutput(plan, {
        kind: 'answered',
        answers: [
          { id: 'environment', selected: ['Production'] },
          { id: 'notify', selected: ['Yes'] },
          { id: 'contact', selected: [] },
        ],
      }),
    ).toEqual({
      hookSpecificOutput: {
        hookEventName: 'Elicitation',
        action: 'accept',
        content: { environment: 'prod', notify: true },
      },
    })
    // Decline leaves every field unanswered.
    const declined = ['environment', 'notify', 'contact'].map((id) => ({ id, selected: [] }))
    expect(hookOutput(plan, { kind: 'answered', answers: declined })).toEqual({
      hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' },
    })
    expect(hookOutput(plan, { kind: 'cancelled' })).toEqual({
      hookSpecificOutput: { hookEventName: 'Elicitation', action: 'cancel' },
    })
    expect(hookOutput(plan, { kind: 'no-decision' })).toEqual({})
  })
})

describe('bad hook requests are refused by name', () => {
  it('an unknown event', () => {
    expect(() => planHook({ session_id: 's', hook_event_name: 'SessionStart' })).toThrow(
      'hook_event_name "SessionStart" is not supported (askbridge handles PermissionRequest, PreToolUse, Elicitation, ElicitationResult, Notification, Stop)',
    )
  })
  it('a malformed known event', () => {
    expect(() => planHook({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'Bash' })).toThrow(
      /malformed PreToolUse hook: tool_input/,
    )
  })
  it('a URL-mode elicitation', () => {
    expect(() => planHook({ ...fixture('elicitation-form'), mode: 'url', url: 'https://x' })).toThrow(
      /URL-mode/,
    )
  })
})

describe('tool input for a person', () => {
  it('a Write shows its path and first lines', () => {
    const content = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')
    const r = renderTool('Write', { file_path: '/repo/a.ts', content })
    expect(r.detail).toContain('Write `/repo/a.ts` (30 lines)')
    expect(r.detail).toContain('```ts\nline 1\n')
    expect(r.detail).toContain('line 20\n```')
    expect(r.detail).not.toContain('line 21\n')
    expect(r.detail).toContain('10 more lines (30 in all)')
  })
  it('a WebFetch shows its URL; an MCP tool names its server', () => {
    expect(renderTool('WebFetch', { url: 'https://example.com/a', prompt: 'summarise' }).detail).toContain(
      'Fetch <https://example.com/a>',
    )
    const mcp = renderTool('mcp__github__create_issue', { title: 'x' })
    expect(mcp.subject).toBe('create_issue (MCP server github)')
    expect(mcp.detail).toContain('Tool `create_issue` of the MCP server `github`')
  })
  it('backticks in a command cannot close its code block', () => {
    expect(codeBlock('echo ```x```')).toBe('````\necho ```x```\n````')
  })
  it('a huge input is cut at the preview limit and says how much is left', () => {
    const at = renderTool('Bash', { command: 'x'.repeat(TOOL_PREVIEW_CHARS) })
    expect(at.detail).not.toContain('more characters')
    const past = renderTool('Bash', { command: 'x'.repeat(TOOL_PREVIEW_CHARS + 1) })
    expect(past.detail).toContain('1 more characters not shown')
    const huge = renderTool('Bash', { command: 'y'.repeat(500_000) })
    expect(huge.detail.length).toBeLessThan(TOOL_PREVIEW_CHARS + 300)
    expect(huge.text.length).toBe(500_000)
  })
  it('a cut input links to its whole text in the inbox when the public URL is known, else names the path', () => {
    const whole = { callId: 'hook-1', publicUrl: 'https://askbridge.example.com' }
    const command = (n: number) => ({ command: 'x'.repeat(n) })
    expect(renderTool('Bash', command(TOOL_PREVIEW_CHARS), { whole }).detail).not.toContain('inbox')
    expect(renderTool('Bash', command(TOOL_PREVIEW_CHARS + 1), { whole }).detail).toContain(
      '_… 1 more characters not shown; [full text in the inbox](https://askbridge.example.com/inbox/tool/hook-1)._',
    )
    const noUrl = renderTool('Bash', command(TOOL_PREVIEW_CHARS + 1), { whole: { callId: 'hook-1' } })
    expect(noUrl.detail).toContain(
      '1 more characters not shown; full text in the inbox at `/inbox/tool/hook-1`._',
    )
    expect(noUrl.detail).not.toContain('](')
    const lines = Array.from({ length: 25 }, (_, i) => `line ${i + 1}`).join('\n')
    expect(renderTool('Write', { file_path: '/a.ts', content: lines }, { whole }).detail).toContain(
      '5 more lines (25 in all); [full text in the inbox](https://askbridge.example.com/inbox/tool/hook-1)._',
    )
    const long = { ...fixture('permission-request-bash'), tool_input: command(TOOL_PREVIEW_CHARS + 1) }
    const plan = planHook(long, whole)
    if (plan.kind !== 'approval') throw new Error('not an approval')
    expect(plan.question.detail).toContain('(https://askbridge.example.com/inbox/tool/hook-1)')
  })
  it('the whole input renders uncut for the inbox page', () => {
    const full = renderTool('Bash', { command: 'z'.repeat(400_000) }, { full: true })
    expect(full.detail).toBe(`\`\`\`sh\n${'z'.repeat(400_000)}\n\`\`\``)
    const lines = Array.from({ length: 25 }, (_, i) => `line ${i + 1}`).join('\n')
    expect(renderTool('Write', { file_path: '/a.ts', content: lines }, { full: true }).detail).toContain(
      'line 25',
    )
  })
})

describe('cards askbridge builds from Claude Code tools are valid protocol batches', () => {
  it('AskUserQuestion: one card, the questions with headers, descriptions and multiSelect', () => {
    const plan = planHook(fixture('pre-tool-use-ask-user-question'))
    if (plan.kind !== 'questions') throw new Error('not questions')
    checkQuestions(plan.questions)
    checkIntents(plan.questions, false)
    expect(plan.questions.map((q) => [q.id, q.header, q.multiSelect ?? false])).toEqual([
      ['q1', 'Database', false],
      ['q2', 'Features', true],
      ['q3', 'Name', false],
    ])
  })

  it('AskUserQuestion: a skipped question is left out of answers; all skipped is a deny', () => {
    const plan = planHook(fixture('pre-tool-use-ask-user-question'))
    const out = hookOutput(plan, {
      kind: 'answered',
      answers: [
        { id: 'q1', selected: ['SQLite'] },
        { id: 'q2', selected: ['Logging'], custom: 'Tracing too' },
        { id: 'q3', selected: [] },
      ],
    })
    expect(
      (out.hookSpecificOutput as { updatedInput?: { answers?: unknown } } | undefined)?.updatedInput?.answers,
    ).toEqual({
      'Which database should the service use?': 'SQLite',
      'Which features do you want to enable?': 'Logging, Tracing too',
    })
    expect(
      hookOutput(plan, {
        kind: 'answered',
        answers: ['q1', 'q2', 'q3'].map((id) => ({ id, selected: [] })),
      }),
    ).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'The questions were declined in askbridge.',
      },
    })
  })

  it('ExitPlanMode: a plan review whose detail is the plan', () => {
    const plan = planHook(fixture('pre-tool-use-exit-plan-mode'))
    if (plan.kind !== 'plan') throw new Error('not a plan')
    checkQuestions([plan.question])
    checkIntents([plan.question], false)
    expect(plan.question.intent).toEqual({ kind: 'plan-review', approve: 'Approve' })
    expect(plan.question.detail).toBe(
      (fixture('pre-tool-use-exit-plan-mode').tool_input as { plan: string }).plan,
    )
  })

  it('a lone mode change is offered only by name; an unknown suggestion type is passed over', () => {
    const payload = fixture('permission-request-bash')
    payload.permission_suggestions = [
      { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
      { type: 'addSandboxRules', rules: [], destination: 'session' },
    ]
    const plan = planHook(payload)
    if (plan.kind !== 'approval') throw new Error('not an approval')
    checkQuestions([plan.question])
    expect(plan.question.intent).toBeUndefined()
    expect(plan.question.options?.map((o) => o.label)).toEqual([
      'Approve',
      'Reject',
      'Always approve: switch to acceptEdits mode for this session',
    ])
    // Plain Approve grants nothing permanent.
    expect(hookOutput(plan, answered('Approve'))).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    })
  })

  it('Codex: no "Always approve", no stop or edit on PermissionRequest; never ask', () => {
    const payload = fixture('permission-request-bash')
    const plan = planHook(payload, undefined, { client: 'codex', choices: ['stop', 'edit'] })
    if (plan.kind !== 'approval') throw new Error('not an approval')
    expect(plan.question.options?.map((o) => o.label)).toEqual(['Approve', 'Reject'])
    const pre = planHook(fixture('pre-tool-use-bash'), undefined, { client: 'codex' })
    expect(hookOutput(pre, { kind: 'no-decision' })).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Nobody decided in askbridge in time; the call is refused.',
      },
    })
  })
})

describe('a suggestion of any size', () => {
  it('names a long rule in a short label, the whole rule in its description; an answer naming no option decides nothing', () => {
    const payload = fixture('permission-request-suggestions')
    const long = 'x'.repeat(5_000)
    payload.permission_suggestions = [
      {
        type: 'addRules',
        rules: [{ toolName: 'Bash', ruleContent: long }],
        behavior: 'allow',
        destination: 'session',
      },
      {
        type: 'addRules',
        rules: [{ toolName: 'Bash', ruleContent: `${long}y` }],
        behavior: 'allow',
        destination: 'session',
      },
    ]
    const plan = planHook(payload)
    if (plan.kind !== 'approval') throw new Error('not an approval')
    checkQuestions([plan.question])
    const labels = plan.question.options?.map((o) => o.label) ?? []
    expect(labels).toHaveLength(4)
    expect(new Set(labels).size).toBe(4)
    expect(Math.max(...labels.map((l) => l.length))).toBeLessThanOrEqual(220)
    expect(labels[3]?.endsWith('… (2)')).toBe(true)
    expect(hookOutput(plan, answered('toString'))).toEqual({})
  })
})
