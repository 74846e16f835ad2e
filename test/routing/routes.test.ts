import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import type { Agent, AnswererRequest, AskUserQuestionItem } from '../../src/protocol/types.js'
import { parseDuration } from '../../src/routing/duration.js'
import { globMatch, loadRoutes, RoutesError, routesRouter, validateRoutes } from '../../src/routing/routes.js'
import { tempDir } from '../helpers/service.js'

const approval: AskUserQuestionItem = {
  id: 'q',
  question: 'Deploy?',
  header: 'Prod deploy',
  detail: 'd',
  options: [{ label: 'Yes' }, { label: 'No' }],
  intent: { kind: 'approval', approve: 'Yes', reject: 'No' },
}
const plain: AskUserQuestionItem = { id: 'q', question: 'Which?', header: 'Cache', options: [{ label: 'a' }] }

const file = validateRoutes(
  {
    routes: [
      {
        name: 'prod-approvals',
        match: { intent: 'approval', agentId: 'deploy-*', header: 'Prod*' },
        destinations: [{ platform: 'slack', channel: 'C0123ONCALL', mention: ['subteam:S0ONCALL'] }],
        quorum: 2,
      },
      {
        name: 'explicit',
        match: { route: 'oncall' },
        destinations: [{ platform: 'discord', channel: '110000000000000003' }],
      },
      { name: 'plans', match: { intent: 'plan-review' }, destinations: [{ platform: 'web' }] },
      {
        name: 'builds',
        match: { agentId: 'build-bot' },
        destinations: [{ platform: 'discord', channel: '110000000000000004' }],
      },
    ],
  },
  PLATFORMS,
)
const defaults = [{ platform: 'web' as const }]

const request = (questions: AskUserQuestionItem[], agentId?: string, route?: string): AnswererRequest => ({
  questions,
  callId: 'c',
  signal: new AbortController().signal,
  ...(agentId ? { agent: { id: agentId } as Agent } : {}),
  ...(route ? { route } : {}),
})

describe('routing matrix', () => {
  const logged: string[] = []
  const router = routesRouter(file, defaults, PLATFORMS, {
    debug() {},
    info: (m) => logged.push(m),
    warn() {},
    error() {},
  })
  it.each([
    ['an approval from deploy-api with a Prod header', request([approval], 'deploy-api'), 'prod-approvals'],
    ['an approval from another agent', request([approval], 'build-bot'), 'builds'],
    [
      'an approval without the Prod header',
      request([{ ...approval, header: 'Staging' }], 'deploy-api'),
      'default',
    ],
    ['a plain question with an explicit route', request([plain], 'x', 'oncall'), 'explicit'],
    ['a plain question from build-bot', request([plain], 'build-bot'), 'builds'],
    [
      'a plan review',
      request([{ ...plain, detail: 'p', intent: { kind: 'plan-review', approve: 'a' } }], 'x'),
      'plans',
    ],
    ['nothing matching', request([plain], 'someone'), 'default'],
    ['no agent at all', request([plain]), 'default'],
  ])('%s -> %s', (_name, req, expected) => {
    expect(router.resolve(req).name).toBe(expected)
  })

  it('the first matching route wins and carries its settings; a miss is logged', () => {
    const plan = router.resolve(request([approval], 'deploy-web', 'oncall'))
    expect(plan).toMatchObject({
      name: 'prod-approvals',
      quorum: 2,
      // Mentions are parsed once, here, by the platform's module.
      destinations: [
        {
          platform: 'slack',
          channel: 'C0123ONCALL',
          mention: [{ platform: 'slack', kind: 'group', id: 'S0ONCALL' }],
        },
      ],
    })
    logged.length = 0
    expect(router.resolve(request([plain], 'nobody')).destinations).toEqual(defaults)
    expect(logged).toEqual(['no route matched; using the default route'])
  })

  it('globs match whole values', () => {
    expect(globMatch('deploy-*', 'deploy-api')).toBe(true)
    expect(globMatch('deploy-*', 'predeploy-api')).toBe(false)
    expect(globMatch('*prod*', 'my prod deploy')).toBe(true)
    expect(globMatch('a.b', 'axb')).toBe(false)
  })
})

