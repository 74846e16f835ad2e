/**
 * Recorded Claude Code hook payloads replayed end to end: through the HTTP hook
 * (`POST /v1/hooks/claude-code`) and the command hook (`askbridge hook`, the built CLI), into a
 * real bridge whose Slack adapter (real Bolt over Socket Mode) and Discord adapter (real
 * discord.js) talk to the fake Slack and the fake Discord. People click what the fakes show;
 * the hook's exact output JSON is checked.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { WebCardView } from '../../adapters/web/client/types.js'
import type { ComponentRef } from '../../src/card/codec.js'
import type { CardState } from '../../src/card/types.js'
import { TOOL_PREVIEW_CHARS } from '../../src/hooks/tool.js'
import { askbridge } from '../cli/run.js'
import { waitResponded } from '../discord/rig.js'
import type { FakeUser as DiscordUser, FakeDiscord } from '../fakes/discord/server.js'
import type { FakeSlack, FakeUser as SlackUser } from '../fakes/slack/server.js'
import { commandHook as command, fixture, httpHook as http } from '../helpers/claude-code.js'
import {
  discordClick as click,
  componentId,
  type HookRig,
  nextHookCard,
  postedOn,
  startHookRig,
} from '../helpers/hook-rig.js'
import { until } from '../helpers/service.js'
import { inboxCookie, type TestBridge } from '../server/helpers.js'
import { blocksText } from '../slack/rig.js'

const grace: SlackUser = { id: 'U0GRACE', name: 'Grace' }
const linus: DiscordUser = {
  id: '210000000000000001',
  username: 'linus',
  global_name: 'Linus',
  locale: 'en-US',
}

const PUBLIC_URL = 'https://askbridge.example.com'

let slack: FakeSlack
let discord: FakeDiscord
let tb: TestBridge
let cwd: string
let rig: HookRig
const seen = new Set<string>()

beforeAll(async () => {
  rig = await startHookRig({
    slackChannel: 'C0HOOKS',
    tmpPrefix: 'askbridge-hooks-',
    env: { ASKBRIDGE_PUBLIC_URL: PUBLIC_URL },
  })
  ;({ slack, discord, tb, cwd } = rig)
}, 60_000)

afterAll(async () => {
  await rig?.close()
})

const httpHook = (payload: unknown, query?: string) => http(tb.url, payload, query)
const commandHook = (payload: unknown, args?: string[]) => command(tb.url, cwd, payload, args)

/** The next new hook card, once it is posted in Slack, Discord and the inbox. */
const nextCard = () => nextHookCard(tb, seen, { which: (c) => c.agentId.startsWith('claude-code:') })

async function slackUse(callId: string, ref: Omit<ComponentRef, 'callId' | 'agent'>) {
  return slack.use(grace, callId, await componentId(tb, callId, ref))
}

const discordClick = (callId: string, ref: Omit<ComponentRef, 'callId' | 'agent'>) =>
  click(rig, callId, ref, linus)

const allow = { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } }

