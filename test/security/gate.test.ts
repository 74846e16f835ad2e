/**
 * The attack suite of "an approval gate nobody can walk around": each test is one way the gated
 * agent (or another local process) tried to approve its own request, run against the real
 * `serve`, with the real OpenID Connect provider where sign-in is on. Every refusal is coded, and
 * no refused attempt changes the card.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import type { WebCardView } from '../../adapters/web/client/types.js'
import type { CardState } from '../../src/card/types.js'
import { ConfigError, parseConfig } from '../../src/config/env.js'
import { fixture } from '../helpers/claude-code.js'
import { CookieJar, send, signIn } from '../helpers/oidc.js'
import { deployApproval } from '../helpers/routing.js'
import { until } from '../helpers/service.js'
import { raw, type SecureBridge, sha256, startSecure } from './rig.js'

const TOKEN = 'api-token-of-every-agent'
/** A plain question (approvals are blocking only): timed asks use it. */
const prodQuestion = {
  id: 'deploy',
  header: 'Prod',
  question: 'Deploy 4f2c1 to production?',
  options: [{ label: 'Approve' }, { label: 'Reject' }],
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

const open: SecureBridge[] = []
afterEach(async () => {
  for (const b of open.splice(0)) await b.close()
})
async function start(options: Parameters<typeof startSecure>[0] = {}): Promise<SecureBridge> {
  const b = await startSecure(options)
  open.push(b)
  return b
}

/** The card of a call, straight from the store. */
async function cardOf(b: SecureBridge, callId: string, agentId = 'default'): Promise<CardState | undefined> {
  return (await b.bridge.store.getCard<CardState>({ agentId, callId }))?.state
}

/** Ask an approval over the API (blocking, or timed) and wait for its card. */
async function askApproval(
  b: SecureBridge,
  callId: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
) {
  const asking = raw(b.url, 'POST', '/v1/ask', {
    headers,
    body: { callId, questions: [deployApproval], ...extra },
  })
  asking.catch(() => {})
  const agentId = typeof extra.agentId === 'string' ? extra.agentId : 'default'
  await until(
    async () => (await cardOf(b, callId, agentId))?.status === 'open' || undefined,
    `card ${callId}`,
  )
  return { asking }
}

/** Wait until the inbox lists the call (its copy is recorded), as a person would before clicking. */
function inInbox(b: SecureBridge, callId: string) {
  return until(async () => {
    const r = await raw(b.url, 'GET', '/inbox/api/cards', { headers: { cookie: b.cookie } })
    return (r.body.cards as WebCardView[] | undefined)?.some((c) => c.callId === callId)
  }, `${callId} in the inbox`)
}

/** A Claude Code PermissionRequest for `kubectl delete ns prod`, through the http hook. */
async function permissionRequest(b: SecureBridge, headers: Record<string, string> = {}) {
  const payload = fixture('permission-request-bash')
  payload.tool_input = { command: 'kubectl delete ns prod', description: 'clean up' }
  const hook = raw(b.url, 'POST', '/v1/hooks/claude-code?timeout=120', { headers, body: payload })
  hook.catch(() => {})
  const card = await until(
    async () =>
      (await b.bridge.store.listCards<CardState>()).map((c) => c.state).find((c) => c.status === 'open'),
    'the hook card',
  )
  return { hook, card, toolInput: payload.tool_input }
}

describe('every path is classified once', () => {
  it('with sign-in on, /%2e//inbox and /.//inbox are 400 BAD_PATH, with the API token or nothing; the hook stays unanswered', async () => {
    const b = await start({ oidc: true, env: { ASKBRIDGE_API_TOKEN: TOKEN } })
    const { hook, card } = await permissionRequest(b, bearer(TOKEN))
    const action = { action: { type: 'approve' }, person: { name: 'agent' } }
    for (const prefix of ['/%2e/', '/./', '/', '/%2E/', '/x/..', '/x/%2e%2e']) {
      for (const headers of [bearer(TOKEN), {}]) {
        const list = await raw(b.url, 'GET', `${prefix}/inbox/api/cards`, { headers })
        expect([list.status, list.body.error?.code], `${prefix} list`).toEqual([400, 'BAD_PATH'])
        const act = await raw(b.url, 'POST', `${prefix}/inbox/api/cards/${card.callId}/actions`, {
          headers,
          body: action,
        })
        expect([act.status, act.body.error?.code], `${prefix} act`).toEqual([400, 'BAD_PATH'])
      }
    }
    // Encoded slashes and empty segments anywhere, on the API side too.
    for (const path of [
      '/v1//questions',
      '/inbox%2Fapi/cards',
      '/v1/questions/a%2Fb',
      '/inbox/api/cards/x%5C..',
    ]) {
      const r = await raw(b.url, 'GET', path, { headers: bearer(TOKEN) })
      expect([r.status, r.body.error?.code], path).toEqual([400, 'BAD_PATH'])
    }
    // The canonical path still needs a session; the bearer token is not one.
    const direct = await raw(b.url, 'GET', '/inbox/api/cards', { headers: bearer(TOKEN) })
    expect(direct.status).toBe(401)
    expect((await cardOf(b, card.callId, card.agentId))?.status).toBe('open')
    expect(
      (await b.bridge.store.listAudit({ callId: card.callId })).some((e) => e.kind === 'completed'),
    ).toBe(false)
    const cancel = await raw(b.url, 'DELETE', `/v1/questions/${card.callId}?agentId=${card.agentId}`, {
      headers: bearer(TOKEN),
    })
    expect(cancel.status).toBe(200)
    expect((await hook).body).not.toMatchObject({ hookSpecificOutput: { decision: { behavior: 'allow' } } })
  })
})

describe('agents and reviewers hold different credentials', () => {
  it('without sign-in, the agent’s own process cannot use the inbox: not with the API token, not from loopback with nothing', async () => {
    for (const env of [{ ASKBRIDGE_API_TOKEN: TOKEN }, {}]) {
      const b = await start({ env })
      const headers = 'ASKBRIDGE_API_TOKEN' in env ? bearer(TOKEN) : {}
      await askApproval(b, 'self-1', headers)
      await inInbox(b, 'self-1')
      const list = await raw(b.url, 'GET', '/inbox/api/cards', { headers })
      expect([list.status, list.body.error?.code]).toEqual([401, 'INBOX_SIGN_IN_REQUIRED'])
      const act = await raw(b.url, 'POST', '/inbox/api/cards/self-1/actions', {
        headers,
        body: { action: { type: 'approve' }, person: { name: 'agent' } },
      })
      expect([act.status, act.body.error?.code]).toEqual([401, 'INBOX_SIGN_IN_REQUIRED'])
      // The old ?token= link and cookie are no way in either.
      const link = await raw(b.url, 'GET', `/inbox?token=${TOKEN}`, { headers })
      expect(link.status).toBe(401)
      const cookie = await raw(b.url, 'GET', '/inbox/api/cards', {
        headers: { cookie: `askbridge_token=${TOKEN}` },
      })
      expect(cookie.status).toBe(401)
      expect((await cardOf(b, 'self-1'))?.status).toBe('open')
      // The person with the printed link answers.
      const ok = await raw(b.url, 'POST', '/inbox/api/cards/self-1/actions', {
        headers: { cookie: b.cookie, origin: b.url },
        body: { action: { type: 'approve' }, person: { name: 'Ann' } },
      })
      expect(ok.body.ok).toBe(true)
      await b.close()
      open.splice(open.indexOf(b), 1)
    }
  })

  it('agent tokens: the agent comes from the token, an ask-scoped token cannot answer, and one agent cannot touch another’s calls', async () => {
    const b = await start({
      tokens: [
        { token: 'deploy-bot-token-1', agent: 'deploy-bot', scopes: ['ask'] },
        { token: 'other-bot-token-22', agent: 'other-bot', scopes: ['ask'] },
      ],
    })
    const deploy = bearer('deploy-bot-token-1')
    const other = bearer('other-bot-token-22')
    // A body naming another agent is refused; without agentId the token's agent asks.
    const spoof = await raw(b.url, 'POST', '/v1/ask', {
      headers: deploy,
      body: { agentId: 'other-bot', questions: [deployApproval] },
    })
    expect([spoof.status, spoof.body.error?.code]).toEqual([403, 'FORBIDDEN_AGENT'])
    const pending = await raw(b.url, 'POST', '/v1/ask', {
      headers: deploy,
      body: { callId: 'mine-1', timeoutMs: 50, questions: [prodQuestion] },
    })
    expect(pending.body).toMatchObject({ pending: true, callId: 'mine-1' })
    expect(await cardOf(b, 'mine-1', 'deploy-bot')).toBeDefined()
    // Its own calls: readable. Another agent's: refused, whatever it names.
    expect((await raw(b.url, 'GET', '/v1/questions/mine-1', { headers: deploy })).status).toBe(200)
    for (const [method, path] of [
      ['GET', '/v1/questions/mine-1?agentId=deploy-bot'],
      ['DELETE', '/v1/questions/mine-1?agentId=deploy-bot'],
      ['GET', '/v1/agents/deploy-bot/replies'],
      ['POST', '/v1/agents/deploy-bot/replies/mine-1/admit'],
      ['DELETE', '/v1/agents/deploy-bot/replies/mine-1'],
      ['GET', '/v1/audit?agentId=deploy-bot'],
      ['GET', '/v1/questions?agentId=deploy-bot'],
    ] as const) {
      const r = await raw(b.url, method, path, { headers: other })
      expect([r.status, r.body.error?.code], `${method} ${path}`).toEqual([403, 'FORBIDDEN_AGENT'])
    }
    // Listing without a name lists the token's own calls only.
    const listed = await raw(b.url, 'GET', '/v1/questions', { headers: other })
    expect(JSON.stringify(listed.body)).not.toContain('mine-1')
    // Answering is not an ask-scoped token's to do, not even on its own call.
    const answer = await raw(b.url, 'POST', '/v1/questions/mine-1/answer', {
      headers: deploy,
      body: { answers: [{ id: 'deploy', selected: ['Approve'] }] },
    })
    expect([answer.status, answer.body.error?.code]).toEqual([403, 'FORBIDDEN_SCOPE'])
    // The refusal concerns a card: it is audited with the token as actor, and the call is unchanged.
    const refusedAnswer = (await b.bridge.store.listAudit({ callId: 'mine-1' })).find(
      (e) => e.kind === 'interaction',
    )
    expect(refusedAnswer).toMatchObject({
      refused: true,
      code: 'forbidden-scope',
      actor: { platform: 'api', userId: 'agent-token:deploy-bot' },
    })
    // Agent tokens never open the inbox.
    for (const headers of [deploy, other]) {
      expect((await raw(b.url, 'GET', '/inbox/api/cards', { headers })).status).toBe(401)
    }
    // A wrong token of any length is one 401, and no token at all too (a token is configured).
    for (const headers of [bearer('x'), bearer('deploy-bot-token-2'), bearer('a'.repeat(200)), {}]) {
      const r = await raw(b.url, 'GET', '/v1/questions', { headers })
      expect([r.status, r.body.error?.code]).toEqual([401, 'UNAUTHORIZED'])
    }
    expect((await cardOf(b, 'mine-1', 'deploy-bot'))?.status).toBe('continued')
    // Tokens never reach the log.
    expect(JSON.stringify(b.logs)).not.toMatch(/deploy-bot-token|other-bot-token/)
  })

  it('hook asks run as the session’s agent only under a token that covers it; no card is posted otherwise', async () => {
    const b = await start({
      tokens: [
        { token: 'deploy-bot-token-1', agent: 'deploy-bot', scopes: ['ask'] },
        { token: 'claude-sessions-tok', agent: 'claude-code:*', scopes: ['ask'] },
      ],
    })
    const payload = fixture('permission-request-bash')
    const refused = await raw(b.url, 'POST', '/v1/hooks/claude-code?timeout=60', {
      headers: bearer('deploy-bot-token-1'),
      body: payload,
    })
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'FORBIDDEN_AGENT'])
    expect(await b.bridge.store.listCards()).toEqual([])
    const { hook, card } = await permissionRequest(b, bearer('claude-sessions-tok'))
    expect(card.agentId).toMatch(/^claude-code:/)
    const cancel = await raw(b.url, 'DELETE', `/v1/questions/${card.callId}`, {
      headers: bearer('claude-sessions-tok'),
    })
    expect(cancel.status).toBe(200)
    await hook
  })

  it('a bad tokens file is named with every other configuration problem at once', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const dir = mkdtempSync(join(tmpdir(), 'askbridge-tokens-'))
    const file = join(dir, 'tokens.json')
    writeFileSync(
      file,
      JSON.stringify({ tokens: [{ sha256: 'plain-token', agent: 'a b', scopes: ['root'] }] }),
    )
    let error: unknown
    try {
      parseConfig({ ASKBRIDGE_AGENT_TOKENS: file, ASKBRIDGE_PORT: 'nope' }, PLATFORMS)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems.join('\n')
    expect(problems).toContain('ASKBRIDGE_PORT')
    expect(problems).toContain('tokens.0.sha256 must be the SHA-256 of the token')
    expect(problems).toContain('tokens.0.agent')
    expect(problems).toContain('tokens.0.scopes')
    expect(problems).not.toContain('plain-token')
  })
})

