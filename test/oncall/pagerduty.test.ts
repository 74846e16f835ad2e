/**
 * The fake PagerDuty against PagerDuty's documented shapes, and askbridge's PagerDuty client and
 * on-call look-up against the fake: token auth, the v2 media type, pagination, 429 with
 * Retry-After, not-found, outage; the look-up's cache, rota changes and last-known fallback.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { OnCallLookup } from '../../src/oncall/lookup.js'
import { PagerDutyClient, PagerDutyError } from '../../src/oncall/pagerduty.js'
import { FakePagerDuty } from '../fakes/pagerduty/server.js'
import { manualClock } from '../helpers/routing.js'

const MINUTE = 60_000
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function fake(now?: () => number) {
  const pd = await FakePagerDuty.start(now ? { now } : {})
  cleanups.push(() => pd.close())
  pd.users.set('PALICE', { id: 'PALICE', name: 'Alice Smith', email: 'Alice@example.com' })
  pd.users.set('PBOB', { id: 'PBOB', name: 'Bob Jones', email: 'bob@example.com' })
  pd.users.set('PCARL', { id: 'PCARL', name: 'Carl', email: 'carl@example.com' })
  pd.schedules.set('PSCHED1', 'Primary')
  pd.policies.set('PPOLICY', 'Deploys')
  return pd
}

const get = (pd: FakePagerDuty, path: string, headers: Record<string, string> = {}) =>
  fetch(`${pd.url}${path}`, {
    headers: {
      accept: 'application/vnd.pagerduty+json;version=2',
      authorization: `Token token=${pd.token}`,
      ...headers,
    },
  })

describe('the fake PagerDuty', () => {
  it('refuses a missing or wrong token with 401 and PagerDuty’s error shape', async () => {
    const pd = await fake()
    const none = await fetch(`${pd.url}/oncalls`)
    expect(none.status).toBe(401)
    expect(await none.json()).toEqual({ error: { message: 'Unauthorized', code: 2006, errors: [] } })
    expect((await get(pd, '/oncalls', { authorization: 'Token token=wrong' })).status).toBe(401)
    expect((await get(pd, '/oncalls', { authorization: `Bearer ${pd.token}` })).status).toBe(401)
    expect((await get(pd, '/oncalls')).status).toBe(200)
  })

  it('lists on-calls running now, with users in full only for include[]=users, paged by limit/offset/more', async () => {
    const c = manualClock(1_800_000_000_000)
    const pd = await fake(c.now)
    pd.shifts = [
      {
        user: 'PALICE',
        policy: 'PPOLICY',
        level: 1,
        schedule: 'PSCHED1',
        start: c.now() - MINUTE,
        end: c.now() + MINUTE,
      },
      { user: 'PBOB', policy: 'PPOLICY', level: 2 },
      { user: 'PCARL', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1', start: c.now() + MINUTE },
    ]
    const first = await (await get(pd, '/oncalls?include[]=users&limit=1&offset=0')).json()
    expect(first).toMatchObject({ limit: 1, offset: 0, more: true, total: null })
    expect(first.oncalls).toEqual([
      {
        escalation_policy: expect.objectContaining({ id: 'PPOLICY', type: 'escalation_policy_reference' }),
        escalation_level: 1,
        schedule: expect.objectContaining({ id: 'PSCHED1', type: 'schedule_reference', summary: 'Primary' }),
        user: expect.objectContaining({
          id: 'PALICE',
          type: 'user',
          name: 'Alice Smith',
          email: 'Alice@example.com',
        }),
        start: new Date(c.now() - MINUTE).toISOString(),
        end: new Date(c.now() + MINUTE).toISOString(),
      },
    ])
    const second = await (await get(pd, '/oncalls?include[]=users&limit=1&offset=1')).json()
    expect(second).toMatchObject({ offset: 1, more: false })
    expect(second.oncalls[0]).toMatchObject({ escalation_level: 2, schedule: null, start: null, end: null })
    // Without include[]=users: a user reference, no e-mail.
    const refs = await (await get(pd, '/oncalls?schedule_ids[]=PSCHED1')).json()
    expect(refs.oncalls).toHaveLength(1)
    expect(refs.oncalls[0].user).toEqual(expect.objectContaining({ id: 'PALICE', type: 'user_reference' }))
    expect(refs.oncalls[0].user.email).toBeUndefined()
    expect((await get(pd, '/oncalls?limit=101')).status).toBe(400)
  })

  it('answers 429 with Retry-After, 404 for an unknown schedule, 503 while down', async () => {
    const pd = await fake()
    pd.rateLimit(1, 2)
    const limited = await get(pd, '/oncalls')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('2')
    expect((await limited.json()).error.code).toBe(2020)
    expect((await get(pd, '/schedules/PSCHED1')).status).toBe(200)
    expect(await (await get(pd, '/schedules/PSCHED1')).json()).toMatchObject({
      schedule: { id: 'PSCHED1', type: 'schedule', name: 'Primary' },
    })
    expect((await get(pd, '/schedules/PNOPE')).status).toBe(404)
    pd.down = true
    expect((await get(pd, '/oncalls')).status).toBe(503)
  })
})

describe('PagerDutyClient against the fake', () => {
  it('sends the token and the v2 media type, reads every page, and gives lower-case e-mails', async () => {
    const pd = await fake()
    pd.shifts = ['PALICE', 'PBOB', 'PCARL'].map((user, i) => ({ user, policy: 'PPOLICY', level: i + 1 }))
    const client = new PagerDutyClient({ token: pd.token, apiUrl: pd.url, pageSize: 2 })
    const all = await client.onCalls({ escalationPolicyIds: ['PPOLICY'] })
    expect(all.map((o) => [o.user.email, o.level])).toEqual([
      ['alice@example.com', 1],
      ['bob@example.com', 2],
      ['carl@example.com', 3],
    ])
    const pages = pd.requests.filter((r) => r.path === '/oncalls')
    expect(pages.map((r) => r.query.get('offset'))).toEqual(['0', '2'])
    for (const r of pages) {
      expect(r.accept).toBe('application/vnd.pagerduty+json;version=2')
      expect(r.query.getAll('include[]')).toEqual(['users'])
      expect(r.query.getAll('escalation_policy_ids[]')).toEqual(['PPOLICY'])
    }
  })

  it('waits out a 429 and retries; gives up with rate-limited after its retries', async () => {
    const pd = await fake()
    pd.shifts = [{ user: 'PALICE', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1' }]
    const client = new PagerDutyClient({ token: pd.token, apiUrl: pd.url, maxRetries: 1 })
    pd.rateLimit(1, 0)
    expect((await client.onCalls({ scheduleIds: ['PSCHED1'] })).map((o) => o.user.name)).toEqual([
      'Alice Smith',
    ])
    expect(pd.requests.map((r) => r.status)).toEqual([429, 200])
    pd.rateLimit(2, 0)
    await expect(client.onCalls({ scheduleIds: ['PSCHED1'] })).rejects.toMatchObject({ code: 'rate-limited' })
    // A Retry-After longer than askbridge waits: fails at once instead of holding the question up.
    pd.rateLimit(1, 3600)
    await expect(client.onCalls({ scheduleIds: ['PSCHED1'] })).rejects.toMatchObject({ code: 'rate-limited' })
  })

  it('tells a wrong token, an unknown schedule and an outage apart, and never puts the token in a message', async () => {
    const pd = await fake()
    const wrong = new PagerDutyClient({ token: 'not-the-token', apiUrl: pd.url })
    const error = await wrong.schedule('PSCHED1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PagerDutyError)
    expect(error).toMatchObject({ code: 'unauthorized' })
    expect(String((error as Error).message)).toContain('PAGERDUTY_API_TOKEN')
    expect(String((error as Error).message)).not.toContain('not-the-token')
    const client = new PagerDutyClient({ token: pd.token, apiUrl: pd.url })
    expect(await client.schedule('PSCHED1')).toEqual({ id: 'PSCHED1', name: 'Primary' })
    expect(await client.schedule('PNOPE')).toBeUndefined()
    expect(await client.escalationPolicy('PPOLICY')).toEqual({ id: 'PPOLICY', name: 'Deploys' })
    pd.down = true
    await expect(client.onCalls({ scheduleIds: ['PSCHED1'] })).rejects.toMatchObject({ code: 'unavailable' })
    await pd.close()
    await expect(client.schedule('PSCHED1')).rejects.toMatchObject({ code: 'unavailable' })
  })
})

describe('OnCallLookup', () => {
  it('caches briefly, follows a shift ending, and falls back to the last known on-call, then to nothing', async () => {
    const c = manualClock(1_800_000_000_000)
    const pd = await fake(c.now)
    const handover = c.now() + 30 * MINUTE
    pd.shifts = [
      { user: 'PALICE', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1', end: handover },
      { user: 'PBOB', policy: 'PPOLICY', level: 1, schedule: 'PSCHED1', start: handover },
    ]
    const lookup = new OnCallLookup({
      source: new PagerDutyClient({ token: pd.token, apiUrl: pd.url }),
      now: c.now,
      ttlMs: 60 * MINUTE,
    })
    const target = { schedule: 'PSCHED1' }
    expect(await lookup.lookup(target)).toEqual({
      source: 'pagerduty',
      people: [{ email: 'alice@example.com', name: 'Alice Smith' }],
      at: c.now(),
    })
    c.advance(10 * MINUTE)
    await lookup.lookup(target)
    expect(pd.oncallRequests).toBe(1) // cached
    // The TTL is an hour, but Alice's shift ends in 20 minutes: the handover is followed.
    c.advance(20 * MINUTE)
    expect((await lookup.lookup(target)).people.map((p) => p.name)).toEqual(['Bob Jones'])
    expect(pd.oncallRequests).toBe(2)
    const known = c.now()

    pd.down = true
    c.advance(61 * MINUTE)
    expect(await lookup.lookup(target)).toEqual({
      source: 'last-known',
      people: [{ email: 'bob@example.com', name: 'Bob Jones' }],
      at: known,
    })
    expect(await lookup.lookup({ escalationPolicy: 'PPOLICY' })).toEqual({
      source: 'fallback',
      people: [],
      at: c.now(),
    })
  })
})
