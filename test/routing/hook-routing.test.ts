/** Routes match Claude Code hook requests by tool name and by a regex over the rendered tool input. */
import { describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { planHook } from '../../src/hooks/claude-code.js'
import type { AnswererRequest } from '../../src/protocol/types.js'
import { RoutesError, routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { fixture } from '../helpers/claude-code.js'

const file = validateRoutes(
  {
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
  },
  PLATFORMS,
)
const router = routesRouter(file, [{ platform: 'web' }], PLATFORMS)

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

  it("mcpSource matches the source Claude Code reports for an MCP tool's server, not its name", () => {
    const sourced = routesRouter(
      validateRoutes(
        {
          routes: [
            { name: 'managed-mcp', match: { mcpSource: 'managed' }, destinations: [{ platform: 'web' }] },
            { name: 'project-mcp', match: { mcpSource: 'project' }, destinations: [{ platform: 'web' }] },
          ],
        },
        PLATFORMS,
      ),
      [{ platform: 'web' }],
      PLATFORMS,
    )
    const call = (source?: string): AnswererRequest => {
      const plan = planHook({
        ...fixture('pre-tool-use-bash'),
        tool_name: 'mcp__github__create_issue',
        tool_input: { title: 'x' },
        ...(source ? { mcp_server: { name: 'github', source } } : {}),
      })
      if (plan.kind !== 'approval') throw new Error('not an approval')
      return {
        questions: [plan.question],
        callId: 'c',
        signal: new AbortController().signal,
        tool: plan.tool,
      }
    }
    expect(sourced.resolve(call('managed')).name).toBe('managed-mcp')
    expect(sourced.resolve(call('project')).name).toBe('project-mcp')
    // A server that says nothing about its source never matches a source rule.
    expect(sourced.resolve(call()).name).toBe('default')
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
      validateRoutes(
        {
          routes: [{ name: 'r', match: { toolInput: 'git (push' }, destinations: [{ platform: 'web' }] }],
        },
        PLATFORMS,
      ),
    ).toThrow(RoutesError)
    try {
      validateRoutes(
        {
          routes: [{ name: 'r', match: { toolInput: 'git (push' }, destinations: [{ platform: 'web' }] }],
        },
        PLATFORMS,
      )
    } catch (error) {
      expect((error as RoutesError).problems).toEqual([
        'routes[0].match.toolInput: not a valid regular expression',
      ])
    }
  })
})

describe('notices: Notification and Stop, per route', () => {
  const problems = (routes: unknown): string[] => {
    try {
      validateRoutes({ routes }, PLATFORMS)
    } catch (error) {
      expect(error).toBeInstanceOf(RoutesError)
      return (error as RoutesError).problems
    }
    return []
  }
  const web = [{ platform: 'web' }]

  it('a route lists the events it posts; the plan carries them, other routes none', () => {
    const noticed = routesRouter(
      validateRoutes(
        {
          routes: [
            { name: 'watched', match: { agentId: 'claude-code:*' }, destinations: web, notices: ['Stop'] },
            { name: 'rest', destinations: web },
          ],
        },
        PLATFORMS,
      ),
      [],
      PLATFORMS,
    )
    const from = (agent: string): AnswererRequest => ({
      questions: [],
      agent: { id: agent },
      callId: 'n',
      signal: new AbortController().signal,
    })
    expect(noticed.resolve(from('claude-code:abc')).notices).toEqual(['Stop'])
    expect(noticed.resolve(from('deploy-bot')).notices).toBeUndefined()
  })

  it('an unknown event or one listed twice is refused with its exact path', () => {
    expect(problems([{ name: 'r', destinations: web, notices: ['Stop', 'SessionStart'] }])).toEqual([
      'routes[0].notices[1]: each entry must be one of "Notification", "Stop"',
    ])
    expect(problems([{ name: 'r', destinations: web, notices: 'Stop' }])).toEqual([
      'routes[0].notices: Invalid input: expected array, received string',
    ])
    expect(problems([{ name: 'r', destinations: web, notices: ['Stop', 'Notification', 'Stop'] }])).toEqual([
      'routes[0].notices[2]: "Stop" is listed twice',
    ])
    expect(problems([{ name: 'r', destinations: web, notices: [] }])).toEqual([])
  })
})