describe('PermissionRequest', () => {
  it('Approve in Slack (HTTP hook) and in Discord (command hook) give the same allow', async () => {
    const viaHttp = httpHook(fixture('permission-request-bash'))
    const a = await nextCard()
    expect(blocksText(slack.messagesOf(a.callId)[0]?.blocks ?? [])).toContain('rm -rf node_modules')
    await slackUse(a.callId, { verb: 'approve' })
    expect(await viaHttp).toEqual({ status: 200, body: allow })

    const viaCommand = commandHook(fixture('permission-request-bash'))
    const b = await nextCard()
    await discordClick(b.callId, { verb: 'approve' })
    expect(await viaCommand).toEqual({ code: 0, stderr: '', body: allow })
  })

  it('Reject gives deny with a message naming who; Always gives allow plus the documented rule', async () => {
    const rejected = commandHook(fixture('permission-request-bash'))
    const r = await nextCard()
    await slackUse(r.callId, { verb: 'reject' })
    expect((await rejected).body).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: 'Rejected by Grace in askbridge.' },
      },
    })

    const always = {
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
    }
    const viaHttp = httpHook(fixture('permission-request-bash'))
    const h = await nextCard()
    await discordClick(h.callId, { verb: 'always' })
    expect((await viaHttp).body).toEqual(always)
    const viaCommand = commandHook(fixture('permission-request-bash'))
    const c = await nextCard()
    await slackUse(c.callId, { verb: 'always' })
    expect((await viaCommand).body).toEqual(always)
  })

  it('waiting never decides: near the hook timeout the answer is {} and the cards say the agent moved on', async () => {
    const viaHttp = httpHook(fixture('permission-request-edit'), 'timeout=2')
    const card = await nextCard()
    expect(await viaHttp).toEqual({ status: 200, body: {} })
    await until(
      () => blocksText(slack.messagesOf(card.callId).at(-1)?.blocks ?? []).includes('the agent moved on'),
      'the Slack card says the agent moved on',
    )
    const viaCommand = commandHook(fixture('permission-request-edit'), ['--timeout', '2'])
    await nextCard()
    expect(await viaCommand).toEqual({ code: 0, stderr: '', body: {} })
  })

  it('a tool input of any size is posted within every platform limit; the inbox shows all of it', async () => {
    const huge = fixture('permission-request-bash')
    huge.tool_input = {
      command: `echo ${'x'.repeat(400_000)} '<script>'`,
      description: 'A very long command',
    }
    const viaHttp = httpHook(huge, 'timeout=60')
    const card = await nextCard()
    const text = blocksText(slack.messagesOf(card.callId)[0]?.blocks ?? [])
    expect(text).toContain('more characters not shown; full text in the inbox')
    expect(discord.rejected).toEqual([])
    await slackUse(card.callId, { verb: 'reject' })
    expect((await viaHttp).status).toBe(200)
    const events = (await tb.bridge.store.listAudit({ callId: card.callId })) as Array<{
      kind: string
      detail?: unknown
    }>
    const hook = events.find((e) => e.kind === 'hook')?.detail as
      | { tool_input?: { command?: string } }
      | undefined
    expect(hook?.tool_input?.command?.length).toBe(400_016)
    const page = await fetch(`${tb.url}/inbox/tool/${card.callId}`, {
      headers: { cookie: inboxCookie(tb.url) },
    })
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await page.text()
    // Every character of the command, escaped (a boolean: a 400k-character diff helps nobody).
    expect(html.includes(`echo ${'x'.repeat(400_000)} '&lt;script>'`)).toBe(true)
    expect(html.includes('<script')).toBe(false)
    expect(
      (await fetch(`${tb.url}/inbox/tool/hook-unknown`, { headers: { cookie: inboxCookie(tb.url) } })).status,
    ).toBe(404)
  })

  it.each([
    ['at the preview limit: shown whole, no link', TOOL_PREVIEW_CHARS],
    ['one past it: cut, with a link to the whole text in the inbox', TOOL_PREVIEW_CHARS + 1],
  ])('a command %s, on Slack, Discord and the inbox', async (_name, length) => {
    const payload = fixture('permission-request-bash')
    // A character nothing else on a card uses, so each surface's copy of the command can be counted.
    const command = 'ÿ'.repeat(length)
    const count = (text: string) => text.split('ÿ').length - 1
    payload.tool_input = { command }
    const viaCommand = commandHook(payload)
    const card = await nextCard()
    const link = `${PUBLIC_URL}/inbox/tool/${card.callId}`
    const cut = length > TOOL_PREVIEW_CHARS
    // Slack: posted (the fake refuses blocks past Slack's limits), the link as a Slack link.
    const slackSent = JSON.stringify(slack.messagesOf(card.callId).map((m) => m.blocks))
    expect(slackSent.includes(`<${link}|full text in the inbox>`)).toBe(cut)
    expect(count(slackSent)).toBe(cut ? TOOL_PREVIEW_CHARS : length)
    // Discord: posted within its limits, the link as markdown.
    expect(discord.rejected).toEqual([])
    const discordSent = JSON.stringify(
      discord
        .channelMessages()
        .filter((m) => JSON.stringify(m.components).includes(card.callId))
        .map((m) => m.embeds),
    )
    expect(discordSent.includes(`[full text in the inbox](${link})`)).toBe(cut)
    expect(count(discordSent)).toBe(cut ? TOOL_PREVIEW_CHARS : length)
    // The inbox: the link as a real link.
    const inbox = (await (
      await fetch(`${tb.url}/inbox/api/cards`, { headers: { cookie: inboxCookie(tb.url) } })
    ).json()) as { cards: WebCardView[] }
    const view = inbox.cards.find((c) => c.callId === card.callId)
    expect(view?.questions[0]?.detailHtml?.includes(`href="${link}"`)).toBe(cut)
    expect(count(view?.questions[0]?.detailHtml ?? '')).toBe(cut ? TOOL_PREVIEW_CHARS : length)
    await slackUse(card.callId, { verb: 'approve' })
    expect((await viaCommand).body).toEqual(allow)
  })
})