describe('policy applies to every way of answering', () => {
  const emailRoute = (web?: boolean) => ({
    routes: [
      {
        name: 'prod',
        match: { intent: 'approval' },
        destinations: [{ platform: 'web' }],
        responders: {
          people: ['email:alice@example.com', 'email:bob@example.com'],
          ...(web === undefined ? {} : { web }),
        },
        quorum: 2,
      },
    ],
  })

  it('a route with responders and quorum 2, web unset: one caller approving under two typed names changes nothing', async () => {
    const b = await start({ routes: emailRoute() })
    await askApproval(b, 'q-1')
    await inInbox(b, 'q-1')
    for (const name of ['Alice', 'Bob']) {
      const r = await raw(b.url, 'POST', '/inbox/api/cards/q-1/actions', {
        headers: { cookie: b.cookie, origin: b.url },
        body: { action: { type: 'approve' }, person: { name } },
      })
      expect(r.status).toBe(200)
      expect(r.body.ok).toBe(false)
    }
    const card = await cardOf(b, 'q-1')
    expect(card?.status).toBe('open')
    expect(card?.approvals ?? []).toHaveLength(0)
    const refused = (await b.bridge.store.listAudit({ callId: 'q-1' })).filter(
      (e) => e.kind === 'interaction' && e.refused,
    )
    expect(refused.map((e) => [e.code, e.actor?.name])).toEqual([
      ['not-allowed', 'Alice'],
      ['not-allowed', 'Bob'],
    ])
  })

  it('POST /v1/questions/:callId/answer on a web: false route is refused and audited with its actor; on an open route it is audited too', async () => {
    const b = await start({
      env: { ASKBRIDGE_API_TOKEN: TOKEN },
      routes: {
        routes: [
          {
            name: 'locked',
            match: { header: 'Prod' },
            destinations: [{ platform: 'web' }],
            responders: { web: false },
          },
        ],
      },
    })
    const pending = await raw(b.url, 'POST', '/v1/ask', {
      headers: bearer(TOKEN),
      body: { callId: 'late-1', timeoutMs: 50, questions: [prodQuestion] },
    })
    expect(pending.body).toMatchObject({ pending: true })
    const answers = [{ id: 'deploy', selected: ['Approve'] }]
    const refused = await raw(b.url, 'POST', '/v1/questions/late-1/answer', {
      headers: bearer(TOKEN),
      body: { answers },
    })
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'NOT_ALLOWED'])
    const replies = await raw(b.url, 'GET', '/v1/agents/default/replies', { headers: bearer(TOKEN) })
    expect(replies.body.replies).toEqual([])
    const audit = await raw(b.url, 'GET', '/v1/audit?callId=late-1', { headers: bearer(TOKEN) })
    const events = audit.body.events as Array<Record<string, unknown>>
    expect(events.find((e) => e.kind === 'interaction')).toMatchObject({
      refused: true,
      code: 'not-allowed',
      actor: { platform: 'api', userId: 'api-token' },
    })
    expect((await cardOf(b, 'late-1'))?.status).toBe('continued')

    // A question no route restricts: the API answer is taken, and the audit names who gave it.
    const open = await raw(b.url, 'POST', '/v1/ask', {
      headers: bearer(TOKEN),
      body: {
        callId: 'late-2',
        timeoutMs: 50,
        questions: [{ id: 'c', question: 'Colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }],
      },
    })
    expect(open.body).toMatchObject({ pending: true })
    const ok = await raw(b.url, 'POST', '/v1/questions/late-2/answer', {
      headers: bearer(TOKEN),
      body: { answers: [{ id: 'c', selected: ['Red'] }] },
    })
    expect(ok.body).toEqual({ accepted: true })
    const taken = await raw(b.url, 'GET', '/v1/audit?callId=late-2', { headers: bearer(TOKEN) })
    expect(
      (taken.body.events as Array<Record<string, unknown>>).find((e) => e.kind === 'interaction'),
    ).toMatchObject({
      refused: false,
      actor: { platform: 'api', userId: 'api-token' },
    })
  })

  it('CSRF: an inbox write from another origin, even with the cookie, is 403 and changes nothing', async () => {
    const b = await start()
    await askApproval(b, 'csrf-1')
    await inInbox(b, 'csrf-1')
    for (const origin of ['http://evil.example', 'http://127.0.0.1:1', 'null']) {
      const r = await raw(b.url, 'POST', '/inbox/api/cards/csrf-1/actions', {
        headers: { cookie: b.cookie, origin },
        body: { action: { type: 'approve' }, person: { name: 'Eve' } },
      })
      expect([r.status, r.body.error?.code], origin).toEqual([403, 'FORBIDDEN_ORIGIN'])
    }
    expect((await cardOf(b, 'csrf-1'))?.status).toBe('open')
  })
})

