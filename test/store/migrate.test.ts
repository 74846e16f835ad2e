import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, expect, test } from 'vitest'
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../../src/store/sqlite.js'
import { tempDir } from '../helpers/service.js'
import { request, startBridge, until } from '../server/helpers.js'

// A database written by askbridge before calls were keyed by agent (commit 0497c3b), through its
// HTTP API: alice's settled and continued calls, bob's continued call with a queued reply, ops's
// blocking ask and carol's timed ask both open at shutdown, with their cards, posts and audit.
const FIXTURE = readFileSync(join(import.meta.dirname, 'fixtures', 'v1-before-agent-keys.sql'), 'utf8')
const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const { dir, cleanup } = tempDir()
afterAll(cleanup)

function writeOldDatabase(path: string): void {
  const db = new Database(path)
  db.exec(FIXTURE)
  db.close()
}

test('a database written before calls had agents migrates: every row belongs to the agent that asked it', async () => {
  const path = join(dir, 'old.db')
  writeOldDatabase(path)
  const store = new SqliteStore(path)
  try {
    expect((await store.getCall({ agentId: 'alice', callId: 'toolu_1' }))?.state).toBe('continued')
    expect((await store.getCall({ agentId: 'bob', callId: 'toolu_2' }))?.queuedReply).toBeDefined()
    expect(await store.getCall({ agentId: 'default', callId: 'toolu_1' })).toBeUndefined()
    expect((await store.getCard({ agentId: 'ops', callId: 'blk-1' }))?.version).toBe(1)
    expect(await store.listPosts({ agentId: 'carol', callId: 'toolu_open' })).toHaveLength(1)
    const audit = await store.listAudit({ agentId: 'alice', callId: 'toolu_settled' })
    expect(audit.map((a) => a.kind)).toEqual(['asked', 'interaction', 'completed'])
    expect(audit.every((a) => a.agentId === 'alice')).toBe(true)
    const events = await store.events({ agentId: 'bob', callId: 'toolu_2' })
    expect(events.map((e) => e.type)).toEqual(['asked', 'pending', 'reply_queued'])
    expect(events.every((e) => e.agentId === 'bob')).toBe(true)
  } finally {
    await store.close()
  }
  // Opening again (or by a second process) does not migrate twice.
  const again = new SqliteStore(path)
  expect(await again.listCalls()).toHaveLength(5)
  await again.close()
  const raw = new Database(path, { readonly: true })
  expect(raw.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION)
  raw.close()
})

test('restart on a database written before this change: calls come back under their agents and keep working', async () => {
  const home = join(dir, 'bridge')
  const { mkdirSync } = await import('node:fs')
  mkdirSync(home)
  writeOldDatabase(join(home, 'bridge.db'))
  const b = await startBridge({}, home)
  try {
    // carol's timed call, open when the old bridge stopped, comes back continued.
    const carol = await request(b.url, 'GET', '/v1/questions?agentId=carol')
    expect(carol.body.active).toEqual([{ callId: 'toolu_open', questions: [colour], state: 'continued' }])
    const alice = await request(b.url, 'GET', '/v1/questions?agentId=alice')
    expect(alice.body).toEqual({
      active: [{ callId: 'toolu_1', questions: [colour], state: 'continued' }],
      settled: [{ callId: 'toolu_settled', answers: [{ id: 'colour', selected: ['Red'] }] }],
    })
    // bob's queued reply survived and is still his.
    const bob = await request(b.url, 'GET', '/v1/agents/bob/replies')
    expect(bob.body.replies?.map((r) => r.payload.callId)).toEqual(['toolu_2'])

    // A second agent reusing alice's callId gets its own call; alice's stays hers.
    const mallory = await request(b.url, 'POST', '/v1/ask', {
      agentId: 'mallory',
      callId: 'toolu_1',
      timeoutMs: 20,
      questions: [colour],
    })
    expect(mallory.body).toEqual({ pending: true, callId: 'toolu_1' })
    expect((await request(b.url, 'GET', '/v1/questions?agentId=alice')).body.active).toEqual([
      { callId: 'toolu_1', questions: [colour], state: 'continued' },
    ])
    const answered = await request(b.url, 'POST', '/v1/questions/toolu_1/answer', {
      agentId: 'alice',
      answers: [{ id: 'colour', selected: ['Blue'] }],
    })
    expect(answered.body).toEqual({ accepted: true })
    const replies = await until(async () => {
      const r = await request(b.url, 'GET', '/v1/agents/alice/replies')
      return r.body.replies?.length ? r.body.replies : undefined
    }, 'alice reply')
    expect(replies[0]?.payload).toMatchObject({
      callId: 'toolu_1',
      answers: [{ id: 'colour', selected: ['Blue'] }],
    })
    expect((await request(b.url, 'GET', '/v1/agents/mallory/replies')).body.replies).toEqual([])

    // ops's blocking ask re-attaches to the card posted before the upgrade: no second post.
    const again = request(b.url, 'POST', '/v1/ask', { agentId: 'ops', callId: 'blk-1', questions: [colour] })
    await until(() => b.bridge.service.inflight('ops', 'blk-1') !== undefined, 'the re-attached ask')
    const click = await request(b.url, 'POST', '/inbox/api/cards/blk-1/actions?agentId=ops', {
      action: { type: 'choose', questionId: 'colour', label: 'Red' },
      person: { name: 'Ana' },
    })
    expect(click.body.ok).toBe(true)
    expect((await again).body).toEqual({ answers: [{ id: 'colour', selected: ['Red'] }], callId: 'blk-1' })
    expect(await b.bridge.store.listPosts({ agentId: 'ops', callId: 'blk-1' })).toHaveLength(1)
  } finally {
    await b.close()
  }
})

test('a schema-2 database (before post claims) migrates: its posts stay, and copies can be claimed', async () => {
  const path = join(dir, 'v2.db')
  const fresh = new SqliteStore(path)
  const key = { agentId: 'ops', callId: 'c-1' }
  const intent = { ...key, destKey: 'slack:C1', platform: 'slack', ref: { pending: true }, createdAt: 5 }
  await fresh.addPost(intent)
  await fresh.close()
  // Schema 2 exactly: the posts table without its claim columns, calls without ended_at.
  const old = new Database(path)
  old.exec(`DROP INDEX posts_claims; ALTER TABLE posts DROP COLUMN claim_owner;
    ALTER TABLE posts DROP COLUMN claim_until; DROP INDEX calls_ended; DROP INDEX audit_at;
    ALTER TABLE calls DROP COLUMN ended_at; PRAGMA user_version = 2;`)
  old.close()
  const store = new SqliteStore(path)
  try {
    expect(await store.listPosts(key)).toEqual([intent])
    const claim = { owner: 'A', until: 100, now: 1 }
    expect(await store.claimPost(intent, claim)).toEqual({ createdAt: 5, taken: true })
    expect(await store.claimPost(intent, { ...claim, owner: 'B' })).toBeUndefined()
  } finally {
    await store.close()
  }
  const raw = new Database(path, { readonly: true })
  expect(raw.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION)
  raw.close()
})
