/**
 * Storage faults: a full disk, a read-only or missing database, a locked one. What cannot be
 * stored is never acknowledged as applied; the API says 503 STORAGE_UNAVAILABLE; writes resume
 * by themselves once space returns; start-up names ASKBRIDGE_DB and the path.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isPostPending } from '../../src/answerer/adapter.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { errorResponse } from '../../src/server/errors.js'
import { UserQuestionService } from '../../src/service/service.js'
import { fromSqliteError, openStore, StorageError } from '../../src/store/index.js'
import { until } from '../helpers/service.js'
import { request, startBridge } from '../server/helpers.js'
import { startSlackRig } from '../slack/rig.js'

const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}

describe('storage errors', () => {
  it('SQLite fault codes map to a StorageError; other errors pass unchanged', () => {
    const cases: Array<[string, string]> = [
      ['SQLITE_FULL', 'full'],
      ['SQLITE_READONLY_DBMOVED', 'read_only'],
      ['SQLITE_BUSY', 'locked'],
      ['SQLITE_LOCKED', 'locked'],
      ['SQLITE_CANTOPEN', 'unavailable'],
      ['SQLITE_IOERR_WRITE', 'io'],
    ]
    for (const [code, fault] of cases) {
      const mapped = fromSqliteError(Object.assign(new Error('x'), { code }), '/data/a.db')
      expect(mapped, code).toBeInstanceOf(StorageError)
      expect((mapped as StorageError).fault, code).toBe(fault)
      expect((mapped as StorageError).message).toContain('/data/a.db')
    }
    const constraint = Object.assign(new Error('UNIQUE'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })
    expect(fromSqliteError(constraint)).toBe(constraint)
  })

  it('the HTTP answer to a storage fault is 503 STORAGE_UNAVAILABLE', () => {
    expect(errorResponse(new StorageError('full', 'storage unavailable: the disk is full'))).toEqual({
      status: 503,
      body: {
        error: {
          name: 'StorageError',
          code: 'STORAGE_UNAVAILABLE',
          message: 'storage unavailable: the disk is full',
        },
      },
    })
  })

  it('a database that cannot be opened stops the start naming ASKBRIDGE_DB and the path', () => {
    const path = join(tmpdir(), 'askbridge-missing-dir', 'nested', 'bridge.db')
    let error: unknown
    try {
      openStore(`sqlite:${path}`)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(StorageError)
    expect(String((error as Error).message)).toContain('ASKBRIDGE_DB')
    expect(String((error as Error).message)).toContain(path)
  })

  it('a closed store refuses with a StorageError, not a bare Error', async () => {
    const store = openStore('memory')
    await store.close()
    await expect(store.getCard({ agentId: 'a', callId: 'x' })).rejects.toBeInstanceOf(StorageError)
  })
})

/** A small tmpfs, or the reason there is none (not root, no mount). */
function smallDisk(sizeKb: number): { dir: string; unmount: () => void } | string {
  if (process.platform !== 'linux') return 'tmpfs mounts need Linux'
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (CI runs as root)'
  const dir = mkdtempSync(join(tmpdir(), 'askbridge-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', dir], { stdio: 'pipe' })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    return `mount -t tmpfs failed: ${(error as Error).message.split('\n')[0]}`
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Fill the disk with a file until it is full. */
function fill(path: string): void {
  const chunk = Buffer.alloc(64 * 1024, 1)
  const parts: Buffer[] = []
  for (let i = 0; i < 1000; i++) {
    parts.push(chunk)
    try {
      writeFileSync(path, Buffer.concat(parts))
    } catch {
      // ENOSPC: keep the largest size that fitted, then top up with small writes.
      parts.pop()
      writeFileSync(path, Buffer.concat(parts))
      break
    }
  }
  const small = Buffer.alloc(1024, 1)
  for (let i = 0; i < 64; i++) {
    try {
      writeFileSync(`${path}.${i}`, small)
    } catch {
      return
    }
  }
}

/**
 * Use up the room SQLite already holds (WAL pages) until even a small write fails: big writes
 * first, then smaller ones, so no page is left for the write under test.
 */
async function exhaust(write: (bytes: number) => Promise<unknown>): Promise<void> {
  for (const bytes of [32 * 1024, 4 * 1024, 256, 1]) {
    let full = false
    for (let i = 0; i < 500 && !full; i++) {
      try {
        await write(bytes)
      } catch (error) {
        if (!(error instanceof StorageError && error.fault === 'full')) throw error
        full = true
      }
    }
    if (!full) throw new Error('the disk never filled')
  }
}

const disk = smallDisk(1024)
const reason = typeof disk === 'string' ? disk : undefined
if (reason) console.log(`skipping the disk-full tests: ${reason}`)

describe.skipIf(reason !== undefined)('disk full (a 1 MB tmpfs)', () => {
  const root = typeof disk === 'string' ? '' : disk.dir
  afterAll(() => {
    if (typeof disk !== 'string') disk.unmount()
  })

  it('the API answers 503 STORAGE_UNAVAILABLE, and asks work again once space returns', async () => {
    const home = join(root, 'api')
    mkdirSync(home)
    const b = await startBridge({}, home)
    try {
      const filler = join(root, 'api-filler')
      fill(filler)
      await exhaust((bytes) => b.bridge.store.audit({ kind: 'filler', detail: 'x'.repeat(bytes) }))
      const refused = await request(b.url, 'POST', '/v1/ask', {
        questions: [colour],
        callId: 'full-1',
        timeoutMs: 60_000,
      })
      expect(refused.status).toBe(503)
      expect(refused.body.error).toMatchObject({ name: 'StorageError', code: 'STORAGE_UNAVAILABLE' })
      expect(refused.body.error?.message).toContain('full')
      // Reads still work while writes cannot.
      expect((await request(b.url, 'GET', '/v1/questions')).status).toBe(200)

      rmSync(filler, { force: true })
      for (let i = 0; i < 64; i++) rmSync(`${filler}.${i}`, { force: true })
      // No restart, no operator step: the next write simply works.
      const asked = await request(b.url, 'POST', '/v1/ask', {
        questions: [colour],
        callId: 'full-1',
        timeoutMs: 1,
      })
      expect(asked.status).toBe(200)
      expect(asked.body).toEqual({ pending: true, callId: 'full-1' })
    } finally {
      await b.close()
    }
  })

  it('a Slack click that cannot be stored is not applied, the person is told, and a later click works', async () => {
    const home = join(root, 'slack')
    mkdirSync(home)
    const store = openStore(`sqlite:${join(home, 'bridge.db')}`)
    const service = new UserQuestionService({ store })
    const rig = await startSlackRig('socket')
    const chat = new ChatAnswerer({
      service,
      adapters: [rig.adapter],
      destinations: [{ platform: 'slack', channel: 'C0QUESTIONS' }],
      escalationIntervalMs: 0,
    })
    service.use(chat.answerer)
    await chat.start()
    await rig.connected()
    try {
      const asked = service.ask({
        questions: [colour],
        agent: service.agents.ensure('agent-1'),
        wait: { callId: 'full-click' },
      })
      asked.catch(() => {})
      const blue = (r: { verb: string; q?: number; o?: number }) =>
        r.verb === 'choose' && r.q === 0 && r.o === 1
      const key = { agentId: 'agent-1', callId: 'full-click' }
      await until(() => rig.element('full-click', blue), 'card posted')
      // Posted and recorded: the reference has replaced the intent to post.
      await until(
        async () => (await store.listPosts(key)).some((p) => !isPostPending(p.ref)),
        'post recorded',
      )

      const filler = join(root, 'slack-filler')
      fill(filler)
      await exhaust((bytes) => store.audit({ kind: 'filler', detail: 'x'.repeat(bytes) }))

      await rig.use('full-click', blue, rig.people.ann)
      const notice = await until(
        () => rig.fake.noticesFor(rig.people.ann.userId).find((n) => n.includes('did not go through')),
        'the not-applied notice',
      )
      expect(notice).toContain('try again')
      expect((await store.getCard<{ status: string }>(key))?.state.status).toBe('open')
      // The buttons stay live: nothing claims the click went through.
      expect(rig.element('full-click', blue)).toBeDefined()

      rmSync(filler, { force: true })
      for (let i = 0; i < 64; i++) rmSync(`${filler}.${i}`, { force: true })
      await rig.use('full-click', blue, rig.people.ann)
      await expect(asked).resolves.toEqual({
        answers: [{ id: 'colour', selected: ['Blue'] }],
      })
    } finally {
      await service.close()
      await chat.stop()
      await rig.close()
      await store.close()
    }
  })

  it('a read-only database stops the start naming ASKBRIDGE_DB and the path', async () => {
    const ro = smallDisk(512)
    if (typeof ro === 'string') throw new Error(ro)
    try {
      const path = join(ro.dir, 'bridge.db')
      const first = openStore(`sqlite:${path}`)
      await first.append({ type: 'asked', callId: 'c1', agentId: 'a', questions: [colour], timed: false })
      await first.close()
      execFileSync('mount', ['-o', 'remount,ro', ro.dir], { stdio: 'pipe' })
      let error: unknown
      try {
        const store = openStore(`sqlite:${path}`)
        // Some SQLite builds open a read-only WAL database and fail at the first write instead.
        await store.append({ type: 'dropped', agentId: 'a', callId: 'c1', code: 'X' })
        await store.close()
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(StorageError)
      expect((error as StorageError).code).toBe('STORAGE_UNAVAILABLE')
      expect((error as Error).message).toContain(path)
    } finally {
      ro.unmount()
    }
  })
})
