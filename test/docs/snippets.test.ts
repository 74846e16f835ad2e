/**
 * The docs' runnable snippets run. A fenced block right after a `<!-- test: {...} -->` comment in
 * README.md or docs/*.md is executed, in document order, by bash against one real
 * `askbridge serve` (the built CLI) that the quick start's own `serve` snippet starts. A person
 * answers each card the snippet asks through the web inbox, as the page does; the snippet's exit
 * code and output are checked. So a README example that no longer runs fails here.
 *
 * The comment's JSON: `serve: true` marks the block that starts the bridge; `answer` lists the
 * option labels to pick (or `approve` / `reject` for an approval), `when: "continued"` answers
 * only once the card's window has closed; `exit` (default 0), `stdout` and `stderr` (substrings)
 * are what the snippet must end with. `npx askbridge` and `askbridge` run the built bin, and
 * `localhost:8787` / `127.0.0.1:8787` name the bridge the test started (on a free port).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Root, RootContent } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { BIN, ensureBuilt, ROOT } from '../cli/built.js'

const specSchema = z.strictObject({
  serve: z.literal(true).optional(),
  answer: z.array(z.string()).optional(),
  when: z.literal('continued').optional(),
  exit: z.number().int().optional(),
  stdout: z.array(z.string()).optional(),
  stderr: z.array(z.string()).optional(),
})

interface Snippet {
  where: string
  code: string
  spec: z.infer<typeof specSchema>
}

const MARKER = /^<!--\s*test:\s*(\{[\s\S]*\})\s*-->$/

function snippetsOf(file: string): Snippet[] {
  const tree: Root = fromMarkdown(readFileSync(join(ROOT, file), 'utf8'), {
    extensions: [gfm()],
    mdastExtensions: [gfmFromMarkdown()],
  })
  const found: Snippet[] = []
  tree.children.forEach((node: RootContent, i) => {
    if (node.type !== 'html') return
    const marker = MARKER.exec(node.value.trim())
    if (!marker?.[1]) return
    const where = `${file}:${node.position?.start.line}`
    const next = tree.children[i + 1]
    if (next?.type !== 'code')
      throw new Error(`${where}: a test marker must come right before a fenced block`)
    found.push({ where, code: next.value, spec: specSchema.parse(JSON.parse(marker[1])) })
  })
  return found
}

const files = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
]
const all = files.flatMap((file) => snippetsOf(file))
const serveSnippets = all.filter((s) => s.spec.serve)
const runnable = all.filter((s) => !s.spec.serve)

/** `npx askbridge …` and `askbridge …` run the built bin, as an installed package would. */
const PRELUDE = `
askbridge() { "$ASKBRIDGE_TEST_NODE" "$ASKBRIDGE_TEST_BIN" "$@"; }
npx() { case "$1" in askbridge|askbridge@latest) shift; askbridge "$@";; *) command npx "$@";; esac; }
`

let cwd: string
let server: ChildProcess | undefined
let base = ''
const headers: Record<string, string> = {}

function shell(code: string, env: Record<string, string>): ChildProcess {
  return spawn('bash', ['-c', `${PRELUDE}\n${code}`], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: cwd,
      ASKBRIDGE_TEST_NODE: process.execPath,
      ASKBRIDGE_TEST_BIN: BIN,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
}

beforeAll(async () => {
  await ensureBuilt()
  cwd = mkdtempSync(join(tmpdir(), 'askbridge-snippets-'))
  const [serve] = serveSnippets
  if (!serve) throw new Error('no snippet is marked {"serve": true}')
  server = shell(serve.code, { ASKBRIDGE_PORT: '0' })
  let stderr = ''
  const link = await new Promise<string>((resolve, reject) => {
    server?.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      const printed = /Web inbox: (\S+)/.exec(stderr)
      if (printed?.[1]) resolve(printed[1])
    })
    server?.once('exit', (code) => reject(new Error(`${serve.where}: serve exited ${code}: ${stderr}`)))
  })
  // Open the link serve printed, as a person would, and keep what it sets.
  const opened = await fetch(link, { redirect: 'manual' })
  expect(opened.status).toBeLessThan(400)
  const cookies = opened.headers.getSetCookie().map((c) => c.split(';')[0])
  if (cookies.length > 0) headers.cookie = cookies.join('; ')
  base = new URL(link).origin
  const me = (await (await fetch(`${base}/inbox/api/me`, { headers })).json()) as { csrf?: string }
  if (me.csrf) headers['x-csrf-token'] = me.csrf
}, 120_000)