describe('routes file errors name the exact path', () => {
  const bad = (routes: unknown) => {
    try {
      validateRoutes({ routes }, PLATFORMS)
    } catch (error) {
      expect(error).toBeInstanceOf(RoutesError)
      return (error as RoutesError).problems
    }
    throw new Error('expected RoutesError')
  }
  const dest = { platform: 'slack', channel: 'C0123ONCALL' }

  it('an unknown platform', () => {
    expect(bad([{ name: 'r', destinations: [{ platform: 'matrix', channel: 'x' }] }])).toEqual([
      'routes[0].destinations[0].platform: platform must be "web", "slack", "discord" or "teams"',
    ])
  })
  it('Teams ids: a channel conversation id, Microsoft Entra object ids for users and mentions', () => {
    expect(
      bad([
        {
          name: 'r',
          destinations: [{ platform: 'teams', channel: 'General', mention: ['user:ann@example.com'] }],
          responders: { teams: { users: ['ann'] } },
        },
      ]),
    ).toEqual([
      'routes[0].destinations[0].channel: "General" is not a Teams channel conversation id (19:…@thread.tacv2)',
      'routes[0].destinations[0].mention[0]: "user:ann@example.com" is not a teams mention (user:ENTRA-OBJECT-ID)',
      'routes[0].responders.teams.users[0]: "ann" is not a Microsoft Entra object id',
    ])
  })
  it('a bad channel id', () => {
    expect(bad([{ name: 'r', destinations: [{ platform: 'discord', channel: '#general' }] }])).toEqual([
      'routes[0].destinations[0].channel: "#general" is not a Discord channel id (a snowflake)',
    ])
  })
  it('a malformed duration', () => {
    expect(
      bad([
        {
          name: 'r',
          destinations: [dest],
          escalation: [{ after: '10 minutes', mention: ['subteam:S0SECOND'] }],
        },
      ]),
    ).toEqual(['routes[0].escalation[0].after: not a duration (use 90s, 10m, 2h or 1d)'])
  })
  it('an escalation cycle', () => {
    const problems = bad([
      { name: 'a', destinations: [dest], escalation: [{ after: '10m', route: 'b' }] },
      { name: 'b', destinations: [dest], escalation: [{ after: '10m', route: 'a' }] },
    ])
    expect(problems).toEqual(['routes[0].escalation: escalation cycle a -> b -> a'])
  })
  it('several problems at once, plus unknown fields and bad mentions', () => {
    expect(
      bad([
        { name: 'r', destinations: [{ ...dest, mention: ['role:123'] }], quorum: 0 },
        { name: 'r', destinations: [dest], colour: 'red' },
      ]),
    ).toEqual([
      'routes[0].quorum: Too small: expected number to be >=1',
      'routes[1]: Unrecognized key: "colour"',
    ])
    expect(
      bad([
        { name: 'r', destinations: [{ ...dest, mention: ['role:123'] }] },
        { name: 'r', destinations: [dest] },
      ]),
    ).toEqual([
      'routes[0].destinations[0].mention[0]: "role:123" is not a slack mention (subteam:S… or user:U…)',
      'routes[1].name: "r" is already the name of routes[0]',
    ])
  })

  const dirs: Array<() => void> = []
  afterEach(() => {
    for (const d of dirs.splice(0)) d()
  })
  it('loadRoutes names the file, and reports bad JSON', () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const path = join(dir, 'routes.json')
    writeFileSync(path, '{"routes": [')
    expect(() => loadRoutes(path, PLATFORMS)).toThrow(new RegExp(`${path} is invalid:\\n  - not JSON`))
    writeFileSync(path, JSON.stringify({ routes: [{ name: 'x', destinations: [{ platform: 'web' }] }] }))
    expect(loadRoutes(path, PLATFORMS).routes[0]?.name).toBe('x')
  })
})

describe('durations', () => {
  it.each([
    ['90s', 90_000],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
  ])('%s', (text, ms) => expect(parseDuration(text)).toBe(ms))
  it.each(['', '10', '10 minutes', '-5m', '0s', '1.5h', 'm'])('rejects %j', (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  )
})
