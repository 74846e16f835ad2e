/**
 * Bad on-call configuration stops `askbridge serve` with one clear message: a routes file naming
 * PagerDuty without PAGERDUTY_API_TOKEN, a token PagerDuty refuses, an unknown schedule or
 * escalation policy (checked against the fake PagerDuty at start). And the routes file's own
 * rules for `oncall`, `people` and `oncallLevel`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { RoutesError, validateRoutes } from '../../src/routing/routes.js'
import { ensureBuilt } from '../cli/built.js'
import { askbridge } from '../cli/run.js'
import { FakePagerDuty } from '../fakes/pagerduty/server.js'

let cwd: string
let pd: FakePagerDuty
beforeAll(async () => {
  await ensureBuilt()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-oncall-'))
  pd = await FakePagerDuty.start({ token: 'pd-token-secret-123' })
  pd.schedules.set('PSCHED1', 'Primary')
  pd.policies.set('PPOLICY', 'Deploys')
}, 120_000)
afterAll(async () => {
  await pd.close()
  rmSync(cwd, { recursive: true, force: true })
})

function routesFile(oncalls: Array<Record<string, string>>): string {
  const path = join(cwd, `routes-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(
    path,
    JSON.stringify({
      routes: oncalls.map((pagerduty, i) => ({
        name: `r${i}`,
        destinations: [{ platform: 'web' }],
        oncall: { pagerduty },
      })),
    }),
  )
  return path
}

const serve = (env: Record<string, string>) =>
  askbridge(['serve'], { cwd, env: { ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: join(cwd, 'db.sqlite'), ...env } })

describe('askbridge serve with on-call routes', () => {
  it('refuses PagerDuty routes without PAGERDUTY_API_TOKEN, naming each route, in the one message', async () => {
    const r = await serve({
      ASKBRIDGE_ROUTES: routesFile([{ schedule: 'PSCHED1' }, { escalationPolicy: 'PPOLICY' }]),
      ASKBRIDGE_PORT: 'eighty',
    })
    expect(r.code).toBe(1)
    expect(r.stderr.match(/invalid configuration/g)).toHaveLength(1)
    expect(r.stderr).toContain('ASKBRIDGE_PORT')
    expect(r.stderr).toContain(
      'routes[0].oncall.pagerduty names PagerDuty, but PAGERDUTY_API_TOKEN is not set',
    )
    expect(r.stderr).toContain(
      'routes[1].oncall.pagerduty names PagerDuty, but PAGERDUTY_API_TOKEN is not set',
    )
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('refuses an unknown schedule or policy at start, and a token PagerDuty refuses, never echoing the token', async () => {
    const unknown = await serve({
      ASKBRIDGE_ROUTES: routesFile([
        { schedule: 'PSCHED1' },
        { schedule: 'PNOPE' },
        { escalationPolicy: 'PGONE' },
      ]),
      PAGERDUTY_API_TOKEN: pd.token,
      PAGERDUTY_API_URL: pd.url,
    })
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('invalid configuration')
    expect(unknown.stderr).toContain('routes[1].oncall.pagerduty.schedule: PagerDuty has no schedule "PNOPE"')
    expect(unknown.stderr).toContain(
      'routes[2].oncall.pagerduty.escalationPolicy: PagerDuty has no escalation policy "PGONE"',
    )
    expect(unknown.stderr).not.toContain('PSCHED1"')
    expect(unknown.stderr).not.toContain(pd.token)

    const refused = await serve({
      ASKBRIDGE_ROUTES: routesFile([{ schedule: 'PSCHED1' }]),
      PAGERDUTY_API_TOKEN: 'wrong-token-value-99',
      PAGERDUTY_API_URL: pd.url,
    })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/PAGERDUTY_API_TOKEN: PagerDuty refused the API token/)
    expect(refused.stderr).not.toContain('wrong-token-value-99')
    expect(refused.stderr).not.toMatch(/\n\s+at /)
  })
})

describe('routes file: oncall, people, oncallLevel', () => {
  const problems = (value: unknown) => {
    try {
      validateRoutes(value, PLATFORMS)
      return []
    } catch (error) {
      return (error as RoutesError).problems
    }
  }
  const route = (extra: Record<string, unknown>) => ({
    name: 'r',
    destinations: [{ platform: 'slack', channel: 'C0ONCALL' }],
    ...extra,
  })

  it('accepts a schedule or a policy with a fallback, levels, e-mail responders and a people map', () => {
    const file = validateRoutes(
      {
        people: { 'ann@example.com': { discord: '110000000000000021' }, 'bo@example.com': { slack: 'U0BO' } },
        routes: [
          route({
            oncall: { pagerduty: { escalationPolicy: 'PPOLICY' }, fallback: ['subteam:S0LEADS'] },
            responders: { people: ['email:Ann@example.com'] },
            escalation: [{ after: '10m', oncallLevel: 2 }],
          }),
        ],
      },
      PLATFORMS,
    )
    expect(file.people?.['ann@example.com']).toEqual({ discord: '110000000000000021' })
  })

  it('a bare id in the people map is refused, naming the person and the object form to write', () => {
    const file = {
      people: { 'ann@example.com': '110000000000000021', 'bo@example.com': { slack: 'U0BO' } },
      routes: [route({})],
    }
    expect(() => validateRoutes(file, PLATFORMS, 'routes.json')).toThrow(RoutesError)
    expect(problems(file)).toEqual([
      'people.ann@example.com: "110000000000000021" is a bare id, which names no platform: ' +
        'write this person\'s accounts as an object, e.g. { "discord": "110000000000000021" }',
    ])
    // An id no platform's rule fits still gets the object form, with the platforms to choose from.
    expect(problems({ people: { 'cy@example.com': 'cy' }, routes: [] })).toEqual([
      expect.stringMatching(
        /^people\.cy@example\.com: "cy" is a bare id, .* e\.g\. \{ "slack": "cy" \} \(or "discord", "teams"\)$/,
      ),
    ])
    // Each person's problem is reported, alongside those of the people written as objects.
    expect(
      problems({ people: { 'a@example.com': 'U0A', 'b@example.com': { slack: 'nope' } }, routes: [] }),
    ).toEqual([
      expect.stringMatching(/^people\.a@example\.com: "U0A" is a bare id, .* \{ "slack": "U0A" \}$/),
      'people.b@example.com.slack: not a Slack user id (U…)',
    ])
  })

  it('names what is wrong', () => {
    expect(
      problems({ routes: [route({ oncall: { pagerduty: { schedule: 'PA', escalationPolicy: 'PB' } } })] }),
    ).toEqual(['routes[0].oncall.pagerduty: name a schedule or an escalationPolicy (one of them)'])
    expect(problems({ routes: [route({ oncall: { pagerduty: { schedule: 'not an id' } } })] })).toEqual([
      'routes[0].oncall.pagerduty.schedule: not a PagerDuty schedule id (P…)',
    ])
    expect(
      problems({ routes: [route({ oncall: { pagerduty: { schedule: 'PA' }, fallback: ['role:123'] } })] }),
    ).toEqual(['routes[0].oncall.fallback[0]: "role:123" fits none of the route\'s platforms'])
    expect(
      problems({
        routes: [
          route({ oncall: { pagerduty: { schedule: 'PA' } }, escalation: [{ after: '5m', oncallLevel: 2 }] }),
        ],
      }),
    ).toEqual(["routes[0].escalation[0].oncallLevel: needs the route's oncall.pagerduty.escalationPolicy"])
    expect(problems({ routes: [route({ responders: { people: ['ann@example.com'] } })] })).toEqual([
      'routes[0].responders.people[0]: not an "email:ADDRESS" entry',
    ])
    expect(problems({ people: { ann: '1100' }, routes: [] })).toEqual(
      expect.arrayContaining([expect.stringMatching(/^people/)]),
    )
  })
})
