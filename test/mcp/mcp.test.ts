import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { BIN, ensureBuilt } from '../cli/built.js'
import { act, request, startBridge, type TestBridge, until } from '../server/helpers.js'

let b: TestBridge
let cwd: string
let client: Client

beforeAll(async () => {
  await ensureBuilt()
  b = await startBridge()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-mcp-'))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd,
    env: { PATH: process.env.PATH ?? '', ASKBRIDGE_URL: b.url, ASKBRIDGE_MCP_TIMEOUT: '20' },
    stderr: 'pipe',
  })
  client = new Client({ name: 'askbridge-test', version: '1.0.0' })
  await client.connect(transport)
}, 120_000)

afterAll(async () => {
  await client?.close()
  await b?.close()
  rmSync(cwd, { recursive: true, force: true })
})

type Text = { type: 'text'; text: string }
const textOf = (r: unknown) => ((r as { content?: Text[] }).content ?? []).map((c) => c.text).join('\n')

function cardAsking(text: string) {
  return until(async () => {
    const cards = (await request(b.url, 'GET', '/inbox/api/cards')).body.cards ?? []
    return cards.find((c) => c.status === 'open' && c.questions[0]?.question === text)
  }, `card "${text}"`)
}

test('lists ask_user_question and get_question_replies with their schemas', async () => {
  const { tools } = await client.listTools()
  const ask = tools.find((t) => t.name === 'ask_user_question')
  expect(ask?.description).toContain('NOT permission')
  const props = ask?.inputSchema.properties as Record<string, { items?: { properties?: object } }>
  expect(Object.keys(props)).toEqual(['questions', 'timeout'])
  expect(Object.keys(props.questions?.items?.properties ?? {})).toEqual([
    'id',
    'question',
    'header',
    'detail',
    'options',
    'multi_select',
  ])
  expect(tools.map((t) => t.name)).toContain('get_question_replies')
})

test('ask_user_question returns the answer a person gave in the inbox', async () => {
  const calling = client.callTool({
    name: 'ask_user_question',
    arguments: {
      questions: [
        {
          id: 'cache',
          question: 'Use Postgres or SQLite for the cache?',
          options: [{ label: 'Postgres' }, { label: 'SQLite', description: 'embedded' }],
        },
        {
          id: 'regions',
          question: 'Which regions?',
          options: [{ label: 'eu' }, { label: 'us' }],
          multi_select: true,
        },
      ],
    },
  })
  const card = await cardAsking('Use Postgres or SQLite for the cache?')
  expect(card.agentId).toBe('mcp')
  await act(b.url, card.callId, { type: 'choose', questionId: 'cache', label: 'SQLite' })
  await act(b.url, card.callId, { type: 'toggle', questionId: 'regions', label: 'eu' })
  await act(b.url, card.callId, { type: 'submit' })
  const result = await calling
  expect(result.isError).toBeFalsy()
  // The result says who answered: the name in the text, the platform and id in structuredContent.
  expect(JSON.parse(textOf(result))).toEqual({
    answers: [
      { id: 'cache', selected: ['SQLite'] },
      { id: 'regions', selected: ['eu'] },
    ],
    answeredBy: 'Ana',
  })
  expect(result.structuredContent).toMatchObject({
    callId: card.callId,
    answeredBy: { platform: 'web', name: 'Ana' },
  })
})

test('a timeout gives a plain pending result; get_question_replies collects and admits the late answer', async () => {
  const result = await client.callTool({
    name: 'ask_user_question',
    arguments: { questions: [{ id: 'name', question: 'What should we call the release?' }], timeout: 1 },
  })
  const text = textOf(result)
  expect(text).toMatch(/^PENDING/)
  expect(text).toContain('NOT an answer')
  expect(text).toContain('NOT permission')
  expect(text).toContain('get_question_replies')
  const callId = (result.structuredContent as { callId: string }).callId
  expect(text).toContain(callId)

  const none = await client.callTool({ name: 'get_question_replies', arguments: { callId } })
  expect(textOf(none)).toBe(
    `No late answer yet for callId ${callId}: it is still pending. This is not an answer. Try again later.`,
  )
  expect(none.structuredContent).toEqual({ replies: [], pending: [callId] })

  const collecting = client.callTool({ name: 'get_question_replies', arguments: { callId, wait: 20 } })
  await until(async () => {
    const cards = (await request(b.url, 'GET', '/inbox/api/cards')).body.cards ?? []
    return cards.find((c) => c.callId === callId && c.status === 'continued')
  }, 'continued card')
  await act(b.url, callId, { type: 'other', questionId: 'name', text: 'Blue Heron' }, 'Grace')
  const replies = await collecting
  expect(JSON.parse(textOf(replies))).toEqual({
    replies: [{ callId, answers: [{ id: 'name', selected: [], custom: 'Blue Heron' }], answeredBy: 'Grace' }],
  })
  expect(replies.structuredContent).toMatchObject({
    replies: [{ callId, answeredBy: { platform: 'web', name: 'Grace' } }],
  })
  // Admitted: the call is settled and the reply is gone.
  const projection = await request(b.url, 'GET', '/v1/questions?agentId=mcp')
  expect(projection.body.settled).toEqual(
    expect.arrayContaining([{ callId, answers: [{ id: 'name', selected: [], custom: 'Blue Heron' }] }]),
  )
  expect((await request(b.url, 'GET', '/v1/agents/mcp/replies')).body.replies).toEqual([])

  // Asked again about the same call, it says the answer was collected (and gives it), not "pending".
  const again = await client.callTool({ name: 'get_question_replies', arguments: { callId } })
  expect(again.isError).toBeFalsy()
  expect(textOf(again)).toContain('already answered')
  expect(textOf(again)).not.toMatch(/pending/i)
  expect(again.structuredContent).toEqual({
    replies: [{ callId, answers: [{ id: 'name', selected: [], custom: 'Blue Heron' }] }],
    alreadyCollected: true,
  })
})

