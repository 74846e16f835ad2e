import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { FakeSlack } from '../fakes/slack/server.js'
import { until } from '../server/helpers.js'
import { fakeUser } from '../slack/rig.js'
import { BIN, ensureBuilt } from './built.js'
import { askbridge } from './run.js'

let cwd: string
beforeAll(async () => {
  await ensureBuilt()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-serve-'))
}, 120_000)
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

test('bad configuration: one message naming every problem, no stack trace', async () => {
  const r = await askbridge(['serve'], {
    cwd,
    env: {
      ASKBRIDGE_PORT: 'eighty',
      ASKBRIDGE_HOST: '0.0.0.0',
      DISCORD_CHANNEL_ID: 'general',
      SLACK_BOT_TOKEN: 'not-a-slack-token',
    },
  })
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('invalid configuration')
  for (const key of ['ASKBRIDGE_PORT', 'ASKBRIDGE_API_TOKEN', 'DISCORD_CHANNEL_ID', 'SLACK_BOT_TOKEN']) {
    expect(r.stderr).toContain(key)
  }
  expect(r.stderr).not.toMatch(/\n\s+at /)
  expect(r.stderr).not.toContain('not-a-slack-token')
})

test('the database and the routes file are named in the same message as every other problem', async () => {
  const routes = join(cwd, 'routes.json')
  writeFileSync(routes, JSON.stringify({ routes: [{ name: 'oncall', destinations: [], quorum: 0 }] }))
  const r = await askbridge(['serve'], {
    cwd,
    env: {
      ASKBRIDGE_PORT: 'abc',
      ASKBRIDGE_DB: 'postgres://bridge:pw-not-shown@db/askbridge?schema=not-a-name',
      ASKBRIDGE_ROUTES: routes,
    },
  })
  expect(r.code).toBe(1)
  expect(r.stderr).toContain('ASKBRIDGE_PORT')
  expect(r.stderr).toMatch(/ASKBRIDGE_DB schema must be/)
  expect(r.stderr).toMatch(/ASKBRIDGE_ROUTES \(.*routes\.json\): .*quorum/)
  expect(r.stderr.match(/invalid configuration/g)).toHaveLength(1)
  expect(r.stderr).not.toContain('pw-not-shown')
  expect(r.stderr).not.toMatch(/\n\s+at /)

  // An empty sqlite path would open a throwaway database; a missing directory is named too.
  const more = await askbridge(['serve'], {
    cwd,
    env: { ASKBRIDGE_DB: 'sqlite:', ASKBRIDGE_ROUTES: join(cwd, 'missing.json') },
  })
  expect(more.code).toBe(1)
  expect(more.stderr).toContain('ASKBRIDGE_DB needs a file path')
  expect(more.stderr).toMatch(/ASKBRIDGE_ROUTES \(.*missing\.json\): cannot read/)
  const dir = await askbridge(['serve'], { cwd, env: { ASKBRIDGE_DB: join(cwd, 'no-such-dir', 'x.db') } })
  expect(dir.code).toBe(1)
  expect(dir.stderr).toMatch(/ASKBRIDGE_DB the directory .*no-such-dir does not exist/)
})

test('an unreachable PostgreSQL stops serve with ASKBRIDGE_DB and the refusal, never the password', async () => {
  const r = await askbridge(['serve'], {
    cwd,
    env: { ASKBRIDGE_PORT: '0', ASKBRIDGE_DB: 'postgres://bridge:pw-not-shown@127.0.0.1:1/askbridge' },
  })
  expect(r.code).toBe(1)
  expect(r.stderr).toMatch(
    /askbridge: cannot start: ASKBRIDGE_DB \(postgres:\/\/bridge:\*\*\*@127\.0\.0\.1:1\/askbridge\): cannot open the PostgreSQL database: .*ECONNREFUSED/,
  )
  expect(r.stderr).not.toContain('pw-not-shown')
  expect(r.stderr).not.toMatch(/\n\s+at /)
})

test('serve starts on the embedded defaults, logs JSON lines without secrets, stops on SIGTERM', async () => {
  const token = 'serve-test-token-123'
  const { child, served } = spawnServe({
    ASKBRIDGE_DB: join(cwd, 'serve.db'),
    ASKBRIDGE_API_TOKEN: token,
  })
  const url = await served.url
  const health = await fetch(`${url}/healthz`)
  expect(health.status).toBe(200)
  const unauth = await fetch(`${url}/v1/questions`, { headers: { authorization: 'Bearer wrong-token-here' } })
  expect(unauth.status).toBe(401)
  const ok = await fetch(`${url}/v1/questions`, { headers: { authorization: `Bearer ${token}` } })
  expect(await ok.json()).toEqual({ active: [], settled: [] })

  const exited = exitOf(child)
  child.kill('SIGTERM')
  expect(await exited).toEqual({ code: 0, signal: null })
  const lines = served
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
  const logs = lines.map((l) => JSON.parse(l) as { level: string; msg: string })
  expect(logs.map((l) => l.msg)).toEqual(
    expect.arrayContaining(['askbridge is listening', 'askbridge is shutting down', 'askbridge stopped']),
  )
  expect(logs.some((l) => l.msg === 'request')).toBe(true)
  expect(served.output()).not.toContain(token)
})