describe('the requester is known', () => {
  it('a token naming its requester keeps that person from approving their own agent’s request', async () => {
    const b = await start({
      oidc: true,
      tokens: [
        {
          token: 'alice-agent-token',
          agent: 'deploy-bot',
          scopes: ['ask'],
          requester: 'email:alice@example.com',
        },
      ],
      routes: {
        routes: [
          {
            name: 'prod',
            match: { intent: 'approval' },
            destinations: [{ platform: 'web' }],
            responders: { people: ['email:alice@example.com', 'email:bob@example.com'] },
            excludeRequester: true,
          },
        ],
      },
    })
    const { asking } = await askApproval(b, 'req-1', bearer('alice-agent-token'), { agentId: 'deploy-bot' })
    const act = async (email: string) => {
      const jar = await signIn(b.url, email, new CookieJar())
      const me = (await (await send(jar, new URL('/inbox/api/me', b.url))).json()) as { csrf: string }
      const res = await send(jar, new URL('/inbox/api/cards/req-1/actions?agentId=deploy-bot', b.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrf, origin: b.url },
        body: JSON.stringify({ action: { type: 'approve' } }),
      })
      return (await res.json()) as { ok: boolean }
    }
    expect((await act('alice@example.com')).ok).toBe(false)
    expect((await cardOf(b, 'req-1', 'deploy-bot'))?.status).toBe('open')
    expect((await act('bob@example.com')).ok).toBe(true)
    expect(await asking).toMatchObject({ body: { answers: [{ id: 'deploy', selected: ['Approve'] }] } })
  })

  it('a people entry naming the agents a person runs makes them its requester', async () => {
    const b = await start({
      oidc: true,
      routes: {
        people: { 'alice@example.com': { agents: ['deploy-*'] } },
        routes: [
          {
            name: 'prod',
            match: { intent: 'approval' },
            destinations: [{ platform: 'web' }],
            responders: { people: ['email:alice@example.com', 'email:bob@example.com'] },
            excludeRequester: true,
          },
        ],
      },
    })
    expect(b.logs.some((l) => l.message === 'excludeRequester cannot exclude anyone yet')).toBe(false)
    const { asking } = await askApproval(b, 'ppl-1', {}, { agentId: 'deploy-api' })
    const jar = await signIn(b.url, 'alice@example.com', new CookieJar())
    const me = (await (await send(jar, new URL('/inbox/api/me', b.url))).json()) as { csrf: string }
    const res = await send(jar, new URL('/inbox/api/cards/ppl-1/actions?agentId=deploy-api', b.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrf, origin: b.url },
      body: JSON.stringify({ action: { type: 'approve' } }),
    })
    expect(((await res.json()) as { ok: boolean }).ok).toBe(false)
    expect((await cardOf(b, 'ppl-1', 'deploy-api'))?.status).toBe('open')
    await raw(b.url, 'DELETE', '/v1/questions/ppl-1?agentId=deploy-api')
    await asking
  })

  it('serve warns at start about routes with excludeRequester while no token names a requester', async () => {
    const b = await start({
      routes: {
        routes: [
          {
            name: 'prod',
            match: { intent: 'approval' },
            destinations: [{ platform: 'web' }],
            excludeRequester: true,
          },
        ],
      },
    })
    expect(b.logs.find((l) => l.message === 'excludeRequester cannot exclude anyone yet')).toMatchObject({
      level: 'warn',
      fields: { routes: ['prod'] },
    })
  })
})