describe('PreToolUse', () => {
  it('Approve and Reject answer permissionDecision with a reason, the same through both hooks', async () => {
    const viaCommand = commandHook(fixture('pre-tool-use-bash'))
    const a = await nextCard()
    await discordClick(a.callId, { verb: 'reject' })
    const deny = {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'Rejected by Linus in askbridge.',
      },
    }
    expect((await viaCommand).body).toEqual(deny)
    const viaHttp = httpHook(fixture('pre-tool-use-bash'))
    const b = await nextCard()
    await discordClick(b.callId, { verb: 'reject' })
    expect((await viaHttp).body).toEqual(deny)
  })
})

describe('Elicitation', () => {
  it('accept: choices in Slack, an email typed in a form (an invalid one refused first), Submit', async () => {
    const viaHttp = httpHook(fixture('elicitation-form'))
    const card = await nextCard()
    await slackUse(card.callId, { verb: 'choose', q: 0, o: 1 })
    await slackUse(card.callId, { verb: 'other', q: 2 })
    const view = await until(() => slack.openViewOf(grace.id), 'the form')
    await slack.submitView(grace.id, view.id, { answer: { text: 'not-an-email' } })
    // Refused privately, and nothing is kept: the person opens the form again.
    await until(
      () => slack.noticesFor(grace.id).includes('Contact email must be an email address; please try again.'),
      `the private refusal (notices: ${JSON.stringify(slack.noticesFor(grace.id))})`,
    )
    expect((await tb.bridge.store.getCard<CardState>(card))?.state.drafts.contact).toBeUndefined()
    await slackUse(card.callId, { verb: 'other', q: 2 })
    const again = await until(() => slack.openViewOf(grace.id), 'the form again')
    await slack.submitView(grace.id, again.id, { answer: { text: 'ada@example.com' } })
    await until(
      async () => (await tb.bridge.store.getCard<CardState>(card))?.state.drafts.contact,
      'the email draft',
    )
    await slackUse(card.callId, { verb: 'submit' })
    expect(await viaHttp).toEqual({
      status: 200,
      body: {
        hookSpecificOutput: {
          hookEventName: 'Elicitation',
          action: 'accept',
          content: { environment: 'prod', notify: true, contact: 'ada@example.com' },
        },
      },
    })
  })

  it('decline through the command hook in Discord; cancel; no decision on timeout', async () => {
    const declined = commandHook(fixture('elicitation-form'))
    const d = await nextCard()
    // Decline is one click.
    await discordClick(d.callId, { verb: 'decline' })
    expect((await declined).body).toEqual({
      hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' },
    })

    const cancelled = httpHook(fixture('elicitation-form'))
    const c = await nextCard()
    const del = await fetch(`${tb.url}/v1/questions/${c.callId}`, { method: 'DELETE' })
    expect(del.status).toBe(200)
    expect((await cancelled).body).toEqual({
      hookSpecificOutput: { hookEventName: 'Elicitation', action: 'cancel' },
    })

    const late = commandHook(fixture('elicitation-form'), ['--timeout', '2'])
    await nextCard()
    expect((await late).body).toEqual({})
  })

  it('POST /v1/elicit: an MCP elicitation answered by people', async () => {
    const pending = fetch(`${tb.url}/v1/elicit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: 'How many replicas?',
        requestedSchema: {
          type: 'object',
          properties: { replicas: { type: 'integer', minimum: 1, maximum: 9, default: 3 } },
          required: ['replicas'],
        },
        agentId: 'claude-code:mcp-host',
      }),
    })
    const card = await nextCard()
    await slackUse(card.callId, { verb: 'submit' })
    const res = await pending
    expect(await res.json()).toEqual({ action: 'accept', content: { replicas: 3 } })
  })
})

describe('bad hook requests', () => {
  it('an unknown event or an unsupported schema: 400 naming it (exit 1 from the command hook), no card', async () => {
    const before = (await tb.bridge.store.listCards()).length
    const unknown = await httpHook({ session_id: 's', hook_event_name: 'SessionStart', source: 'startup' })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toEqual({
      error: {
        name: 'HttpError',
        code: 'UNSUPPORTED_HOOK',
        message:
          'hook_event_name "SessionStart" is not supported (askbridge handles PermissionRequest, PreToolUse, Elicitation, ElicitationResult, Notification, Stop)',
      },
    })
    const nested = fixture('elicitation-form')
    nested.requested_schema = { type: 'object', properties: { address: { type: 'object', properties: {} } } }
    const schema = await httpHook(nested)
    expect(schema.status).toBe(400)
    expect((schema.body as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'UNSUPPORTED_SCHEMA',
      message: 'requestedSchema properties.address: a nested object is not supported',
    })
    const command = await commandHook(nested)
    expect(command.code).toBe(1)
    expect(command.stderr).toContain(
      'UNSUPPORTED_SCHEMA: requestedSchema properties.address: a nested object is not supported',
    )
    expect(command.body).toBeUndefined()
    const notJson = await commandHook('{oops')
    expect(notJson.code).toBe(1)
    expect(notJson.stderr).toContain("stdin is not the hook's JSON")
    expect((await tb.bridge.store.listCards()).length).toBe(before)
  })

  it('Notification and Stop post nothing by default and answer {}', async () => {
    expect(await httpHook(fixture('notification'))).toEqual({ status: 200, body: {} })
    expect((await commandHook(fixture('stop'))).body).toEqual({})
  })
})

describe('reasons on approvals', () => {
  /** A person uses the web inbox's action endpoint, as the inbox page does. */
  async function inbox(callId: string, action: Record<string, unknown>, name = 'Ada') {
    const res = await fetch(`${tb.url}/inbox/api/cards/${callId}/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: inboxCookie(tb.url) },
      body: JSON.stringify({ action, person: { name } }),
    })
    expect(res.status).toBe(200)
  }

  it('a reason typed with Reject is the deny message; the answer stays the label; the API and audit carry it', async () => {
    const viaCommand = commandHook(fixture('permission-request-bash'))
    const card = await nextCard()
    await inbox(card.callId, { type: 'reject', reason: '  not on a Friday  ' })
    expect((await viaCommand).body).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: 'not on a Friday' },
      },
    })
    const view = (await (await fetch(`${tb.url}/v1/questions/${card.callId}`)).json()) as Record<
      string,
      unknown
    >
    expect(view.answers).toEqual([{ id: 'permission', selected: ['Reject'] }])
    expect(view.reason).toBe('not on a Friday')
    const events = await tb.bridge.store.listAudit({ callId: card.callId })
    expect(events.find((e) => e.kind === 'completed')?.detail).toEqual({
      answers: [{ id: 'permission', selected: ['Reject'] }],
      reason: 'not on a Friday',
    })
  })

  it('"Reject with reason…" in a Slack form and "Approve with reason…" in a Discord form reach the hook', async () => {
    const viaHttp = httpHook(fixture('permission-request-bash'))
    const a = await nextCard()
    await slackUse(a.callId, { verb: 'reject', q: 0 })
    const view = await until(() => slack.openViewOf(grace.id), 'the reason form')
    await slack.submitView(grace.id, view.id, { answer: { text: 'wipe node_modules after the release' } })
    expect((await viaHttp).body).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: 'wipe node_modules after the release' },
      },
    })

    const viaCommand = commandHook(fixture('pre-tool-use-bash'))
    const b = await nextCard()
    const opened = await discordClick(b.callId, { verb: 'approve', q: 0 })
    const submitted = await discord.submitModal(opened, 'release window is open', linus)
    await waitResponded(submitted)
    expect((await viaCommand).body).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'release window is open',
      },
    })
    const view2 = (await (await fetch(`${tb.url}/v1/questions/${b.callId}`)).json()) as Record<
      string,
      unknown
    >
    expect(view2.answers).toEqual([{ id: 'permission', selected: ['Approve'] }])
    expect(view2.reason).toBe('release window is open')
  })

  it('a reason typed with Approve goes to PreToolUse as permissionDecisionReason', async () => {
    const viaHttp = httpHook(fixture('pre-tool-use-bash'))
    const card = await nextCard()
    await inbox(card.callId, { type: 'approve', reason: 'release window is open' })
    expect((await viaHttp).body).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'release window is open',
      },
    })
  })

  it('askbridge ask --json prints the reason beside the answer, and the exit code stays 4', async () => {
    const asked = askbridge(
      [
        'ask',
        '--approval',
        '--question',
        'Deploy 4f2c1?',
        '--detail',
        'prod',
        '--json',
        '--agent',
        'deploy-bot',
      ],
      {
        cwd,
        env: { ASKBRIDGE_URL: tb.url },
      },
    )
    const card = await until(async () => {
      const cards = await tb.bridge.store.listCards<CardState>()
      return cards.map((c) => c.state).find((c) => c.agentId === 'deploy-bot' && c.status === 'open')
    }, 'the deploy card')
    // Open in the store comes before the inbox has recorded its copy; act once it is there, as a person would.
    await postedOn(tb, card, ['web'])
    await inbox(card.callId, { type: 'reject', reason: 'tests are red' }, 'Grace')
    const run = await asked
    expect(run.code).toBe(4)
    expect(JSON.parse(run.stdout)).toMatchObject({
      answers: [{ id: expect.any(String), selected: ['Reject'] }],
      answeredBy: 'Grace',
      reason: 'tests are red',
    })
    expect(run.stderr).toContain('askbridge: rejected by Grace: tests are red')
  })
})

