/**
 * The Slack adapter under pressure, through the fake Slack and the real answerer: forged and stale
 * HTTP requests, storms of 429s, a slow Web API against Slack's 3-second ack and trigger_id
 * deadlines, redelivered payloads, a recycled Socket Mode connection, a deleted message.
 */

import { afterEach, describe, expect, it } from 'vitest'
import { signSlackRequest, verifySlackSignature } from '../../adapters/slack/verify.js'
import { isPostPending } from '../../src/answerer/adapter.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { keyFor, refFor, until } from '../helpers/service.js'
import { type Bridge, fakeUser, type SlackMode, type SlackRig, startBridge, startSlackRig } from './rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}
const why: AskUserQuestionItem = { id: 'why', question: 'Why?' }

let bridge: Bridge | undefined
afterEach(async () => {
  await bridge?.close()
  bridge = undefined
})

async function setUp(
  mode: SlackMode,
  plan: Parameters<typeof startBridge>[1] = {},
  options: Parameters<typeof startSlackRig>[1] = {},
) {
  const rig = await startSlackRig(mode, options)
  bridge = await startBridge(rig, plan)
  return { rig, b: bridge }
}

const postedAndRecorded = (rig: SlackRig, b: Bridge, callId: string) =>
  until(
    async () =>
      rig.fake.messagesOf(callId).length > 0 &&
      // The intent to post is stored first; posted means its reference replaced it.
      (await b.service.store.listPosts(await keyFor(b.service.store, callId))).some(
        (p) => !isPostPending(p.ref),
      ),
    `${callId} posted`,
  )

describe('HTTP interactivity signatures', () => {
  it('unsigned, forged, stale and replayed-on-another-body requests get 401 and change nothing; a signed one works', async () => {
    const { rig, b } = await setUp('http')
    const asking = b.service.ask({ questions: [colour], agent: b.agent(), wait: { callId: 'sig' } })
    await postedAndRecorded(rig, b, 'sig')
    const found = rig.element('sig', (r) => r.verb === 'choose' && r.o === 0)
    if (!found) throw new Error('no button')
    const payload = () => rig.fake.actionPayload(fakeUser(rig.people.ann), found.message, found.actionId)

    expect((await rig.fake.sendHttp(payload(), { signature: null })).status).toBe(401)
    expect((await rig.fake.sendHttp(payload(), { secret: 'not-the-secret' })).status).toBe(401)
    expect((await rig.fake.sendHttp(payload(), { signature: 'v0=deadbeef' })).status).toBe(401)
    const stale = Math.floor(Date.now() / 1000) - 301
    expect((await rig.fake.sendHttp(payload(), { timestamp: stale })).status).toBe(401)
    const ahead = Math.floor(Date.now() / 1000) + 3600
    expect((await rig.fake.sendHttp(payload(), { timestamp: ahead })).status).toBe(401)
    // A captured signature replayed on another body (Blue instead of Red) within the window.
    const blue = rig.element('sig', (r) => r.verb === 'choose' && r.o === 1)
    if (!blue) throw new Error('no second button')
    const now = Math.floor(Date.now() / 1000)
    const redBody = `payload=${encodeURIComponent(JSON.stringify(payload()))}`
    const captured = signSlackRequest(rig.fake.options.signingSecret, now, redBody)
    const genuine = { timestamp: String(now), signature: captured, body: redBody }
    expect(verifySlackSignature(rig.fake.options.signingSecret, genuine).ok).toBe(true)
    const swapped = rig.fake.actionPayload(fakeUser(rig.people.ann), blue.message, blue.actionId)
    expect((await rig.fake.sendHttp(swapped, { timestamp: now, signature: captured })).status).toBe(401)

    expect((await b.chat.host.getCard(refFor('sig', 'agent-1')))?.status).toBe('open')
    expect(
      (await b.service.store.listAudit({ callId: 'sig' })).filter((e) => e.kind === 'interaction'),
    ).toEqual([])

    expect((await rig.fake.sendHttp(payload())).status).toBe(200)
    expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
  })

  it('answers Slack’s URL verification challenge and refuses other methods', async () => {
    const { rig } = await setUp('http')
    const url = rig.fake.interactivityUrl ?? ''
    expect((await fetch(url)).status).toBe(405)
    const res = await rig.fake.sendHttp({ type: 'url_verification', challenge: 'c-123' })
    expect(res).toMatchObject({ status: 200, body: { challenge: 'c-123' } })
  })
})