test('get_question_replies names an unknown callId and a cancelled question instead of "still pending"', async () => {
  const unknown = await client.callTool({ name: 'get_question_replies', arguments: { callId: 'mcp-typo' } })
  expect(unknown.isError).toBe(true)
  expect(textOf(unknown)).toMatch(/^NOT_FOUND: no question has callId "mcp-typo"/)

  const result = await client.callTool({
    name: 'ask_user_question',
    arguments: { questions: [{ id: 'go', question: 'Go ahead with the rename?' }], timeout: 1 },
  })
  const callId = (result.structuredContent as { callId: string }).callId
  expect((await request(b.url, 'DELETE', `/v1/questions/${callId}`)).status).toBe(200)
  const cancelled = await client.callTool({ name: 'get_question_replies', arguments: { callId } })
  expect(textOf(cancelled)).toContain('was cancelled (ASK_CANCELLED)')
  expect(textOf(cancelled)).toContain('NOT permission')
  expect(cancelled.structuredContent).toEqual({ replies: [], cancelled: true })
})

test('tool input is validated: missing or mistyped fields and unknown keys are errors naming them', async () => {
  const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args })
  const missing = await call('ask_user_question', {})
  expect(missing.isError).toBe(true)
  expect(textOf(missing)).toMatch(/Input validation error[\s\S]*questions/)
  const empty = await call('ask_user_question', { questions: [] })
  expect([empty.isError, /questions/.test(textOf(empty))]).toEqual([true, true])
  const badTimeout = await call('ask_user_question', {
    questions: [{ id: 'a', question: 'b' }],
    timeout: 'soon',
  })
  expect([badTimeout.isError, /timeout/.test(textOf(badTimeout))]).toEqual([true, true])
  // The schema carries the real range: -1, or 1 to the timer limit in seconds.
  for (const timeout of [0, -2, 2_147_484, 1.5]) {
    const bad = await call('ask_user_question', { questions: [{ id: 'a', question: 'b' }], timeout })
    expect([timeout, bad.isError, /timeout/.test(textOf(bad))]).toEqual([timeout, true, true])
  }
  // camelCase instead of multi_select would silently ask a single-choice question.
  const camel = await call('ask_user_question', {
    questions: [
      { id: 'r', question: 'Regions?', options: [{ label: 'eu' }, { label: 'us' }], multiSelect: true },
    ],
  })
  expect(camel.isError).toBe(true)
  expect(textOf(camel)).toContain('multiSelect')
  const tooLong = await call('get_question_replies', { wait: 500 })
  expect([tooLong.isError, /wait/.test(textOf(tooLong))]).toEqual([true, true])
  // None of these reached the bridge as a question.
  const cards = (await request(b.url, 'GET', '/inbox/api/cards')).body.cards ?? []
  expect(
    cards.filter((c) => c.questions[0]?.question === 'Regions?' || c.questions[0]?.question === 'b'),
  ).toEqual([])
})

test('protocol errors come back as tool errors with their code', async () => {
  const result = await client.callTool({
    name: 'ask_user_question',
    arguments: {
      questions: [
        { id: 'a', question: 'One?' },
        { id: 'a', question: 'Two?' },
      ],
    },
  })
  expect(result.isError).toBe(true)
  expect(textOf(result)).toMatch(/^BAD_QUESTION: /)
})

test('the timeout schema carries the real bounds: -1, or 1 to 2147483 seconds', async () => {
  const { tools } = await client.listTools()
  const ask = tools.find((t) => t.name === 'ask_user_question')
  const props = (ask?.inputSchema.properties ?? {}) as Record<string, { anyOf?: unknown[] }>
  const timeout = props.timeout
  expect(timeout?.anyOf).toEqual([
    { type: 'number', const: -1 },
    expect.objectContaining({ type: 'integer', minimum: 1, maximum: 2_147_483 }),
  ])
  expect(JSON.stringify(timeout)).not.toContain('9007199254740991')
})

test('get_question_replies with nothing queued says whether anything is pending', async () => {
  // Its own agent id, so other tests' questions do not count.
  const quiet = new Client({ name: 'askbridge-test-quiet', version: '1.0.0' })
  await quiet.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd,
      env: { PATH: process.env.PATH ?? '', ASKBRIDGE_URL: b.url, ASKBRIDGE_AGENT_ID: 'mcp-quiet' },
      stderr: 'pipe',
    }),
  )
  try {
    const nothing = await quiet.callTool({ name: 'get_question_replies', arguments: {} })
    expect(nothing.isError).toBeFalsy()
    expect(textOf(nothing)).toBe(
      'Nothing pending: no question you asked is waiting for an answer, and no late answer is queued.',
    )
    expect(nothing.structuredContent).toEqual({ replies: [], pending: [] })

    const asked = await quiet.callTool({
      name: 'ask_user_question',
      arguments: { questions: [{ id: 'q', question: 'Anyone there?' }], timeout: 1 },
    })
    const callId = (asked.structuredContent as { callId: string }).callId
    const waiting = await quiet.callTool({ name: 'get_question_replies', arguments: {} })
    expect(textOf(waiting)).toBe(
      `No late answers yet. Still pending (1): ${callId}. This is not an answer. Try again later.`,
    )
    expect(waiting.structuredContent).toEqual({ replies: [], pending: [callId] })
  } finally {
    await quiet.close()
  }
})