/**
 * Every event and every reviewer action, through the HTTP hook and the command hook, acted on in
 * the fake Slack and in the fake Discord (all four pairings): each gives the one exact answer,
 * so the CLI and HTTP paths give the same decision for the same request.
 */
describe('every event, action, hook and surface', () => {
  type Surface = 'slack' | 'discord'
  type Hook = 'http' | 'command'
  const REASON = 'not during the freeze'
  const by: Record<Surface, string> = { slack: 'Grace', discord: 'Linus' }

  const use = (on: Surface, callId: string, ref: Omit<ComponentRef, 'callId' | 'agent'>) =>
    on === 'slack' ? slackUse(callId, ref) : discordClick(callId, ref)

  /** Open the reason form of Approve or Reject and send it with `REASON`. */
  async function withReason(on: Surface, callId: string, verb: 'approve' | 'reject') {
    if (on === 'slack') {
      await slackUse(callId, { verb, q: 0 })
      const view = await until(() => slack.openViewOf(grace.id), 'the reason form')
      await slack.submitView(grace.id, view.id, { answer: { text: REASON } })
      return
    }
    const opened = await discordClick(callId, { verb, q: 0 })
    await waitResponded(await discord.submitModal(opened, REASON, linus))
  }

  const always = {
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
  }
  const preToolUse = (permissionDecision: string, permissionDecisionReason: string) => ({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason },
  })
  const elicitation = (result: Record<string, unknown>) => ({
    hookSpecificOutput: { hookEventName: 'Elicitation', ...result },
  })

  interface Case {
    fixture: string
    act: (on: Surface, callId: string) => Promise<unknown>
    expected: (on: Surface) => unknown
  }
  const cases: Record<string, Case> = {
    'PermissionRequest, Approve -> allow': {
      fixture: 'permission-request-bash',
      act: (on, id) => use(on, id, { verb: 'approve' }),
      expected: () => allow,
    },
    'PermissionRequest, Reject with a reason -> deny with it': {
      fixture: 'permission-request-bash',
      act: (on, id) => withReason(on, id, 'reject'),
      expected: () => ({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: { behavior: 'deny', message: REASON },
        },
      }),
    },
    'PermissionRequest, Always approve -> allow plus the rule': {
      fixture: 'permission-request-bash',
      act: (on, id) => use(on, id, { verb: 'always' }),
      expected: () => always,
    },
    'PreToolUse, Approve -> allow naming who': {
      fixture: 'pre-tool-use-bash',
      act: (on, id) => use(on, id, { verb: 'approve' }),
      expected: (on) => preToolUse('allow', `Approved by ${by[on]} in askbridge.`),
    },
    'PreToolUse, Reject with a reason -> deny with it': {
      fixture: 'pre-tool-use-bash',
      act: (on, id) => withReason(on, id, 'reject'),
      expected: () => preToolUse('deny', REASON),
    },
    'Elicitation, a choice, the optional email skipped, Submit -> accept with typed content': {
      fixture: 'elicitation-form',
      act: async (on, id) => {
        await use(on, id, { verb: 'choose', q: 0, o: 1 })
        await use(on, id, { verb: 'skip', q: 2 })
        await use(on, id, { verb: 'submit' })
      },
      expected: () => elicitation({ action: 'accept', content: { environment: 'prod', notify: true } }),
    },
    'Elicitation, Decline in one click -> decline': {
      fixture: 'elicitation-form',
      act: (on, id) => use(on, id, { verb: 'decline' }),
      expected: () => elicitation({ action: 'decline' }),
    },
    'Elicitation, cancelled -> cancel': {
      fixture: 'elicitation-form',
      act: async (_on, id) => {
        expect((await fetch(`${tb.url}/v1/questions/${id}`, { method: 'DELETE' })).status).toBe(200)
      },
      expected: () => elicitation({ action: 'cancel' }),
    },
  }
  const pairings: Array<[Hook, Surface]> = [
    ['http', 'slack'],
    ['http', 'discord'],
    ['command', 'slack'],
    ['command', 'discord'],
  ]
  const run = async (hook: Hook, payload: unknown, timeout = 60): Promise<unknown> =>
    hook === 'http'
      ? (await httpHook(payload, `timeout=${timeout}`)).body
      : (await commandHook(payload, ['--timeout', String(timeout)])).body

  for (const [name, c] of Object.entries(cases)) {
    it.each(pairings)(`${name}: the %s hook, acted on in %s`, async (hook, on) => {
      const answer = run(hook, fixture(c.fixture))
      const card = await nextCard()
      await c.act(on, card.callId)
      expect(await answer).toEqual(c.expected(on))
    })
  }

  it.each([
    ['permission-request-bash', {}],
    ['elicitation-form', {}],
    [
      'pre-tool-use-bash',
      {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'ask',
          permissionDecisionReason: 'Nobody decided in askbridge in time; asking here instead.',
        },
      },
    ],
  ])(
    '%s: nobody decides before the hook timeout -> no decision (PreToolUse: ask) through both hooks',
    async (name, expected) => {
      const viaHttp = run('http', fixture(name), 2)
      await nextCard()
      const viaCommand = run('command', fixture(name), 2)
      await nextCard()
      expect(await viaHttp).toEqual(expected)
      expect(await viaCommand).toEqual(expected)
    },
  )

  it('a $ref, or an unknown event through the command hook: refused by name, nothing posted anywhere', async () => {
    const cards = (await tb.bridge.store.listCards()).length
    const slackPosts = slack.messages.size
    const discordPosts = discord.channelMessages().length
    const withRef = fixture('elicitation-form')
    withRef.requested_schema = {
      type: 'object',
      properties: { region: { $ref: '#/$defs/region' } },
      $defs: { region: { type: 'string' } },
    }
    const viaHttp = await httpHook(withRef)
    expect(viaHttp.status).toBe(400)
    const refused = (viaHttp.body as { error: { code: string; message: string } }).error
    expect(refused.code).toBe('UNSUPPORTED_SCHEMA')
    expect(refused.message).toContain('$ref')
    const viaCommand = await commandHook(withRef)
    expect(viaCommand.code).toBe(1)
    expect(viaCommand.stderr).toContain(`UNSUPPORTED_SCHEMA: ${refused.message}`)
    const unknown = await commandHook({ session_id: 's', hook_event_name: 'SessionStart', source: 'startup' })
    expect(unknown).toEqual({
      code: 1,
      stderr: expect.stringContaining('UNSUPPORTED_HOOK: hook_event_name "SessionStart" is not supported'),
      body: undefined,
    })
    expect((await tb.bridge.store.listCards()).length).toBe(cards)
    expect(slack.messages.size).toBe(slackPosts)
    expect(discord.channelMessages().length).toBe(discordPosts)
  })
})