describe.each(['socket', 'http'] as SlackMode[])('under pressure (%s)', (mode) => {
  it('a storm of 429s: every card posted in order, every click applied, every copy updated', async () => {
    const channels = ['C0A', 'C0B', 'C0C']
    const { rig, b } = await setUp(mode, (request) => ({
      destinations: [{ platform: 'slack', channel: channels[Number(request.callId.slice(-1)) % 3] ?? 'C0A' }],
    }))
    // Every Web API method answers 429 for a while; a few with a real one-second Retry-After.
    rig.fake.rateLimit('chat.postMessage', 2, 1)
    rig.fake.rateLimit('*', 40, 0)
    const plan = Array.from({ length: 120 }, (_, i) => `## Step ${i}\n\n${'detail '.repeat(40)}`).join('\n\n')
    const asks = Array.from({ length: 6 }, (_, i) =>
      b.service.ask({
        questions: i === 5 ? [{ ...colour, detail: plan }] : [colour, why],
        agent: b.agent(),
        wait: { callId: `storm-${i}` },
      }),
    )
    for (let i = 0; i < 6; i++) await postedAndRecorded(rig, b, `storm-${i}`)
    await until(() => rig.element('storm-5', (r) => r.verb === 'choose'), 'every part of the long card', 1000)
    const parts = rig.fake.messagesOf('storm-5')
    expect(parts.length).toBeGreaterThan(1)
    parts.forEach((m, i) => {
      expect(m.text).toContain(`part ${i + 1} of ${parts.length}`)
    })

    for (let i = 0; i < 5; i++) {
      await rig.use(`storm-${i}`, (r) => r.verb === 'choose' && r.q === 0 && r.o === 1, rig.people.ann)
      await rig.use(`storm-${i}`, (r) => r.verb === 'other' && r.q === 1, rig.people.bob)
      const view = await until(() => rig.fake.openViewOf('U0BOB'), 'modal', 1000)
      await rig.fake.submitView('U0BOB', view.id, { answer: { text: `because ${i}` } })
      await until(
        async () => (await b.chat.host.getCard(refFor(`storm-${i}`, 'agent-1')))?.drafts.why?.custom,
        'draft',
        1000,
      )
      await rig.use(`storm-${i}`, (r) => r.verb === 'submit', rig.people.ann)
    }
    await rig.use('storm-5', (r) => r.verb === 'choose' && r.o === 0, rig.people.bob)
    const answers = await Promise.all(asks)
    answers.slice(0, 5).forEach((a, i) => {
      expect(a).toEqual({
        answers: [
          { id: 'colour', selected: ['Blue'] },
          { id: 'why', selected: [], custom: `because ${i}` },
        ],
      })
    })
    expect(answers[5]).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    for (let i = 0; i < 6; i++) {
      await until(() => rig.fake.liveActionIds(`storm-${i}`).length === 0, `storm-${i} updated`, 1000)
    }
    const limited = rig.fake.calls.filter((c) => c.status === 429).length
    expect(limited).toBe(42)
    expect(rig.adapter.rateLimited).toBe(42)
    expect(rig.fake.ackTimeouts).toBe(0)
  }, 25_000)

  it('a slow Web API: clicks are still acked within 3 s and a modal still opens with its trigger_id', async () => {
    const { rig, b } = await setUp(mode)
    const asking = b.service.ask({ questions: [colour, why], agent: b.agent(), wait: { callId: 'slow' } })
    await postedAndRecorded(rig, b, 'slow')
    rig.fake.delay('chat.update', 3500)
    // Each delivery would fail (timedOut) if the adapter waited for chat.update before acking.
    await rig.use('slow', (r) => r.verb === 'choose' && r.o === 0, rig.people.ann)
    // While that chat.update crawls, a modal must open at once: the trigger_id dies after 3 s.
    await rig.use('slow', (r) => r.verb === 'other' && r.q === 1, rig.people.bob)
    const view = await until(() => rig.fake.openViewOf('U0BOB'), 'modal')
    rig.fake.delay('chat.update', 0) // Slack recovers
    await rig.fake.submitView('U0BOB', view.id, { answer: { text: 'speed' } })
    await until(
      async () => (await b.chat.host.getCard(refFor('slow', 'agent-1')))?.drafts.why?.custom,
      'draft',
    )
    await rig.use('slow', (r) => r.verb === 'submit', rig.people.ann)
    expect(await asking).toEqual({
      answers: [
        { id: 'colour', selected: ['Red'] },
        { id: 'why', selected: [], custom: 'speed' },
      ],
    })
    expect(rig.fake.ackTimeouts).toBe(0)
    expect(rig.fake.calls.filter((c) => c.method === 'views.open').map((c) => c.ok)).toEqual([true])
    await until(() => rig.fake.liveActionIds('slow').length === 0, 'card updated at last', 1000)
  }, 20_000)

  it('a form that cannot open (expired trigger_id) gets a private note, not silence', async () => {
    const { rig, b } = await setUp(mode)
    void b.service
      .ask({ questions: [colour], agent: b.agent(), wait: { callId: 'late-form' } })
      .catch(() => {})
    await postedAndRecorded(rig, b, 'late-form')
    rig.fake.failWith('views.open', 'expired_trigger_id')
    await rig.use('late-form', (r) => r.verb === 'other', rig.people.bob)
    await until(
      () => rig.fake.noticesFor('U0BOB').some((n) => n.includes('could not be opened (expired_trigger_id)')),
      'note',
    )
    expect((await b.chat.host.getCard(refFor('late-form', 'agent-1')))?.status).toBe('open')
  })

  it('a redelivered payload (Slack retry) is applied once', async () => {
    const { rig, b } = await setUp(mode)
    void b.service
      .ask({ questions: [colour, why], agent: b.agent(), wait: { callId: 'retry' } })
      .catch(() => {})
    await postedAndRecorded(rig, b, 'retry')
    const found = rig.element('retry', (r) => r.verb === 'choose' && r.o === 1)
    if (!found) throw new Error('no button')
    const payload = rig.fake.actionPayload(fakeUser(rig.people.ann), found.message, found.actionId)
    await rig.fake.deliver(payload)
    await rig.fake.deliver(payload, { retry: 1 })
    await rig.fake.deliver(payload, { retry: 2 })
    await rig.adapter.idle()
    const applied = (await b.service.store.listAudit({ callId: 'retry' })).filter(
      (e) => e.kind === 'interaction',
    )
    expect(applied).toHaveLength(1)
    expect((await b.chat.host.getCard(refFor('retry', 'agent-1')))?.drafts.colour?.selected).toEqual(['Blue'])
    expect(rig.fake.noticesFor('U0ANN')).toEqual([])
  })

  it('a message someone deleted does not stop the other parts from updating', async () => {
    const { rig, b } = await setUp(mode)
    const plan = Array.from({ length: 120 }, (_, i) => `## Step ${i}\n\n${'detail '.repeat(40)}`).join('\n\n')
    const asking = b.service.ask({
      questions: [{ ...colour, detail: plan }],
      agent: b.agent(),
      wait: { callId: 'del' },
    })
    await postedAndRecorded(rig, b, 'del')
    const [first] = rig.fake.messagesOf('del')
    rig.fake.messages.delete(`${first?.channel}:${first?.ts}`)
    await rig.use('del', (r) => r.verb === 'choose' && r.o === 0, rig.people.ann)
    expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    await until(() => rig.fake.liveActionIds('del').length === 0, 'remaining parts updated')
    expect(rig.fake.calls.some((c) => c.method === 'chat.update' && c.error === 'message_not_found')).toBe(
      true,
    )
  })
})

describe('Socket Mode connection', () => {
  it('reconnects when Slack recycles the connection, and keeps working', async () => {
    const { rig, b } = await setUp('socket', {}, { clientPingTimeoutMs: 500 })
    const asking = b.service.ask({ questions: [colour], agent: b.agent(), wait: { callId: 'recycle' } })
    await postedAndRecorded(rig, b, 'recycle')
    rig.fake.disconnectSockets()
    await until(
      () =>
        rig.fake.calls.filter((c) => c.method === 'apps.connections.open').length >= 2 &&
        rig.fake.socketConnected,
      'reconnected',
      1000,
    )
    await rig.use('recycle', (r) => r.verb === 'choose' && r.o === 1, rig.people.bob)
    expect(await asking).toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
  })
})
