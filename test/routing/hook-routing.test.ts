/** Routes match Claude Code hook requests by tool name and by a regex over the rendered tool input. */
import { describe, expect, it } from 'vitest'
import { planHook } from '../../src/hooks/claude-code.js'
import type { AnswererRequest } from '../../src/protocol/types.js'
import { RoutesError, routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { fixture } from '../helpers/claude-code.js'

const file = validateRoutes({
  routes: [
    {
      name: 'prod-commands',
      match: { tool: 'Bash', toolInput: 'git push|kubectl .* prod' },
      destinations: [{ platform: 'slack', channel: 'C0123ONCALL' }],
      quorum: 2,
    },
    {
      name: 'github-mcp',
      match: { tool: 'mcp__github__*' },
      destinations: [{ platform: 'discord', channel: '110000000000000003' }],
    },
    { name: 'edits', match: { toolInput: '^/srv/' }, destinations: [{ platform: 'web' }] },
  ],
})
const router = routesRouter(file, [{ platform: 'web' }])

/** The answerer request a hook payload becomes. */
function hookRequest(toolName: string, toolInput: Record<string, unknown>): AnswererRequest {
  const plan = planHook({ ...fixture('pre-tool-use-bash'), tool_name: toolName, tool_input: toolInput })
  if (plan.kind !== 'approval') throw new Error('not an approval')
  return { questions: [plan.question], callId: 'c', signal: new AbortController().signal, tool: plan.tool }
}

describe('routing hook requests', () => {
  it.each([
    ['git push', hookRequest('Bash', { command: 'git push origin main' }), 'prod-commands'],
    [
      'kubectl against prod',
      hookRequest('Bash', { command: 'kubectl -n web apply -f x.yaml --context prod' }),
      'prod-commands',
    ],
    [
      'kubectl against staging',
      hookRequest('Bash', { command: 'kubectl apply --context staging' }),
      'default',
    ],
    [
      'a git push in a Write is not a Bash command',
      hookRequest('Write', { file_path: '/tmp/git push', content: '' }),
      'default',
    ],
    [
      'any tool of the github MCP server',
      hookRequest('mcp__github__create_issue', { title: 'x' }),
      'github-mcp',
    ],
    ['another MCP server', hookRequest('mcp__jira__create_issue', { title: 'x' }), 'default'],
    [
      'an Edit under /srv by its path',
      hookRequest('Edit', { file_path: '/srv/app.ts', old_string: 'a', new_string: 'b' }),
      'edits',
    ],
  ])('%s -> %s', (_name, request, expected) => {
    expect(router.resolve(request).name).toBe(expected)
  })

  it('a question that did not come from a hook never matches tool rules', () => {
    const request: AnswererRequest = {
      questions: [{ id: 'q', question: 'git push?' }],
      callId: 'c',
      signal: new AbortController().signal,
    }
    expect(router.resolve(request).name).toBe('default')
  })

  it('a toolInput that is not a regular expression stops the start, naming the path', () => {
    expect(() =>
      validateRoutes({
        routes: [{ name: 'r', match: { toolInput: 'git (push' }, destinations: [{ platform: 'web' }] }],
      }),
    ).toThrow(RoutesError)
    try {
      validateRoutes({
        routes: [{ name: 'r', match: { toolInput: 'git (push' }, destinations: [{ platform: 'web' }] }],
      })
    } catch (error) {
      expect((error as RoutesError).problems).toEqual([
        'routes[0].match.toolInput: not a valid regular expression',
      ])
    }
  })
})
