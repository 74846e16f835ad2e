/**
 * The hook decisions beyond approve and reject, end to end: Claude Code's AskUserQuestion and
 * ExitPlanMode answered through PreToolUse, "Always approve" picking one of several
 * suggestions, "Edit, then allow", "Reject and stop the agent", a PreToolUse nobody answers, and
 * Codex's PreToolUse and PermissionRequest. Each goes through the HTTP hook or the command hook
 * (the built CLI) into a real bridge, is answered in the fake Slack (real Bolt), the fake
 * Discord (real discord.js) or the web inbox, and the hook's exact output JSON is checked.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ComponentRef } from '../../src/card/codec.js'
import type { CardState } from '../../src/card/types.js'
import { waitResponded } from '../discord/rig.js'
import type { FakeUser as DiscordUser, FakeDiscord } from '../fakes/discord/server.js'
import type { FakeSlack, FakeUser as SlackUser } from '../fakes/slack/server.js'
import { commandHook as command, fixture, httpHook as http } from '../helpers/claude-code.js'
import {
  discordClick as click,
  componentId,
  type HookRig,
  nextHookCard,
  startHookRig,
} from '../helpers/hook-rig.js'
import { until } from '../helpers/service.js'
import { inboxCookie, type TestBridge } from '../server/helpers.js'
import { blocksText } from '../slack/rig.js'

const grace: SlackUser = { id: 'U0GRACE', name: 'Grace' }
const linus: DiscordUser = {
  id: '210000000000000002',
  username: 'linus',
  global_name: 'Linus',
  locale: 'en-US',
}

let slack: FakeSlack
let discord: FakeDiscord
let tb: TestBridge
let cwd: string
let rig: HookRig
const seen = new Set<string>()

beforeAll(async () => {
  rig = await startHookRig({ slackChannel: 'C0DECIDE', tmpPrefix: 'askbridge-decisions-' })
  ;({ slack, discord, tb, cwd } = rig)
}, 60_000)

afterAll(async () => {
  await rig?.close()
})

type Hook = 'http' | 'command'
type Surface = 'slack' | 'discord' | 'inbox'

/** The hook's JSON answer through either hook (`extra`: query parameters, or the same as flags). */
async function run(hook: Hook, payload: unknown, extra: Record<string, string> = {}, timeout = 60) {
  if (hook === 'http') {
    const q = new URLSearchParams({ timeout: String(timeout), ...extra })
    const res = await http(tb.url, payload, q.toString())
    expect(res.status).toBe(200)
    return res.body
  }
  const flags = Object.entries(extra).flatMap(([k, v]) => [`--${k}`, v])
  const res = await command(tb.url, cwd, payload, ['--timeout', String(timeout), ...flags])
  expect(res.code).toBe(0)
  return res.body
}

/** The next new hook card, once Slack, Discord and the inbox have posted it. */
const nextCard = (tries = 400) => nextHookCard(tb, seen, { tries })

const idOf = (callId: string, ref: Omit<ComponentRef, 'callId' | 'agent'>) => componentId(tb, callId, ref)

/** What a person does on a card, the same words on every surface. */
interface Person {
  choose(card: CardState, q: number, o: number): Promise<void>
  pick(card: CardState, q: number, os: number[]): Promise<void>
  other(card: CardState, q: number, text: string): Promise<void>
  submit(card: CardState): Promise<void>
  approve(card: CardState): Promise<void>
  decline(card: CardState, q: number, feedback: string): Promise<void>
}

async function discordMessage(customId: string) {
  return until(() => discord.messageWith(customId), `Discord component ${customId}`)
}

const discordClick = (callId: string, ref: Omit<ComponentRef, 'callId' | 'agent'>) =>
  click(rig, callId, ref, linus)

async function discordSelect(callId: string, q: number, os: number[]) {
  const customId = await idOf(callId, { verb: 'set', q, o: 0 })
  const record = await discord.select((await discordMessage(customId)).id, customId, os.map(String), linus)
  await waitResponded(record)
}