afterAll(async () => {
  if (server?.pid !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve))
    process.kill(-server.pid, 'SIGTERM')
    await exited
  }
  rmSync(cwd, { recursive: true, force: true })
})

interface Card {
  callId: string
  agentId: string
  kind: 'questions' | 'approval' | 'plan-review'
  status: string
  questions: Array<{
    id: string
    controls: Array<{ kind: string; mode?: 'one' | 'any'; options?: Array<{ label: string }> }>
  }>
}

async function cards(): Promise<Card[]> {
  const res = await fetch(`${base}/inbox/api/cards`, { headers })
  expect(res.status).toBe(200)
  return ((await res.json()) as { cards: Card[] }).cards
}

async function act(card: Card, action: Record<string, unknown>): Promise<Card> {
  const res = await fetch(
    `${base}/inbox/api/cards/${encodeURIComponent(card.callId)}/actions?agentId=${encodeURIComponent(card.agentId)}`,
    {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ action, person: { name: 'Grace' } }),
    },
  )
  const body = (await res.json()) as { ok?: boolean; message?: string; card: Card }
  expect([res.status, body.ok], JSON.stringify(body)).toEqual([200, true])
  return body.card
}

/** Answer the card with `labels`, through the inbox's own actions. */
async function answer(card: Card, labels: string[]): Promise<void> {
  if (card.kind !== 'questions') {
    const [verb] = labels
    if (verb !== 'approve' && verb !== 'reject')
      throw new Error(`answer an ${card.kind} with approve or reject`)
    await act(card, { type: verb })
    return
  }
  let now = card
  for (const question of card.questions) {
    const picker = question.controls.find((c) => c.kind === 'options')
    for (const label of labels) {
      if (!picker?.options?.some((o) => o.label === label)) continue
      now = await act(card, {
        type: picker.mode === 'any' ? 'toggle' : 'choose',
        questionId: question.id,
        label,
      })
    }
  }
  if (now.status === 'open' || now.status === 'continued') await act(card, { type: 'submit' })
}

async function run(snippet: Snippet): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const port = new URL(base).host
  const code = snippet.code.replaceAll('localhost:8787', port).replaceAll('127.0.0.1:8787', port)
  const before = new Set((await cards()).map((c) => `${c.agentId}/${c.callId}`))
  const child = shell(code, { ASKBRIDGE_URL: base })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  let done = false
  void exited.then(() => {
    done = true
  })
  const { answer: labels, when } = snippet.spec
  if (labels) {
    // Wait for the snippet's own card (new since it started), in the state it is to be answered in.
    for (;;) {
      if (done) throw new Error(`${snippet.where} ended before its card was answered:\n${stdout}\n${stderr}`)
      const card = (await cards()).find(
        (c) => !before.has(`${c.agentId}/${c.callId}`) && c.status === (when ?? 'open'),
      )
      if (card) {
        await answer(card, labels)
        break
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return { code: await exited, stdout, stderr }
}

describe('runnable snippets in the docs', () => {
  test('the quick start, askbridge ask and the HTTP API have marked snippets', () => {
    expect(serveSnippets.map((s) => s.where.split(':')[0])).toEqual(['README.md'])
    const marked = new Set(runnable.map((s) => s.where.split(':')[0]))
    for (const file of ['README.md', 'docs/cli.md', 'docs/http-api.md']) expect(marked).toContain(file)
  })

  test.each(runnable.map((s) => [s.where, s] as const))(
    '%s',
    async (_where, snippet) => {
      const r = await run(snippet)
      const shown = `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
      expect(r.code, shown).toBe(snippet.spec.exit ?? 0)
      for (const s of snippet.spec.stdout ?? []) expect(r.stdout, shown).toContain(s)
      for (const s of snippet.spec.stderr ?? []) expect(r.stderr, shown).toContain(s)
    },
    20_000,
  )
})
