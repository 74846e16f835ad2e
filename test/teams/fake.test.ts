/** The fake Teams holds the bot to Teams' rules: tokens, shapes, the size limit, rate limits. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { newCard } from '../../src/card/lifecycle.js'
import { FakeTeams } from '../fakes/teams/server.js'
import { type TeamsRig, teamsRig } from './rig.js'

describe('fake Teams', () => {
  let fake: FakeTeams
  beforeEach(async () => {
    fake = await new FakeTeams().start()
  })
  afterEach(async () => {
    await fake.close()
  })

  const token = async (secret = fake.appPassword) => {
    const res = await fetch(`${fake.authorityUrl}/${fake.tenantId}/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: fake.appId,
        client_secret: secret,
        scope: 'https://api.botframework.com/.default',
      }).toString(),
    })
    return { status: res.status, body: (await res.json()) as { access_token?: string; error?: string } }
  }
  const send = (activity: unknown, bearer?: string) =>
    fetch(`${fake.serviceUrl}v3/conversations/${encodeURIComponent(fake.channelId)}/activities`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify(activity),
    })

  it('issues tokens for the right secret only, and the connector wants one', async () => {
    expect(await token('wrong')).toMatchObject({ status: 401, body: { error: 'invalid_client' } })
    const good = await token()
    expect(good.status).toBe(200)
    expect((await send({ type: 'message', text: 'hi' })).status).toBe(401)
    expect((await send({ type: 'message', text: 'hi' }, good.body.access_token)).status).toBe(201)
  })

  it('refuses a message over about 28 KB with 413 and records why', async () => {
    const { body } = await token()
    const big = { type: 'message', text: 'x'.repeat(29 * 1024) }
    const res = await send(big, body.access_token)
    expect(res.status).toBe(413)
    expect(fake.rejected[0]?.problems.join()).toMatch(/bytes, over 28672/)
  })

  it('pages a channel roster as Teams does, and refuses a bad page request or a channel the bot is not in', async () => {
    const { body } = await token()
    for (let i = 0; i < 60; i++)
      fake.addMember({ aadObjectId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, name: `P${i}` })
    const page = async (conversation: string, query: string) => {
      const res = await fetch(
        `${fake.serviceUrl}v3/conversations/${encodeURIComponent(conversation)}/pagedmembers?${query}`,
        { headers: { authorization: `Bearer ${body.access_token}` } },
      )
      return {
        status: res.status,
        body: (await res.json()) as { members?: unknown[]; continuationToken?: string },
      }
    }
    // A page size under 50 is read as 50.
    const first = await page(fake.channelId, 'pageSize=10')
    expect(first.status).toBe(200)
    expect(first.body.members).toHaveLength(50)
    expect(first.body.members?.[0]).toMatchObject({
      id: '29:00000000-0000-4000-8000-000000000000',
      name: 'P0',
    })
    const second = await page(fake.channelId, `pageSize=10&continuationToken=${first.body.continuationToken}`)
    expect(second.body.members).toHaveLength(10)
    expect(second.body.continuationToken).toBeUndefined()
    expect((await page(fake.channelId, 'pageSize=abc')).status).toBe(400)
    expect((await page('19:other@thread.tacv2', 'pageSize=50')).status).toBe(404)
  })

  it('answers 429 with Retry-After past the per-conversation limits', async () => {
    const { body } = await token()
    const results = await Promise.all(
      Array.from({ length: 10 }, () => send({ type: 'message', text: 'hi' }, body.access_token)),
    )
    const limited = results.filter((r) => r.status === 429)
    expect(limited.length).toBeGreaterThanOrEqual(2)
    expect(Number(limited[0]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  })
})

describe('a card over the size limit, through the adapter', () => {
  let rig: TeamsRig
  beforeEach(async () => {
    rig = await teamsRig({ publicUrl: 'https://bridge.example' })
  })
  afterEach(async () => {
    await rig.close()
  })

  it('is never sent whole: the fake accepts the cut-down card, which links to the inbox', async () => {
    const card = newCard({
      callId: 'big',
      agentId: 'a',
      now: 1_700_000_000_000,
      questions: [{ id: 'q', question: 'Ship it?', detail: 'y'.repeat(40_000), options: [{ label: 'Yes' }] }],
    })
    await rig.adapter.post(card, { platform: 'teams', channel: rig.fake.channelId })
    expect(rig.fake.rejected).toEqual([])
    const link = rig.elements('big').find((e) => e.type === 'Action.OpenUrl')
    expect(link?.url).toBe('https://bridge.example/inbox')
    expect(rig.text('big')).not.toContain('yyyyyyyyyy')
    expect(rig.elements('big').some((e) => e.type === 'Action.Execute')).toBe(true)
  })
})