test('with a token every route but /healthz needs it, Slack clicks pass by signature, and no secret reaches the log', async () => {
  const token = 'serve-api-token-4f2c1'
  const secrets = {
    botToken: 'xoxb-fake-7e1d',
    signingSecret: 'serve-signing-secret-9a3b',
  }
  const fake = await FakeSlack.start(secrets)
  const { child, served } = spawnServe({
    ASKBRIDGE_DB: join(cwd, 'secrets.db'),
    ASKBRIDGE_API_TOKEN: token,
    ASKBRIDGE_LOG_LEVEL: 'debug',
    SLACK_BOT_TOKEN: secrets.botToken,
    SLACK_SIGNING_SECRET: secrets.signingSecret,
    SLACK_CHANNEL: 'C0SECRETS',
    SLACK_API_URL: fake.apiUrl,
  })
  try {
    const url = await served.url
    fake.interactivityUrl = `${url}/slack/events`
    const routes: Array<[string, string]> = [
      ['POST', '/v1/ask'],
      ['GET', '/v1/questions'],
      ['GET', '/v1/questions/c1'],
      ['POST', '/v1/questions/c1/answer'],
      ['DELETE', '/v1/questions/c1'],
      ['GET', '/v1/agents/a/replies'],
      ['POST', '/v1/agents/a/replies/c1/admit'],
      ['DELETE', '/v1/agents/a/replies/c1'],
      ['GET', '/v1/audit'],
      ['GET', '/metrics'],
      ['GET', '/inbox'],
      ['GET', '/inbox/api/cards'],
      ['GET', '/inbox/api/events'],
      ['POST', '/inbox/api/cards/c1/actions'],
    ]
    for (const [method, path] of routes) {
      const inbox = path.startsWith('/inbox')
      // The inbox takes no bearer token at all, the right one included: it has its own link.
      const tried = [
        undefined,
        'Bearer wrong-token-value',
        `Basic ${token}`,
        ...(inbox ? [`Bearer ${token}`] : []),
      ]
      for (const authorization of tried) {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: {
            ...(authorization ? { authorization } : {}),
            ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          },
          ...(method === 'POST' ? { body: '{}' } : {}),
        })
        const body = (await res.json()) as { error?: { code?: string } }
        expect([res.status, body.error?.code], `${method} ${path} ${authorization}`).toEqual([
          401,
          inbox ? 'INBOX_SIGN_IN_REQUIRED' : 'UNAUTHORIZED',
        ])
      }
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200)

    // The Slack webhook takes no bearer token: its signature is the check.
    const asking = fetch(`${url}/v1/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        callId: 'secrets-1',
        questions: [{ id: 'go', question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }],
      }),
    })
    const message = await until(() => fake.messagesOf('secrets-1')[0], 'card posted')
    const yes = await until(() => fake.liveActionIds('secrets-1').find((id) => id.endsWith('|c|0|0')), 'Yes')
    expect((await fake.sendHttp({ type: 'block_actions', actions: [] }, { signature: null })).status).toBe(
      401,
    )
    const click = await fake.deliver(
      fake.actionPayload(fakeUser({ userId: 'U0ANN', name: 'Ann' }), message, yes),
    )
    expect(click.timedOut).toBe(false)
    expect(await (await asking).json()).toMatchObject({ answers: [{ id: 'go', selected: ['Yes'] }] })
    // The printed sign-in link opens the inbox once; serve prints the next one, and logs neither.
    const link = await served.inbox
    const opened = await fetch(link, { redirect: 'manual' })
    expect(opened.status).toBe(302)
    const cookie = opened.headers.get('set-cookie')?.split(';')[0] ?? ''
    const page = await fetch(`${url}/inbox`, { headers: { cookie, accept: 'text/html' } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('askbridge inbox')
    const next = await until(
      () => /the next one: (http:\/\/\S+)/.exec(served.output())?.[1],
      'the next sign-in link',
    )
    expect(next).not.toBe(link)
    for (const code of [link, next].map((l) => new URL(l).searchParams.get('login') ?? 'none')) {
      expect(served.output().split(code).length - 1, 'printed once, never logged').toBe(1)
    }
  } finally {
    const exited = new Promise((resolve) => child.on('exit', resolve))
    child.kill('SIGTERM')
    await exited
    await fake.close()
  }
  expect(served.output()).toContain('askbridge stopped')
  for (const secret of [token, secrets.botToken, secrets.signingSecret])
    expect(served.output()).not.toContain(secret)
})

/** How a child ended: its own exit code, or the signal that killed it. */
function exitOf(child: ChildProcessByStdio<null, Readable, Readable>) {
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
}

test('SIGTERM the moment serve says it is running closes it cleanly, even with a slow module loader', async () => {
  // A loader that takes 5 ms a module: anything serve still loaded after its "running" line
  // would leave the signal's default action (a kill) in place that long.
  const slowHook = join(cwd, 'slow-hook.mjs')
  writeFileSync(
    slowHook,
    `export async function resolve(specifier, context, next) {
  await new Promise((r) => setTimeout(r, 5))
  return next(specifier, context)
}`,
  )
  const register = join(cwd, 'slow-register.mjs')
  writeFileSync(
    register,
    `import { register } from 'node:module'
import { pathToFileURL } from 'node:url'
register(pathToFileURL(${JSON.stringify(slowHook)}))`,
  )
  const { child, served } = spawnServe({
    ASKBRIDGE_DB: join(cwd, 'slow.db'),
    NODE_OPTIONS: `--import ${register}`,
  })
  const exited = exitOf(child)
  await served.url
  child.kill('SIGTERM')
  expect(await exited).toEqual({ code: 0, signal: null })
  expect(served.output()).toContain('askbridge stopped')
}, 60_000)

/** Follow a `serve` child's stderr: the inbox URL once it is listening, and everything it logged. */
/** `askbridge serve` (the built command) in the test folder on a free port, with `env` besides. */
function spawnServe(env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ASKBRIDGE_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return { child, served: watchServe(child) }
}

function watchServe(child: ChildProcessByStdio<null, Readable, Readable>) {
  let stderr = ''
  let found: (link: string) => void = () => {}
  const inbox = new Promise<string>((resolve) => {
    found = resolve
  })
  const url = new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      const m = /Web inbox: ((http:\/\/\S+)\/inbox\S*)/.exec(stderr)
      if (m?.[1] && m[2]) {
        found(m[1])
        resolve(m[2])
      }
    })
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)))
  })
  return { url, inbox, output: () => stderr }
}

test('serve on SQLite without sign-in or form fields loads no PostgreSQL driver, OpenID client or ajv', async () => {
  // Every module the process loads, ESM (a resolve hook) and CommonJS (Module._load), to a file.
  const loaded = join(cwd, 'loaded.txt')
  const esmHook = join(cwd, 'esm-hook.mjs')
  writeFileSync(
    esmHook,
    `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(${JSON.stringify(loaded)}, resolved.url + '\\n')
  return resolved
}`,
  )
  const register = join(cwd, 'register.mjs')
  writeFileSync(
    register,
    `import { register } from 'node:module'
import { pathToFileURL } from 'node:url'
register(pathToFileURL(${JSON.stringify(esmHook)}))`,
  )
  const cjsHook = join(cwd, 'cjs-hook.cjs')
  writeFileSync(
    cjsHook,
    `const Module = require('node:module')
const { appendFileSync } = require('node:fs')
const load = Module._load
Module._load = function (request, parent, isMain) {
  try { appendFileSync(${JSON.stringify(loaded)}, Module._resolveFilename(request, parent, isMain) + '\\n') } catch {}
  return load.apply(this, arguments)
}`,
  )
  const { child, served } = spawnServe({
    ASKBRIDGE_DB: join(cwd, 'lazy.db'),
    NODE_OPTIONS: `--require ${cjsHook} --import ${register}`,
  })
  const url = await served.url
  // An ask and its answer go through the store, the card and the inbox.
  const ask = await fetch(`${url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      callId: 'lazy-1',
      timeoutMs: 1,
      questions: [{ id: 'go', question: 'Ship?', options: [{ label: 'Yes' }, { label: 'No' }] }],
    }),
  })
  expect(await ask.json()).toMatchObject({ pending: true })
  const exited = exitOf(child)
  child.kill('SIGTERM')
  expect(await exited).toEqual({ code: 0, signal: null })
  const modules = readFileSync(loaded, 'utf8')
  // The hooks saw the bridge's own modules and its SQLite driver…
  expect(modules).toContain('/dist/src/store/sqlite.js')
  expect(modules).toMatch(/node_modules\/better-sqlite3\//)
  // …and none of what only PostgreSQL, sign-in or a typed form field needs.
  expect(modules).not.toMatch(/node_modules\/(pg|openid-client|jose|ajv|ajv-formats)\//)
  expect(modules).not.toContain('/dist/src/store/postgres.js')
})
