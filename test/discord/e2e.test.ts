/**
 * Discord end to end: the real discord.js Client in DiscordAdapter against the fake Discord, with
 * the real ChatAnswerer, UserQuestionService and SQLite store. The contract suite covers the common
 * flows; these cover what is Discord's own (tokens, 429s, HTTP interactions, limits, mentions).
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { mentions } from '../helpers/mentions.js'
import { keyFor, refFor, until } from '../helpers/service.js'
import { alice, bob, type DiscordRig, discordRig } from './rig.js'

let rig: DiscordRig | undefined
afterEach(async () => {
  const current = rig
  rig = undefined
  if (!current) return
  // Every payload the adapter sent passed the fake's limit checks.
  expect(current.fake.rejected).toEqual([])
  await current.close()
})

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue', description: 'the calm one' }],
}
const approval: AskUserQuestionItem = {
  id: 'deploy',
  question: 'Deploy 4f2c1 to production?',
  detail: 'Fixes the login bug. cc @everyone',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
  intent: {
    kind: 'approval',
    approve: 'Approve',
    reject: 'Reject',
    subject: { name: 'deploy-bot' },
    display: {
      question: { en: 'Deploy 4f2c1 to production?', de: '4f2c1 in Produktion ausrollen?' },
      approve: { en: 'Approve', de: 'Genehmigen' },
    },
  },
}

describe('Discord end to end', () => {
  it('connects with the Guilds intent only, heartbeats, and answers a single-select question', async () => {
    rig = await discordRig({ heartbeatIntervalMs: 250 })
    expect(rig.fake.identifies[0]?.intents).toBe(1)
    await until(() => (rig?.fake.heartbeats ?? 0) >= 1, 'a heartbeat acknowledged')
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'single-1' } })
    await until(() => rig?.component('single-1', { verb: 'choose', q: 0, o: 1 }), 'card posted')
    const record = await rig.press('single-1', { verb: 'choose', q: 0, o: 1 })
    expect(record.response).toMatchObject({ type: 7 })
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
    await until(async () => !(await rig?.hasLiveComponents('single-1')), 'buttons removed')
    expect(await rig.text('single-1')).toContain('Answered by Alice')
    // A client still showing the old buttons: the click is refused privately (flags 64).
    const [message] = await rig.messages('single-1')
    const customId = String((record.payload.data as { custom_id: string }).custom_id)
    await expect(rig.fake.click(message?.id ?? '', customId, bob)).rejects.toThrow(/no component/)
    const stale = await rig.fake.click(message?.id ?? '', customId, bob, { stale: true })
    await rig.waitResponded(stale)
    expect(stale.response).toMatchObject({ type: 4, data: { flags: 64 } })
    expect(rig.fake.notices.get(bob.id)).toEqual(['This question was already answered by Alice.'])
  })

  it('answers over the gateway even when the click’s token has expired, and edits through the channel', async () => {
    rig = await discordRig()
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'expired-1' } })
    const found = await until(
      () => rig?.component('expired-1', { verb: 'choose', q: 0, o: 0 }),
      'card posted',
    )
    // The token is dead before the bot sees the click: the callback gets 10062 Unknown interaction.
    const record = rig.fake.prepareClick(found.message.id, found.customId, alice)
    rig.fake.expireTokens(record.token)
    await rig.fake.deliver(record)
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    await until(async () => !(await rig?.hasLiveComponents('expired-1')), 'card updated')
    const edits = rig.fake.requests.filter((r) => r.method === 'PATCH')
    expect(edits.every((r) => r.path.includes('/channels/'))).toBe(true)
    expect(rig.fake.requests.some((r) => r.path.includes('/@original'))).toBe(false)
  })

  it('updates a card long after the interaction tokens expired (timed → pending → late click → reply)', async () => {
    rig = await discordRig()
    const agent = rig.service.agents.ensure('agent-1')
    const timed = rig.service.askTimed({ questions: [colour], agent }, 'timed-1', 1000)
    await until(() => rig?.component('timed-1', { verb: 'hold' }), 'card with Take my time')
    expect((await rig.messages('timed-1'))[0]?.content).toMatch(/<t:\d+:R>/)
    await expect(timed).resolves.toEqual({ pending: true, callId: 'timed-1' })
    await until(async () => /continued/.test((await rig?.text('timed-1')) ?? ''), 'continued shown')
    expect(await rig.component('timed-1', { verb: 'hold' })).toBeUndefined()
    // Fifteen minutes later: every earlier token is dead; a new click still works.
    rig.fake.expireTokens()
    const record = await rig.press('timed-1', { verb: 'choose', q: 0, o: 1 }, bob)
    expect(record.response).toMatchObject({ type: 7 })
    const replies = await until(async () => {
      const r = await rig?.service.replies('agent-1')
      return r?.length ? r : undefined
    }, 'late reply')
    expect(replies[0]?.reply.payload).toMatchObject({
      callId: 'timed-1',
      answers: [{ id: 'colour', selected: ['Blue'] }],
    })
    await until(async () => !(await rig?.hasLiveComponents('timed-1')), 'card finished')
  })

  it('Take my time and an open Other… form hold a timed wait and show who is taking their time', async () => {
    rig = await discordRig()
    const agent = rig.service.agents.ensure('agent-1')
    const timed = rig.service.askTimed({ questions: [colour], agent }, 'hold-1', 1500)
    await until(() => rig?.component('hold-1', { verb: 'other', q: 0 }), 'card')
    const opened = await rig.press('hold-1', { verb: 'other', q: 0 }, alice)
    expect(opened.response).toMatchObject({ type: 9, data: { title: 'Other answer' } })
    await until(
      async () => /Alice is taking their time/.test((await rig?.text('hold-1')) ?? ''),
      'holder shown',
    )
    const submitted = await rig.fake.submitModal(opened, 'Green', alice)
    await rig.waitResponded(submitted)
    await expect(timed).resolves.toEqual({ answers: [{ id: 'colour', selected: [], custom: 'Green' }] })
  })

  it('opening Other… on a question without a deadline claims nothing (a dismissed form leaves no trace)', async () => {
    rig = await discordRig()
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'nohold-1' } })
    await until(() => rig?.component('nohold-1', { verb: 'other', q: 0 }), 'card')
    const opened = await rig.press('nohold-1', { verb: 'other', q: 0 }, alice)
    expect(opened.response).toMatchObject({ type: 9 })
    // Alice closes the form. Bob answers with a button; the card never said Alice was holding it.
    await rig.press('nohold-1', { verb: 'choose', q: 0, o: 0 }, bob)
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    expect((await rig.chat.host.getCard(refFor('nohold-1')))?.holders).toEqual([])
    for (const message of rig.fake.channelMessages())
      for (const body of message.history) expect(JSON.stringify(body)).not.toContain('taking their time')
  })

  it('paged multi-select: choices on two menus are merged, then Submit', async () => {
    rig = await discordRig()
    const many: AskUserQuestionItem = {
      id: 'tags',
      question: 'Which tags?',
      multiSelect: true,
      options: Array.from({ length: 30 }, (_, i) => ({ label: `tag-${i}` })),
    }
    const answer = rig.service.ask({ questions: [many], wait: { callId: 'paged-1' } })
    await until(() => rig?.component('paged-1', { verb: 'set', q: 0, o: 1 }), 'second menu')
    await rig.choose('paged-1', 0, ['27'], alice, 1)
    await until(
      async () => (await rig?.chat.host.getCard(refFor('paged-1')))?.drafts.tags?.selected.length === 1,
      'draft 1',
    )
    await rig.choose('paged-1', 0, ['1', '2'], alice, 0)
    await until(
      async () => (await rig?.chat.host.getCard(refFor('paged-1')))?.drafts.tags?.selected.length === 3,
      'draft 2',
    )
    // The menus now show the shared selection as defaults.
    const first = await rig.component('paged-1', { verb: 'set', q: 0, o: 0 })
    const defaults = ((first?.component.options ?? []) as { value: string; default?: boolean }[]).filter(
      (o) => o.default,
    )
    expect(defaults.map((o) => o.value)).toEqual(['1', '2'])
    await rig.press('paged-1', { verb: 'submit' })
    await expect(answer).resolves.toEqual({
      answers: [{ id: 'tags', selected: ['tag-1', 'tag-2', 'tag-27'] }],
    })
  })

  it('a batch beyond 5 action rows continues in more messages and still answers', async () => {
    rig = await discordRig()
    const questions = Array.from(
      { length: 6 },
      (_, i): AskUserQuestionItem => ({
        id: `q${i}`,
        question: `Question ${i}?`,
        options: [{ label: 'Yes' }, { label: 'No' }],
      }),
    )
    const answer = rig.service.ask({ questions, wait: { callId: 'batch-6' } })
    await until(() => rig?.component('batch-6', { verb: 'submit' }), 'card posted')
    const posted = await rig.messages('batch-6')
    expect(posted.length).toBeGreaterThan(1)
    for (let i = 0; i < 5; i++) await rig.press('batch-6', { verb: 'choose', q: i, o: i % 2 })
    await rig.press('batch-6', { verb: 'skip', q: 5 }, bob)
    await until(
      async () => Object.keys((await rig?.chat.host.getCard(refFor('batch-6')))?.drafts ?? {}).length === 6,
      'drafts',
    )
    await rig.press('batch-6', { verb: 'submit' }, bob)
    const result = await answer
    expect(result.answers.map((a) => a.selected)).toEqual([['Yes'], ['No'], ['Yes'], ['No'], ['Yes'], []])
    await until(async () => !(await rig?.hasLiveComponents('batch-6')), 'all messages finished')
  })

  it('approval with quorum 2: progress, private notice, guild locale wording, mentions only the configured role', async () => {
    rig = await discordRig({
      guildLocale: 'de',
      mention: mentions('discord', 'role:110000000000000010'),
      plan: { quorum: 2 },
    })
    const current = rig
    {
      const answer = current.service.ask({ questions: [approval], wait: { callId: 'quorum-1' } })
      const found = await until(() => current.component('quorum-1', { verb: 'approve' }), 'approval posted')
      const [message] = await current.messages('quorum-1')
      expect(message?.content).toContain('<@&110000000000000010>')
      expect(message?.allowed_mentions).toEqual({ parse: [], roles: ['110000000000000010'] })
      expect(message?.embeds[0]).toMatchObject({
        title: '4f2c1 in Produktion ausrollen?',
        author: { name: 'deploy-bot' },
      })
      expect(message?.embeds[0]?.description).not.toContain('@everyone')
      expect(found.component).toMatchObject({ label: 'Genehmigen', style: 3 })
      await current.press('quorum-1', { verb: 'approve' }, alice)
      await until(
        () => current.fake.notices.get(alice.id)?.some((n) => n.includes('1 of 2')),
        'progress notice',
      )
      await until(
        async () => (await current.text('quorum-1')).includes('1 of 2 approvals: Alice'),
        'progress shown',
      )
      // The same person cannot approve twice.
      await current.press('quorum-1', { verb: 'approve' }, alice)
      await until(
        () => current.fake.notices.get(alice.id)?.some((n) => /already approved/.test(n)),
        'refusal',
      )
      await current.press('quorum-1', { verb: 'approve' }, bob)
      await expect(answer).resolves.toEqual({ answers: [{ id: 'deploy', selected: ['Approve'] }] })
      await until(
        async () => (await current.text('quorum-1')).includes('Approved by Alice, Bob'),
        'result shown',
      )
      // No message ever asked Discord to parse mentions.
      for (const m of current.fake.messages.values())
        for (const body of m.history)
          expect((body.allowed_mentions as { parse: unknown[] }).parse).toEqual([])
    }
  })

  it('plan review: a long plan splits across embeds; decline with feedback through the modal', async () => {
    rig = await discordRig()
    const steps = Array.from(
      { length: 300 },
      (_, i) => `${i + 1}. Step ${i + 1}: migrate table ${i} and verify it.`,
    )
    const plan: AskUserQuestionItem = {
      id: 'plan',
      question: 'Approve this plan?',
      detail: `# Plan\n\n${steps.join('\n')}`,
      options: [{ label: 'Approve' }, { label: 'Revise' }],
      intent: { kind: 'plan-review', approve: 'Approve' },
    }
    const answer = rig.service.ask({ questions: [plan], wait: { callId: 'plan-1' } })
    await until(() => rig?.component('plan-1', { verb: 'decline', q: 0 }), 'plan posted')
    const text = await rig.text('plan-1')
    for (const step of steps) expect(text).toContain(step)
    const opened = await rig.press('plan-1', { verb: 'decline', q: 0 })
    expect(opened.response).toMatchObject({ type: 9, data: { title: 'Decline with feedback' } })
    await rig.waitResponded(await rig.fake.submitModal(opened, 'Add a rollback step', alice))
    await expect(answer).resolves.toEqual({
      answers: [{ id: 'plan', selected: [], custom: 'Add a rollback step' }],
    })
  })

  it('nothing is lost on 429: posts and edits are retried in order', async () => {
    rig = await discordRig()
    rig.fake.rateLimit({ method: 'POST', path: '/messages', count: 2, retryAfter: 0.05 })
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'limited-1' } })
    await until(() => rig?.component('limited-1', { verb: 'choose', q: 0, o: 0 }), 'card posted after 429s')
    rig.fake.rateLimit({ method: 'PATCH', count: 2, retryAfter: 0.05 })
    // The click's token is dead, so the card cannot be the callback: it is edited (PATCH) instead.
    const found = await rig.mustComponent('limited-1', { verb: 'choose', q: 0, o: 0 })
    const click = rig.fake.prepareClick(found.message.id, found.customId, alice)
    rig.fake.expireTokens(click.token)
    await rig.fake.deliver(click)
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
    await until(async () => !(await rig?.hasLiveComponents('limited-1')), 'card updated after 429s')
    expect(rig.fake.rateLimited).toBe(4)
    expect(rig.fake.channelMessages()).toHaveLength(1)
  })

  it('cancel: the card says so and has no buttons', async () => {
    rig = await discordRig()
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'cancel-1' } })
    await until(() => rig?.component('cancel-1', { verb: 'choose', q: 0, o: 0 }), 'card posted')
    await rig.service.cancel(await keyFor(rig.service.store, 'cancel-1'))
    await expect(answer).rejects.toMatchObject({ code: 'ASK_CANCELLED' })
    await until(async () => /Cancelled/.test((await rig?.text('cancel-1')) ?? ''), 'cancel shown')
    expect(await rig.hasLiveComponents('cancel-1')).toBe(false)
  })

  it('posts to a direct message when the destination names a user', async () => {
    rig = await discordRig()
    const ref = await rig.adapter.post(
      (await import('../../src/card/lifecycle.js')).newCard({
        callId: 'dm-1',
        agentId: 'a',
        questions: [colour],
        now: Date.now(),
      }),
      { platform: 'discord', user: alice.id },
    )
    expect(ref.channelId).not.toBe(rig.fake.channelId)
    expect(rig.fake.channelMessages(ref.channelId)).toHaveLength(1)
    await rig.adapter.notify({ platform: 'discord', userId: bob.id }, 'a private note')
    expect(rig.fake.notices.get(bob.id)).toEqual(['a private note'])
  })
})

describe('Discord cards that change size', () => {
  it('adds a continuation message when the result no longer fits, and empties one no longer needed', async () => {
    rig = await discordRig()
    const long: AskUserQuestionItem = {
      id: 'long',
      question: 'Explain?',
      detail: 'd '.repeat(2800),
      options: [{ label: 'A' }],
    }
    const answer = rig.service.ask({ questions: [long], wait: { callId: 'grow-1' } })
    await until(() => rig?.component('grow-1', { verb: 'other', q: 0 }), 'card posted')
    expect(await rig.messages('grow-1')).toHaveLength(1)
    const opened = await rig.press('grow-1', { verb: 'other', q: 0 })
    const custom = Array.from({ length: 400 }, (_, i) => `reason${i}`).join(' ')
    await rig.waitResponded(await rig.fake.submitModal(opened, custom, alice))
    await expect(answer).resolves.toEqual({ answers: [{ id: 'long', selected: [], custom }] })
    await until(
      () => rig && rig.fake.channelMessages().length === 2 && rig.fake.channelMessages(),
      'continuation posted',
    )
    const all = rig.fake
      .channelMessages()
      .flatMap((m) => m.embeds.map((e) => String(e.description ?? '')))
      .join(' ')
    expect(all).toContain('reason399')
    expect(rig.fake.channelMessages().every((m) => m.components.length === 0)).toBe(true)
    // The grown copy is recorded in the store, so an update after a restart edits both messages.
    const ids = rig.fake.channelMessages().map((m) => m.id)
    await until(async () => {
      const [post] = (await rig?.service.store.listPosts(await keyFor(rig?.service.store, 'grow-1'))) ?? []
      return (
        JSON.stringify((post?.ref as { messageIds?: string[] } | undefined)?.messageIds) ===
        JSON.stringify(ids)
      )
    }, 'grown reference stored')

    const many: AskUserQuestionItem = {
      id: 'many',
      question: 'Pick one',
      options: Array.from({ length: 125 }, (_, i) => ({ label: `o${i}` })),
    }
    const second = rig.service.ask({ questions: [many], wait: { callId: 'shrink-1' } })
    await until(() => rig?.component('shrink-1', { verb: 'set', q: 0, o: 4 }), 'card posted')
    // Both messages, once the post's reference is recorded (the intent to post comes first).
    const before = (
      await until(async () => {
        const m = await rig?.messages('shrink-1')
        return m?.length === 2 ? m : undefined
      }, 'both messages recorded')
    ).map((m) => m.id)
    expect(before).toHaveLength(2)
    await rig.choose('shrink-1', 0, ['100'], alice, 4)
    await expect(second).resolves.toEqual({ answers: [{ id: 'many', selected: ['o100'] }] })
    await until(
      () => rig?.fake.messages.get(before[1] ?? '')?.content.includes('continued above'),
      'left-over emptied',
    )
    expect(rig.fake.messages.get(before[1] ?? '')?.components).toEqual([])
  })
})

describe('Discord reconnects and restarts', () => {
  it('resumes after the gateway drops and keeps taking clicks', async () => {
    rig = await discordRig()
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'resume-1' } })
    await until(() => rig?.component('resume-1', { verb: 'choose', q: 0, o: 0 }), 'card posted')
    rig.fake.disconnectAll()
    await until(() => rig && rig.fake.resumes > 0 && rig.fake.liveSessions > 0, 'resumed')
    const record = await rig.press('resume-1', { verb: 'choose', q: 0, o: 0 })
    expect(record.response).toMatchObject({ type: 7 })
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Red'] }] })
  })

  it('a card posted before a restart still works with a new adapter (late reply)', async () => {
    rig = await discordRig()
    const current = rig
    const agent = current.service.agents.ensure('agent-1')
    await expect(
      current.service.askTimed({ questions: [colour], agent }, 'restart-1', 1000),
    ).resolves.toEqual({
      pending: true,
      callId: 'restart-1',
    })
    await until(async () => /continued/.test(await current.text('restart-1')), 'continued shown')
    await current.chat.stop()
    const { DiscordAdapter } = await import('../../adapters/discord/index.js')
    const { ChatAnswerer } = await import('../../src/answerer/chat.js')
    const adapter = new DiscordAdapter({ token: current.fake.token, apiUrl: current.fake.apiUrl })
    const chat = new ChatAnswerer({
      service: current.service,
      adapters: [adapter],
      destinations: [current.destination],
      escalationIntervalMs: 0,
    })
    await chat.start()
    try {
      const found = await current.component('restart-1', { verb: 'choose', q: 0, o: 1 })
      if (!found) throw new Error('card lost its buttons')
      await current.waitResponded(await current.fake.click(found.message.id, found.customId, bob))
      const replies = await until(async () => {
        const r = await current.service.replies('agent-1')
        return r.length ? r : undefined
      }, 'late reply')
      expect(replies[0]?.reply.payload).toMatchObject({ answers: [{ id: 'colour', selected: ['Blue'] }] })
      // The new adapter edited the message the old one posted.
      await until(async () => !(await current.hasLiveComponents('restart-1')), 'old message updated')
      expect(current.fake.channelMessages()).toHaveLength(1)
    } finally {
      await chat.stop()
    }
  })
})

describe('Discord failures', () => {
  it('a card that cannot be posted in full leaves no live buttons and the ask fails', async () => {
    rig = await discordRig()
    rig.fake.fail({ method: 'POST', path: '/messages', after: 1, count: 1 })
    const many: AskUserQuestionItem = {
      id: 'many',
      question: 'Pick one',
      options: Array.from({ length: 125 }, (_, i) => ({ label: `o${i}` })),
    }
    await expect(rig.service.ask({ questions: [many], wait: { callId: 'half-1' } })).rejects.toMatchObject({
      code: 'PROVIDER_ERROR',
    })
    const [first] = rig.fake.channelMessages()
    expect(rig.fake.channelMessages()).toHaveLength(1)
    expect(first?.components).toEqual([])
    expect(first?.content).toContain('could not be posted')
  })
})

describe('Discord messages removed by people', () => {
  it('a deleted card message does not keep the other messages of the card stale', async () => {
    rig = await discordRig()
    const many: AskUserQuestionItem = {
      id: 'many',
      question: 'Pick one',
      options: Array.from({ length: 125 }, (_, i) => ({ label: `o${i}` })),
    }
    const answer = rig.service.ask({ questions: [many], wait: { callId: 'deleted-1' } })
    await until(() => rig?.component('deleted-1', { verb: 'other', q: 0 }), 'card posted')
    const [first, second] = await rig.messages('deleted-1')
    expect(second).toBeDefined()
    rig.fake.messages.delete(first?.id ?? '')
    await rig.service.cancel(await keyFor(rig.service.store, 'deleted-1'))
    await expect(answer).rejects.toMatchObject({ code: 'ASK_CANCELLED' })
    await until(
      () => rig?.fake.messages.get(second?.id ?? '')?.components.length === 0,
      'second message updated',
    )
  })

  it('keeps private notices within one message', async () => {
    rig = await discordRig()
    await rig.adapter.notify({ platform: 'discord', userId: alice.id }, `${'n'.repeat(2500)}`)
    expect(rig.fake.notices.get(alice.id)?.[0]).toHaveLength(2000)
  })
})

describe('Discord HTTP interactions (Ed25519)', () => {
  it('refuses forged signatures with 401, answers PING with PONG, and takes clicks and modals', async () => {
    rig = await discordRig({ http: true })
    const ping = JSON.stringify({
      id: '1',
      type: 1,
      application_id: rig.fake.applicationId,
      token: 't',
      version: 1,
    })
    const ts = String(Math.floor(Date.now() / 1000))
    const signed = rig.fake.signBody(ping, ts)
    expect(await rig.fake.postRawReply(ping, signed, ts)).toEqual({ status: 200, body: '{"type":1}' })
    // The very same signed request again: a replay.
    expect(await rig.fake.postRaw(ping, signed, ts)).toBe(401)
    expect(await rig.fake.postRaw(ping, rig.fake.signBody(ping, ts), String(Number(ts) + 1))).toBe(401)
    expect(await rig.fake.postRaw(ping, '00'.repeat(64), ts)).toBe(401)
    expect(await rig.fake.postRaw(ping, 'not-hex', ts)).toBe(401)
    // Genuinely signed by Discord an hour ago: stale.
    const old = String(Number(ts) - 3600)
    expect(await rig.fake.postRaw(ping, rig.fake.signBody(ping, old), old)).toBe(401)
    // Missing headers.
    expect((await rig.fake.postRawReply(ping, undefined, ts)).status).toBe(401)
    expect((await rig.fake.postRawReply(ping, signed, undefined)).status).toBe(401)
    expect((await rig.fake.postRawReply(ping, undefined, undefined)).status).toBe(401)
    // The body changed after signing.
    const tampered = ping.replace('"type":1', '"type":2')
    const fresh = String(Number(ts) + 2)
    expect(await rig.fake.postRaw(tampered, rig.fake.signBody(ping, fresh), fresh)).toBe(401)
    // A body over 1 MiB is refused before its signature is checked, at the limit it is read.
    const huge = 'x'.repeat((1 << 20) + 1)
    expect(await rig.fake.postRaw(huge, rig.fake.signBody(huge, fresh), fresh)).toBe(413)
    const atLimit = 'x'.repeat(1 << 20)
    expect(await rig.fake.postRaw(atLimit, rig.fake.signBody(atLimit, fresh), fresh)).toBe(400)

    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'http-1' } })
    const found = await until(() => rig?.component('http-1', { verb: 'other', q: 0 }), 'card posted')
    // A forged click changes nothing.
    const forged = rig.fake.prepareClick(found.message.id, found.customId, bob)
    expect(await rig.fake.postHttpInteraction(forged, true)).toBe(401)
    expect((await rig.chat.host.getCard(refFor('http-1')))?.holders).toEqual([])

    const opened = await rig.fake.click(found.message.id, found.customId, alice)
    expect(opened.response).toMatchObject({ type: 9 })
    const submitted = await rig.fake.submitModal(opened, 'Purple', alice)
    expect(submitted.response).toMatchObject({ type: 7 })
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: [], custom: 'Purple' }] })
    // A recorded genuine click played back later is refused before it reaches the card.
    const click = rig.fake.prepareClick(found.message.id, found.customId, bob, { stale: true })
    const body = JSON.stringify(click.payload)
    const at = String(Math.floor(Date.now() / 1000))
    const signature = rig.fake.signBody(body, at)
    expect((await rig.fake.postRawReply(body, signature, at)).status).toBe(200)
    expect(await rig.fake.postRaw(body, signature, at)).toBe(401)
  })
})

describe('Discord acknowledgements (the 3-second rule)', () => {
  const batch: AskUserQuestionItem[] = [colour, { id: 'why', question: 'Why?' }]

  /** A store a little slow to write (the same SQLite store, each write delayed). */
  function slowWrites(current: DiscordRig, ms: number) {
    const store = current.store
    const cas = store.casCard.bind(store)
    store.casCard = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, ms))
      return cas(...args)
    }
  }

  it('a single-question card costs two API calls: the post, and the callback carrying the answered card', async () => {
    rig = await discordRig()
    const before = rig.fake.requests.length
    const answer = rig.service.ask({ questions: [colour], wait: { callId: 'calls-1' } })
    await until(() => rig?.component('calls-1', { verb: 'choose', q: 0, o: 1 }), 'card posted')
    const record = await rig.press('calls-1', { verb: 'choose', q: 0, o: 1 })
    await expect(answer).resolves.toEqual({ answers: [{ id: 'colour', selected: ['Blue'] }] })
    // The callback is UPDATE_MESSAGE with the finished card: no buttons, who answered.
    expect(record.response).toMatchObject({ type: 7, data: { components: [] } })
    expect(await rig.hasLiveComponents('calls-1')).toBe(false)
    expect(await rig.text('calls-1')).toContain('Answered by Alice')
    await rig.chat.stop()
    const calls = rig.fake.requests
      .slice(before)
      .map((r) => `${r.method} ${r.path.replace(/\d{5,}/g, ':id')}`)
    expect(calls).toEqual([
      'POST /v10/channels/:id/messages',
      expect.stringMatching(/^POST \/v10\/interactions\/:id\/.+\/callback$/),
    ])
  })

  it('when Discord gets the response, the click is already in the store', async () => {
    rig = await discordRig()
    void rig.service.ask({ questions: batch, wait: { callId: 'durable-1' } }).catch(() => {})
    await until(() => rig?.component('durable-1', { verb: 'choose', q: 0, o: 1 }), 'card posted')
    slowWrites(rig, 300)
    const record = await rig.press('durable-1', { verb: 'choose', q: 0, o: 1 })
    expect(record.response).toMatchObject({ type: 7 })
    // Read right when the response arrived: an adapter that answered first would be caught here.
    const card = await rig.store.getCard<{ drafts: Record<string, { selected: string[] }> }>(
      await keyFor(rig.store, 'durable-1'),
    )
    expect(card?.state.drafts.colour?.selected).toEqual(['Blue'])
  })

  it('defers when the work is slow, within the deadline, and the click still lands', async () => {
    rig = await discordRig({ ackAfterMs: 50 })
    void rig.service.ask({ questions: batch, wait: { callId: 'slow-1' } }).catch(() => {})
    await until(() => rig?.component('slow-1', { verb: 'choose', q: 0, o: 0 }), 'card posted')
    slowWrites(rig, 400)
    const record = await rig.press('slow-1', { verb: 'choose', q: 0, o: 0 })
    expect(record.response).toEqual({ type: 6 })
    expect(record.errors).toEqual([])
    await until(
      async () => (await rig?.chat.host.getCard(refFor('slow-1')))?.drafts.colour?.selected[0] === 'Red',
      'click applied after the defer',
    )
  })
})