async function slackForm(callId: string, ref: Omit<ComponentRef, 'callId' | 'agent'>, text: string) {
  await slack.use(grace, callId, await idOf(callId, ref))
  const view = await until(() => slack.openViewOf(grace.id), 'the form')
  await slack.submitView(grace.id, view.id, { answer: { text } })
}

async function inbox(card: CardState, action: Record<string, unknown>) {
  const res = await fetch(`${tb.url}/inbox/api/cards/${card.callId}/actions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: inboxCookie(tb.url) },
    body: JSON.stringify({ action, person: { name: 'Ada' } }),
  })
  expect(res.status).toBe(200)
}

const qid = (card: CardState, q: number) => card.questions[q]?.id as string
const label = (card: CardState, q: number, o: number) => card.questions[q]?.options?.[o]?.label as string

const people: Record<Surface, Person> = {
  slack: {
    choose: async (c, q, o) =>
      void (await slack.use(grace, c.callId, await idOf(c.callId, { verb: 'choose', q, o }))),
    pick: async (c, q, os) =>
      void (await slack.use(grace, c.callId, await idOf(c.callId, { verb: 'set', q }), {
        values: os.map(String),
      })),
    other: (c, q, text) => slackForm(c.callId, { verb: 'other', q }, text),
    submit: async (c) => void (await slack.use(grace, c.callId, await idOf(c.callId, { verb: 'submit' }))),
    approve: async (c) => void (await slack.use(grace, c.callId, await idOf(c.callId, { verb: 'approve' }))),
    decline: (c, q, text) => slackForm(c.callId, { verb: 'decline', q }, text),
  },
  discord: {
    // A single choice is a button, or a menu when the options do not fit on buttons.
    choose: async (c, q, o) => {
      const button = await idOf(c.callId, { verb: 'choose', q, o })
      if (discord.messageWith(button)) await discordClick(c.callId, { verb: 'choose', q, o })
      else await discordSelect(c.callId, q, [o])
    },
    pick: (c, q, os) => discordSelect(c.callId, q, os),
    other: async (c, q, text) => {
      const opened = await discordClick(c.callId, { verb: 'other', q })
      await waitResponded(await discord.submitModal(opened, text, linus))
    },
    submit: async (c) => void (await discordClick(c.callId, { verb: 'submit' })),
    approve: async (c) => void (await discordClick(c.callId, { verb: 'approve' })),
    decline: async (c, q, text) => {
      const opened = await discordClick(c.callId, { verb: 'decline', q })
      await waitResponded(await discord.submitModal(opened, text, linus))
    },
  },
  inbox: {
    choose: (c, q, o) => inbox(c, { type: 'choose', questionId: qid(c, q), label: label(c, q, o) }),
    pick: (c, q, os) =>
      inbox(c, { type: 'set', questionId: qid(c, q), labels: os.map((o) => label(c, q, o)) }),
    other: (c, q, text) => inbox(c, { type: 'other', questionId: qid(c, q), text }),
    submit: (c) => inbox(c, { type: 'submit' }),
    approve: (c) => inbox(c, { type: 'approve' }),
    decline: (c, _q, feedback) => inbox(c, { type: 'decline', feedback }),
  },
}
const by: Record<Surface, string> = { slack: 'Grace', discord: 'Linus', inbox: 'Ada' }
/** Who a form submission names: the fake Slack's modal payload carries the user name, not the display name. */
const formBy: Record<Surface, string> = { ...by, slack: 'u0grace' }

const pairings: Array<[Hook, Surface]> = [
  ['http', 'slack'],
  ['command', 'discord'],
  ['command', 'inbox'],
  ['http', 'inbox'],
]

const preToolUse = (permissionDecision: string, permissionDecisionReason: string, more: object = {}) => ({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason, ...more },
})

describe('AskUserQuestion through PreToolUse', () => {
  it.each(pairings)(
    'a single-select, a multi-select and an Other: the %s hook, answered in %s',
    async (hook, on) => {
      const payload = fixture('pre-tool-use-ask-user-question')
      const answer = run(hook, payload)
      const card = await nextCard()
      expect(card.kind).toBe('questions')
      expect(card.questions.map((q) => [q.header, q.question, q.multiSelect ?? false])).toEqual([
        ['Database', 'Which database should the service use?', false],
        ['Features', 'Which features do you want to enable?', true],
        ['Name', 'What should the service be called?', false],
      ])
      expect(card.questions[0]?.options?.[0]).toEqual({
        label: 'PostgreSQL',
        description: 'Relational, runs beside the API',
      })
      const person = people[on]
      await person.choose(card, 0, 0)
      await person.pick(card, 1, [0, 2])
      await person.other(card, 2, 'orders-api')
      await person.submit(card)
      expect(await answer).toEqual(
        preToolUse('allow', `Answered by ${by[on]} in askbridge.`, {
          updatedInput: {
            ...(payload.tool_input as object),
            answers: {
              'Which database should the service use?': 'PostgreSQL',
              'Which features do you want to enable?': 'Caching, Metrics',
              'What should the service be called?': 'orders-api',
            },
          },
        }),
      )
    },
  )

  it('malformed input (no questions, five options, a question asked twice): 400 BAD_TOOL_INPUT, nothing posted', async () => {
    const cards = (await tb.bridge.store.listCards()).length
    const slackPosts = slack.messages.size
    const base = fixture('pre-tool-use-ask-user-question')
    const input = base.tool_input as { questions: Array<{ options: unknown[] }> }
    const five = structuredClone(input)
    ;(five.questions[1] as { options: unknown[] }).options.push(
      { label: 'Tracing', description: 'x' },
      { label: 'Alerts', description: 'y' },
    )
    const twice = structuredClone(input)
    twice.questions[2] = { ...(twice.questions[0] as object), options: twice.questions[2]?.options ?? [] }
    const cases: Array<[unknown, string]> = [
      [{ questions: [] }, 'AskUserQuestion needs at least one question'],
      [five, 'a question has at most four options'],
      [twice, 'the question "Which database should the service use?" is asked twice'],
    ]
    for (const [toolInput, message] of cases) {
      const res = await http(tb.url, { ...base, tool_input: toolInput })
      expect(res.status).toBe(400)
      const error = (res.body as { error: { code: string; message: string } }).error
      expect(error.code).toBe('BAD_TOOL_INPUT')
      expect(error.message).toContain(message)
      // The command hook fails closed: "ask" on stdout, the reason on stderr.
      const viaCommand = await command(tb.url, cwd, { ...base, tool_input: toolInput })
      expect(viaCommand.code).toBe(0)
      expect(viaCommand.stderr).toContain(`BAD_TOOL_INPUT: ${error.message}`)
      expect((viaCommand.body as ReturnType<typeof preToolUse>).hookSpecificOutput.permissionDecision).toBe(
        'ask',
      )
    }
    expect((await tb.bridge.store.listCards()).length).toBe(cards)
    expect(slack.messages.size).toBe(slackPosts)
  })
})

describe('ExitPlanMode through PreToolUse', () => {
  it.each(pairings)('approve: the %s hook, answered in %s', async (hook, on) => {
    const answer = run(hook, fixture('pre-tool-use-exit-plan-mode'))
    const card = await nextCard()
    expect(card.kind).toBe('plan-review')
    expect(card.questions[0]?.detail).toContain('Wrap `upload()` in a retry with backoff')
    await people[on].approve(card)
    expect(await answer).toEqual(preToolUse('allow', `Plan approved by ${by[on]} in askbridge.`))
  })

  it.each(pairings)(
    'reject with feedback -> deny with the feedback: the %s hook, answered in %s',
    async (hook, on) => {
      const answer = run(hook, fixture('pre-tool-use-exit-plan-mode'))
      const card = await nextCard()
      await people[on].decline(card, 0, 'Use the existing retry helper in src/net.ts')
      expect(await answer).toEqual(preToolUse('deny', 'Use the existing retry helper in src/net.ts'))
    },
  )
})

describe('PreToolUse nobody answers', () => {
  it.each<Hook>(['http', 'command'])(
    'the %s hook answers ask (fails closed), and the card says the agent moved on',
    async (hook) => {
      const answer = run(hook, fixture('pre-tool-use-bash'), {}, 2)
      const card = await nextCard()
      expect(await answer).toEqual(
        preToolUse('ask', 'Nobody decided in askbridge in time; asking here instead.'),
      )
      await until(
        () => blocksText(slack.messagesOf(card.callId).at(-1)?.blocks ?? []).includes('the agent moved on'),
        'the Slack card says the agent moved on',
      )
    },
  )
})

describe('Always approve grants the one suggestion picked', () => {
  it.each(pairings)(
    'two suggestions, the rule picked by name: the %s hook, answered in %s',
    async (hook, on) => {
      const answer = run(hook, fixture('permission-request-suggestions'))
      const card = await nextCard()
      expect(card.questions[0]?.options?.map((o) => o.label)).toEqual([
        'Approve',
        'Reject',
        'Always approve: allow Bash(npm run test:*) in .claude/settings.local.json',
        'Always approve: switch to acceptEdits mode for this session',
      ])
      await people[on].choose(card, 0, 2)
      expect(await answer).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: {
            behavior: 'allow',
            updatedPermissions: [
              {
                type: 'addRules',
                rules: [{ toolName: 'Bash', ruleContent: 'npm run test:*' }],
                behavior: 'allow',
                destination: 'localSettings',
              },
            ],
          },
        },
      })
    },
  )
})

describe('more reviewer choices (?choices=stop,edit, --choices stop,edit)', () => {
  it.each(pairings)(
    'edit, then allow: the reviewer types the command to run, the %s hook, in %s',
    async (hook, on) => {
      const payload = fixture('pre-tool-use-bash')
      const answer = run(hook, payload, { choices: 'stop,edit' })
      const card = await nextCard()
      expect(card.questions[0]?.options?.map((o) => o.label)).toEqual([
        'Approve',
        'Reject',
        'Reject and stop the agent',
      ])
      await people[on].other(card, 0, 'git push origin release')
      expect(await answer).toEqual(
        preToolUse('allow', `Approved with an edit by ${formBy[on]} in askbridge.`, {
          updatedInput: { ...(payload.tool_input as object), command: 'git push origin release' },
        }),
      )
    },
  )

  it.each(pairings)(
    'edit, then allow on a PermissionRequest for an Edit: the %s hook, in %s',
    async (hook, on) => {
      const payload = fixture('permission-request-edit')
      const answer = run(hook, payload, { choices: 'edit' })
      const card = await nextCard()
      await people[on].other(card, 0, 'export const retries = 4')
      expect(await answer).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: {
            behavior: 'allow',
            updatedInput: { ...(payload.tool_input as object), new_string: 'export const retries = 4' },
          },
        },
      })
    },
  )

  it.each(pairings)('reject and stop the agent: interrupt, the %s hook, in %s', async (hook, on) => {
    const answer = run(hook, fixture('permission-request-bash'), { choices: 'stop' })
    const card = await nextCard()
    await people[on].choose(card, 0, 2)
    expect(await answer).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: `Rejected by ${by[on]} in askbridge.`, interrupt: true },
      },
    })
  })

  it('reject and stop on a PreToolUse: deny, and continue false with the stop reason', async () => {
    const answer = run('http', fixture('pre-tool-use-bash'), { choices: 'stop' })
    const card = await nextCard()
    await people.slack.choose(card, 0, 2)
    expect(await answer).toEqual({
      continue: false,
      stopReason: 'Stopped by Grace in askbridge.',
      ...preToolUse('deny', 'Rejected by Grace in askbridge.'),
    })
  })
})

describe('Codex (--client codex, ?client=codex)', () => {
  it.each(pairings)('PreToolUse: Approve -> allow, the %s hook, in %s', async (hook, on) => {
    const answer = run(hook, fixture('codex-pre-tool-use'), { client: 'codex' })
    const card = await nextCard()
    expect(card.agentId).toBe('codex:019a6b1c-5a7e-7d12-9c40-2f6f1e0c3b11')
    expect(card.questions[0]?.question).toBe('Allow Codex to use Bash?')
    await people[on].approve(card)
    expect(await answer).toEqual(preToolUse('allow', `Approved by ${by[on]} in askbridge.`))
  })

  it.each(pairings)(
    'PermissionRequest: Reject -> deny with a message, the %s hook, in %s',
    async (hook, on) => {
      const answer = run(hook, fixture('codex-permission-request'), { client: 'codex', choices: 'stop,edit' })
      const card = await nextCard()
      // Codex refuses updatedInput, updatedPermissions and interrupt: none is offered.
      expect(card.questions[0]?.options?.map((o) => o.label)).toEqual(['Approve', 'Reject'])
      expect(card.kind).toBe('approval')
      if (on === 'inbox') await inbox(card, { type: 'reject' })
      else if (on === 'slack')
        await slack.use(grace, card.callId, await idOf(card.callId, { verb: 'reject' }))
      else await discordClick(card.callId, { verb: 'reject' })
      expect(await answer).toEqual({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: { behavior: 'deny', message: `Rejected by ${by[on]} in askbridge.` },
        },
      })
    },
  )

  it.each<Hook>(['http', 'command'])(
    'a Codex PreToolUse nobody answers is denied (Codex runs a call answered "ask"): %s',
    async (hook) => {
      const answer = run(hook, fixture('codex-pre-tool-use'), { client: 'codex' }, 2)
      await nextCard()
      expect(await answer).toEqual(
        preToolUse('deny', 'Nobody decided in askbridge in time; the call is refused.'),
      )
    },
  )
})

describe('MCP forms', () => {
  it('an Elicitation Decline is one click in the inbox: decline', async () => {
    const answer = run('http', fixture('elicitation-form'))
    const card = await nextCard()
    await inbox(card, { type: 'decline' })
    expect(await answer).toEqual({ hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' } })
  })

  it('an enum field offers only its values: no free-text Other on Slack or Discord', async () => {
    const answer = run('command', fixture('elicitation-form'))
    const card = await nextCard()
    // environment (an enum) and notify (a boolean) take no typed answer; contact (a string) does.
    for (const q of [0, 1]) {
      const other = await idOf(card.callId, { verb: 'other', q })
      expect(discord.messageWith(other)).toBeUndefined()
      expect(JSON.stringify(slack.messagesOf(card.callId).map((m) => m.blocks))).not.toContain(other)
    }
    expect(discord.messageWith(await idOf(card.callId, { verb: 'other', q: 2 }))).toBeDefined()
    await discordClick(card.callId, { verb: 'decline' })
    expect(await answer).toEqual({ hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' } })
  })

  it('POST /v1/elicit accepts _meta and task; URL mode is refused with the reason', async () => {
    const pending = fetch(`${tb.url}/v1/elicit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: 'Which region?',
        requestedSchema: {
          type: 'object',
          properties: { region: { type: 'string', enum: ['eu', 'us'] } },
          required: ['region'],
        },
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't1' } },
        task: { ttl: 60_000 },
        agentId: 'claude-code:mcp-host',
      }),
    })
    const card = await nextCard()
    await inbox(card, { type: 'choose', questionId: 'region', label: 'us' })
    await inbox(card, { type: 'submit' })
    const res = await pending
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ action: 'accept', content: { region: 'us' } })

    const url = await fetch(`${tb.url}/v1/elicit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: 'Sign in to GitHub',
        mode: 'url',
        url: 'https://github.com/login/oauth/authorize?client_id=x',
        elicitationId: 'e1',
      }),
    })
    expect(url.status).toBe(400)
    expect(await url.json()).toEqual({
      error: {
        name: 'HttpError',
        code: 'UNSUPPORTED_SCHEMA',
        message:
          'URL-mode elicitation is not supported: the person who started it must open the URL and complete it themselves, so it cannot be handed to someone in chat',
      },
    })
  })

  it('ElicitationResult is recorded in the audit log (field names, never values) and answered {}', async () => {
    const before = await tb.bridge.store.listAudit({})
    const payload = {
      session_id: 'abc123',
      transcript_path: '/Users/dev/.claude/projects/demo/x.jsonl',
      cwd: '/Users/dev/demo',
      hook_event_name: 'ElicitationResult',
      mcp_server_name: 'deployer',
      elicitation_id: 'el-1',
      mode: 'form',
      action: 'accept',
      content: { environment: 'prod', token: 'secret-value' },
    }
    expect(await run('http', payload)).toEqual({})
    expect(await run('command', payload)).toEqual({})
    const events = (await tb.bridge.store.listAudit({})).slice(before.length)
    const details = events.filter((e) => e.kind === 'hook').map((e) => e.detail)
    expect(details).toEqual([
      {
        event: 'ElicitationResult',
        mcp_server_name: 'deployer',
        elicitation_id: 'el-1',
        action: 'accept',
        fields: ['environment', 'token'],
      },
      {
        event: 'ElicitationResult',
        mcp_server_name: 'deployer',
        elicitation_id: 'el-1',
        action: 'accept',
        fields: ['environment', 'token'],
      },
    ])
    expect(JSON.stringify(events)).not.toContain('secret-value')
  })
})

describe('a payload of any size renders within every platform limit', () => {
  it('a 400,000-character plan: posted to Slack and Discord within their limits, cut with a pointer', async () => {
    const payload = fixture('pre-tool-use-exit-plan-mode')
    payload.tool_input = { plan: `# Huge plan\n\n${'- step\n'.repeat(57_000)}` }
    const answer = run('http', payload)
    const card = await nextCard()
    expect(discord.rejected).toEqual([])
    expect(blocksText(slack.messagesOf(card.callId)[0]?.blocks ?? [])).toContain('more characters not shown')
    await people.inbox.approve(card)
    expect(await answer).toEqual(preToolUse('allow', 'Plan approved by Ada in askbridge.'))
  })

  it('AskUserQuestion at its largest (four questions, four long options each) posts everywhere', async () => {
    const payload = fixture('pre-tool-use-ask-user-question')
    const long = (n: number, c: string) => c.repeat(n)
    payload.tool_input = {
      questions: [1, 2, 3, 4].map((i) => ({
        question: `${long(1_990, 'q')}${i}?`,
        header: long(200, 'h'),
        options: [1, 2, 3, 4].map((k) => ({
          label: `${long(495, 'o')}${i}${k}`,
          description: long(2_000, 'd'),
        })),
        multiSelect: i % 2 === 0,
      })),
    }
    const answer = run('command', payload)
    // A card this big is several messages on each platform: give the posts longer.
    const card = await nextCard(2_000)
    expect(discord.rejected).toEqual([])
    expect(slack.messagesOf(card.callId).length).toBeGreaterThan(1)
    await fetch(`${tb.url}/v1/questions/${card.callId}`, { method: 'DELETE' })
    expect(await answer).toEqual(
      preToolUse('deny', 'The question was cancelled in askbridge; nobody will answer it.'),
    )
  })
})