describe('a record of what was approved', () => {
  /** Rebuilt here from the documentation: sorted-key compact JSON, then SHA-256. */
  const canonical = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : v && typeof v === 'object'
        ? `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
            .join(',')}}`
        : JSON.stringify(v)

  it('the decision’s audit entry holds the sha256 of the card’s questions and the hook’s tool input', async () => {
    const b = await start()
    const { hook, card, toolInput } = await permissionRequest(b)
    await inInbox(b, card.callId)
    const approve = await raw(
      b.url,
      'POST',
      `/inbox/api/cards/${card.callId}/actions?agentId=${card.agentId}`,
      {
        headers: { cookie: b.cookie, origin: b.url },
        body: { action: { type: 'approve' }, person: { name: 'Ann' } },
      },
    )
    expect(approve.body.ok).toBe(true)
    await hook
    const view = await raw(b.url, 'GET', `/v1/questions/${card.callId}?agentId=${card.agentId}`)
    const expected = sha256(canonical({ questions: view.body.questions, toolInput }))
    const audit = await raw(b.url, 'GET', `/v1/audit?callId=${card.callId}`)
    const events = audit.body.events as Array<{ kind: string; shown?: string; refused?: boolean }>
    expect(events.find((e) => e.kind === 'completed')?.shown).toBe(expected)
    expect(events.find((e) => e.kind === 'interaction' && e.refused === false)?.shown).toBe(expected)
    // The whole input the card cut short is the one hashed: another command gives another digest.
    expect(sha256(canonical({ questions: view.body.questions, toolInput: { command: 'ls' } }))).not.toBe(
      expected,
    )
  })
})

describe('rate limits', () => {
  it('an agent token past its requests a minute gets a coded 429 with Retry-After', async () => {
    const b = await start({
      tokens: [{ token: 'chatty-agent-token', agent: 'chatty', scopes: ['ask'], ratePerMinute: 3 }],
    })
    const headers = bearer('chatty-agent-token')
    for (let i = 0; i < 3; i++)
      expect((await raw(b.url, 'GET', '/v1/questions', { headers })).status).toBe(200)
    const limited = await raw(b.url, 'GET', '/v1/questions', { headers })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toMatchObject({ name: 'HttpError', code: 'RATE_LIMITED' })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(JSON.stringify(b.logs)).not.toContain('chatty-agent-token')
  })
})

describe('held', () => {
  it('0.0.0.0 without a token is refused', () => {
    expect(() => parseConfig({ ASKBRIDGE_HOST: '0.0.0.0' }, PLATFORMS)).toThrow(ConfigError)
  })
})