describe('Discord rate limits: per-channel order', () => {
  it('two cards posted back to back keep their order through 429s, and each keeps its edits in order', async () => {
    rig = await discordRig()
    const { newCard } = await import('../../src/card/lifecycle.js')
    const make = (callId: string) => newCard({ callId, agentId: 'a', questions: [colour], now: Date.now() })
    rig.fake.rateLimit({ method: 'POST', path: '/messages', count: 3, retryAfter: 0.05 })
    const first = rig.adapter.post(make('order-1'), rig.destination)
    const second = rig.adapter.post(make('order-2'), rig.destination)
    const [a, b] = await Promise.all([first, second])
    const ids = rig.fake.channelMessages().map((m) => m.id)
    expect(ids).toEqual([a.messageIds[0], b.messageIds[0]])
    // Three edits of one card in a row, the first two rate limited: the last one shows.
    rig.fake.rateLimit({ method: 'PATCH', count: 2, retryAfter: 0.05 })
    const card = make('order-1')
    await Promise.all([
      rig.adapter.update({ ...card, status: 'cancelled', closedReason: 'one' }, a),
      rig.adapter.update({ ...card, status: 'cancelled', closedReason: 'two' }, a),
      rig.adapter.update({ ...card, status: 'cancelled', closedReason: 'three' }, a),
    ])
    expect(rig.fake.messages.get(a.messageIds[0] ?? '')?.content).toContain('three')
    expect(rig.fake.rateLimited).toBe(5)
  })
})
