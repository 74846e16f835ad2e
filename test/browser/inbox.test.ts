import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { MIGRATION_PLAN, NESTED_PLAN } from '../fixtures/plans.js'
import { fixture, httpHook } from '../helpers/claude-code.js'
import { act, cardPosted, request, startBridge, type TestBridge, until } from '../server/helpers.js'

// Screenshots kept as test artifacts for a human to look at (test-results/ is gitignored).
const SHOTS = fileURLToPath(new URL('../../test-results/', import.meta.url))

let b: TestBridge
let browser: Browser
let page: Page
const failed: string[] = []

beforeAll(async () => {
  b = await startBridge()
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  })
  page = await browser.newPage({ viewport: { width: 1100, height: 1400 } })
  page.on('pageerror', (e) => {
    throw e
  })
  // A first-time user opening DevTools sees no red: every request the page makes succeeds.
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`)
  })
  page.on('console', (m) => {
    if (m.type() === 'error') failed.push(m.text())
  })
  await page.goto(`${b.url}${b.bridge.http.signInLink()}`)
  await page.fill('#me', 'Ada Lovelace')
})

test('the page loads with no failed request and no console error (no favicon 404)', async () => {
  await page.reload()
  await page.fill('#me', 'Ada Lovelace')
  await page.waitForLoadState('networkidle').catch(() => {})
  expect(failed).toEqual([])
})

afterAll(async () => {
  await browser?.close()
  await b?.close()
})

const card = (callId: string) => page.locator(`article[data-call-id="${callId}"]`)

test('answers a batch (single, multi, Other, skip) and the waiting POST /v1/ask gets it', async () => {
  const asking = request(b.url, 'POST', '/v1/ask', {
    callId: 'batch-1',
    agentId: 'build-bot',
    questions: [
      {
        id: 'cache',
        header: 'Storage',
        question: 'Use Postgres or SQLite for the cache?',
        detail:
          'We need **fast** reads.\n\n- Postgres: shared\n- SQLite: `embedded`\n\n<script>alert(1)</script><img src=x onerror=alert(2)>',
        options: [
          { label: 'Postgres', description: 'one more server' },
          { label: 'SQLite', description: 'a file' },
        ],
      },
      {
        id: 'regions',
        question: 'Which regions?',
        multiSelect: true,
        options: [{ label: 'eu' }, { label: 'us' }, { label: 'ap' }],
      },
      { id: 'name', question: 'Codename for the release?' },
      { id: 'owner', question: 'Who owns the rollout?', options: [{ label: 'Team A' }, { label: 'Team B' }] },
    ],
  })
  const c = card('batch-1')
  await c.waitFor()
  // Agent text is escaped: no injected elements, the markup shows as text.
  expect(await c.locator('.detail script, .detail img').count()).toBe(0)
  expect(await c.locator('.detail').first().textContent()).toContain('<script>alert(1)</script>')
  expect(await c.locator('.detail strong').first().textContent()).toBe('fast')

  await c.locator('[data-question="cache"] button[data-option="SQLite"]').click()
  await until(
    async () => (await c.locator('[data-question="cache"] button.chosen').count()) === 1,
    'cache chosen',
  )
  await c.locator('[data-question="regions"] button[data-option="eu"]').click()
  await until(async () => (await c.locator('[data-question="regions"] button.chosen').count()) === 1, 'eu')
  await c.locator('[data-question="regions"] button[data-option="ap"]').click()
  await until(async () => (await c.locator('[data-question="regions"] button.chosen').count()) === 2, 'ap')
  await c.locator('[data-question="name"] input').fill('Blue Heron')
  await c.locator('[data-question="name"] button[data-send="name"]').click()
  await until(async () =>
    ((await c.locator('[data-question="name"] .draft-note').textContent()) ?? '').includes('Blue Heron'),
  )
  await c.locator('[data-question="owner"] button[data-skip="owner"]').click()
  await until(async () =>
    ((await c.locator('[data-question="owner"] .draft-note').textContent()) ?? '').includes('Skipped'),
  )
  await page.screenshot({ path: join(SHOTS, 'inbox-batch.png'), fullPage: true })

  await c.locator('button[data-act="submit"]').click()
  const res = await asking
  expect(res.body).toEqual({
    callId: 'batch-1',
    answers: [
      { id: 'cache', selected: ['SQLite'] },
      { id: 'regions', selected: ['eu', 'ap'] },
      { id: 'name', selected: [], custom: 'Blue Heron' },
      { id: 'owner', selected: [] },
    ],
  })
  await until(async () => (await c.getAttribute('data-status')) === 'answered', 'settled card')
  expect((await c.textContent()) ?? '').toContain('Answered by Ada Lovelace')
})

test('an approval answered in the page reaches the waiting ask; a plan review and a timed card show too', async () => {
  const approval = request(b.url, 'POST', '/v1/ask', {
    callId: 'deploy-1',
    agentId: 'deploy-bot',
    questions: [
      {
        id: 'deploy',
        question: 'Deploy 4f2c1 to production?',
        detail:
          'Fixes the **login** bug. See [the PR](https://example.com/pr/1) and [bad](javascript:alert(1)).',
        options: [{ label: 'Approve' }, { label: 'Reject' }],
        intent: { kind: 'approval', approve: 'Approve', reject: 'Reject', subject: { name: 'deploy-bot' } },
      },
    ],
  })
  const plan = request(b.url, 'POST', '/v1/ask', {
    callId: 'plan-1',
    questions: [
      {
        id: 'plan',
        question: 'Approve the migration plan?',
        detail:
          '# Plan\n\n1. Add the index\n2. Backfill\n3. Switch reads\n\n```sql\nCREATE INDEX i ON t(x);\n```',
        options: [{ label: 'Approve' }, { label: 'Request changes' }],
        intent: { kind: 'plan-review', approve: 'Approve' },
      },
    ],
  })
  const timed = request(b.url, 'POST', '/v1/ask', {
    callId: 'timed-1',
    timeoutMs: 120_000,
    questions: [{ id: 'go', question: 'Ship on Friday?', options: [{ label: 'Yes' }, { label: 'No' }] }],
  })
  await card('deploy-1').waitFor()
  await card('plan-1').waitFor()
  await card('timed-1').waitFor()
  const links = card('deploy-1').locator('.detail a')
  expect(await links.count()).toBe(1)
  expect(await links.getAttribute('href')).toBe('https://example.com/pr/1')
  expect(await card('plan-1').locator('.detail ol li').count()).toBe(3)
  expect(await card('timed-1').locator('[data-deadline]').textContent()).toMatch(/left$/)

  // Take my time on the timed card: the page shows the hold.
  await card('timed-1').locator('button[data-hold]').click()
  await until(
    async () => ((await card('timed-1').textContent()) ?? '').includes('held by Ada Lovelace'),
    'held',
  )
  await page.screenshot({ path: join(SHOTS, 'inbox-approval.png'), fullPage: true })

  await card('deploy-1').locator('button[data-act="approve"]').click()
  expect((await approval).body).toEqual({
    callId: 'deploy-1',
    answers: [{ id: 'deploy', selected: ['Approve'] }],
  })

  await card('plan-1').locator('textarea').fill('Add a rollback step')
  await card('plan-1').locator('button[data-act="decline"]').click()
  expect((await plan).body.answers).toEqual([{ id: 'plan', selected: [], custom: 'Add a rollback step' }])
  // Settled: an approval shows green, a declined plan red.
  await until(async () => (await card('plan-1').getAttribute('data-status')) === 'answered')
  expect(await card('plan-1').locator('.result .answer.declined').count()).toBe(1)
  expect(await card('plan-1').locator('.badge.status-declined').textContent()).toBe('declined')
  expect(await card('deploy-1').locator('.badge.status-declined').count()).toBe(0)
  expect(await card('deploy-1').locator('.badge.status-answered').textContent()).toBe('answered')
  expect(await card('deploy-1').locator('.result .answer').count()).toBe(1)
  expect(await card('deploy-1').locator('.result .answer.declined').count()).toBe(0)

  await card('timed-1').locator('button[data-option="No"]').click()
  expect((await timed).body.answers).toEqual([{ id: 'go', selected: ['No'] }])
  await until(async () => (await card('timed-1').getAttribute('data-status')) === 'answered')
})

test('a refusal is shown on the card; a card answered elsewhere updates live', async () => {
  const asking = request(b.url, 'POST', '/v1/ask', {
    callId: 'two-1',
    questions: [
      { id: 'a', question: 'First?', options: [{ label: 'x' }, { label: 'y' }] },
      { id: 'b', question: 'Second?', options: [{ label: 'x' }, { label: 'y' }] },
    ],
  })
  const c = card('two-1')
  await c.waitFor()
  await c.locator('button[data-act="submit"]').click()
  await until(async () => (await c.locator('.notice.bad').count()) === 1, 'refusal shown')
  expect((await c.locator('.notice.bad').textContent()) ?? '').toMatch(/answer or skip/i)
  // Someone else answers through the API; the page follows over SSE.
  await request(b.url, 'POST', '/inbox/api/cards/two-1/actions', {
    action: { type: 'choose', questionId: 'a', label: 'y' },
    person: { name: 'Bob' },
  })
  await until(async () => (await c.locator('[data-question="a"] .draft-note').count()) === 1, 'live draft')
  expect((await c.locator('[data-question="a"] .draft-note').textContent()) ?? '').toContain('by Bob')
  await request(b.url, 'DELETE', '/v1/questions/two-1')
  expect((await asking).status).toBe(410)
  await until(async () => (await c.getAttribute('data-status')) === 'cancelled', 'cancelled live')
  await page.screenshot({ path: join(SHOTS, 'inbox-settled.png'), fullPage: true })
})

test('a click pressed before another card arrives and released after it still lands', async () => {
  const id = `press-${Date.now()}` // a rerun (vitest --retry) asks afresh
  const first = request(b.url, 'POST', '/v1/ask', {
    callId: `${id}-1`,
    questions: [
      { id: 'r', question: 'Which regions?', multiSelect: true, options: [{ label: 'eu' }, { label: 'us' }] },
    ],
  })
  const c = card(`${id}-1`)
  await c.waitFor()
  const box = await c.locator('button[data-option="us"]').boundingBox()
  if (!box) throw new Error('the option has no box')
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
  await page.mouse.down()
  // The page redraws for the new card while the button is held down.
  const second = request(b.url, 'POST', '/v1/ask', {
    callId: `${id}-2`,
    questions: [{ id: 'q', question: 'Another?', options: [{ label: 'a' }, { label: 'b' }] }],
  })
  await card(`${id}-2`).waitFor()
  await page.mouse.up()
  await until(async () => (await c.locator('button.chosen[data-option="us"]').count()) === 1, 'us chosen')
  await request(b.url, 'DELETE', `/v1/questions/${id}-1`)
  await request(b.url, 'DELETE', `/v1/questions/${id}-2`)
  expect((await first).status).toBe(410)
  expect((await second).status).toBe(410)
})

test('on a 390 px phone the header fits the screen and nothing scrolls sideways', async () => {
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 })
  try {
    const asking = request(b.url, 'POST', '/v1/ask', {
      callId: 'phone-1',
      agentId: 'release-train-coordinator',
      questions: [
        {
          id: 'ship',
          header: 'Release',
          question: 'Ship 2.4.0 to every region tonight?',
          options: [{ label: 'Ship it' }, { label: 'Wait for Monday', description: 'after the freeze' }],
        },
      ],
    })
    await phone.goto(`${b.url}${b.bridge.http.signInLink()}`)
    await phone.fill('#me', 'Ada Lovelace')
    await phone.locator('article[data-call-id="phone-1"]').waitFor()
    const overflow = await phone.evaluate(() => {
      const width = document.documentElement.clientWidth
      const header = document.querySelector('header.top') as HTMLElement
      const outside = Array.from(header.querySelectorAll('*'))
        .map((el) => ({
          el: el.tagName.toLowerCase() + (el.id ? `#${el.id}` : ''),
          r: el.getBoundingClientRect(),
        }))
        .filter(({ r }) => r.right > width + 0.5 || r.left < -0.5)
        .map(({ el }) => el)
      return {
        width,
        headerScroll: header.scrollWidth - header.clientWidth,
        pageScroll: document.documentElement.scrollWidth - width,
        headerHeight: header.getBoundingClientRect().height,
        outside,
      }
    })
    expect(overflow.width).toBe(390)
    expect(overflow.outside).toEqual([])
    expect(overflow.headerScroll).toBe(0)
    expect(overflow.pageScroll).toBe(0)
    // One row: the header does not eat the small screen.
    expect(overflow.headerHeight).toBeLessThan(80)
    await phone.screenshot({ path: join(SHOTS, 'inbox-390.png'), fullPage: true })
    await phone.locator('article[data-call-id="phone-1"] button[data-option="Ship it"]').click()
    expect((await asking).body.answers).toEqual([{ id: 'ship', selected: ['Ship it'] }])
  } finally {
    await phone.close()
  }
})

test('a rejected approval has a red "rejected" badge, not a green "answered"', async () => {
  const asking = request(b.url, 'POST', '/v1/ask', {
    callId: 'reject-1',
    questions: [
      {
        id: 'drop',
        question: 'Drop the staging database?',
        detail: "It holds last week's test data only.",
        options: [{ label: 'Approve' }, { label: 'Reject' }],
        intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
      },
    ],
  })
  await card('reject-1').waitFor()
  await card('reject-1').locator('button[data-act="reject"]').click()
  expect((await asking).body.answers).toEqual([{ id: 'drop', selected: ['Reject'] }])
  await until(async () => (await card('reject-1').getAttribute('data-status')) === 'answered')
  const badge = card('reject-1').locator('[data-badge]')
  expect(await badge.textContent()).toBe('rejected')
  // The same red as the declined answer chip; not the green of an approval.
  const colour = (selector: string) =>
    card('reject-1')
      .locator(selector)
      .evaluate((el) => getComputedStyle(el).color)
  expect(await colour('[data-badge]')).toBe(await colour('.result .answer.declined'))
  expect(await colour('[data-badge]')).not.toBe(
    await card('deploy-1')
      .locator('.badge.status-answered')
      .evaluate((el) => getComputedStyle(el).color),
  )
  expect(await card('reject-1').locator('.badge.status-answered').count()).toBe(0)
  expect(await card('reject-1').locator('.result .answer.declined').count()).toBe(1)
})

test('while the page holds a wait ("Take my time") it renews the hold every 10 s', async () => {
  const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } })
  try {
    // The page's own timers run on a clock the test moves; the bridge keeps real time.
    await tab.clock.install()
    await tab.goto(`${b.url}${b.bridge.http.signInLink()}`)
    await tab.fill('#me', 'Grace Hopper')
    const asking = request(b.url, 'POST', '/v1/ask', {
      callId: 'beat-1',
      timeoutMs: 600_000,
      questions: [
        { id: 'go', question: 'Cut the release now?', options: [{ label: 'Yes' }, { label: 'No' }] },
      ],
    })
    const c = tab.locator('article[data-call-id="beat-1"]')
    await c.waitFor()
    await c.locator('button[data-hold="beat-1"]').click()
    await until(async () => ((await c.textContent()) ?? '').includes('held by Grace Hopper'), 'held')
    const renewal = tab.waitForRequest(
      (r) => r.method() === 'POST' && new URL(r.url()).pathname === '/inbox/api/cards/beat-1/hold',
    )
    await tab.clock.runFor(10_000)
    const sent = await renewal
    expect(JSON.parse(sent.postData() ?? '{}')).toEqual({ person: { name: 'Grace Hopper' } })
    await c.locator('button[data-option="Yes"]').click()
    expect((await asking).body.answers).toEqual([{ id: 'go', selected: ['Yes'] }])
  } finally {
    await tab.close()
  }
})

test('the inbox screenshot is kept as a test artifact', async () => {
  await page.reload()
  await page.locator('article').first().waitFor()
  await page.screenshot({ path: join(SHOTS, 'inbox.png'), fullPage: true })
  expect(existsSync(join(SHOTS, 'inbox.png'))).toBe(true)
})

mkdirSync(SHOTS, { recursive: true })

test('a plan from the corpus renders in the inbox with its numbering, nesting, table and code', async () => {
  const asking = request(b.url, 'POST', '/v1/ask', {
    callId: 'plan-corpus-1',
    agentId: 'planner',
    questions: [
      {
        id: 'plan',
        question: 'Approve the session migration plan?',
        detail: `${MIGRATION_PLAN}\n\n${NESTED_PLAN}\n\n<script>alert(1)</script> [bad](javascript:alert(1))`,
        options: [{ label: 'Approve' }, { label: 'Revise' }],
        intent: { kind: 'plan-review', approve: 'Approve' },
      },
    ],
  })
  const c = card('plan-corpus-1')
  await c.waitFor()
  const detail = c.locator('.detail').first()
  // One list of five numbered steps (not five lists of one), and the browser numbers them 1..5.
  expect(await detail.locator(':scope > ol').first().locator(':scope > li').count()).toBe(5)
  expect(await detail.locator('ol[start="7"] > li').count()).toBe(2)
  // Nested three deep: a bullet list inside a step, another inside that.
  expect(await detail.locator('ol > li ul > li ul > li').count()).toBe(1)
  expect(await detail.locator('table th').allTextContents()).toEqual(['Step', 'Risk', 'Rollback'])
  expect(await detail.locator('table tbody tr').count()).toBe(3)
  expect(await detail.locator('pre code.language-sql').textContent()).toContain('INSERT INTO sessions')
  expect(await detail.locator('a[href^="https://wiki.example.com/"]').count()).toBe(1)
  // Raw HTML and a javascript: link stay text.
  expect(await detail.locator('script, a[href^="javascript"]').count()).toBe(0)
  expect((await detail.textContent()) ?? '').toContain('<script>alert(1)</script>')
  await c.scrollIntoViewIfNeeded()
  await c.screenshot({ path: join(SHOTS, 'inbox-plan.png') })
  await c.locator('button[data-act="approve"]').click()
  expect((await asking).body.answers).toEqual([{ id: 'plan', selected: ['Approve'] }])
})

test('with an API token, the one-time sign-in link opens the page and its script loads with the cookie', async () => {
  const token = 'browser-test-token-not-secret'
  const guarded = await startBridge({ ASKBRIDGE_API_TOKEN: token })
  const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } })
  const bad: string[] = []
  tab.on('response', (r) => {
    if (r.status() >= 400) bad.push(`${r.status()} ${r.url()}`)
  })
  try {
    await tab.goto(`${guarded.url}${guarded.bridge.http.signInLink()}`)
    // The code left the address bar; the module script ran and follows live changes.
    expect(new URL(tab.url()).search).toBe('')
    await tab.locator('#live.live').waitFor()
    await tab.fill('#me', 'Ada Lovelace')
    const asking = request(
      guarded.url,
      'POST',
      '/v1/ask',
      { callId: 'tok-1', questions: [{ id: 'go', question: 'Go?', options: [{ label: 'Yes' }] }] },
      { authorization: `Bearer ${token}` },
    )
    const c = tab.locator('article[data-call-id="tok-1"]')
    await c.locator('button[data-option="Yes"]').click()
    expect((await asking).body.answers).toEqual([{ id: 'go', selected: ['Yes'] }])
    expect(bad).toEqual([])
  } finally {
    await tab.close()
    await guarded.close()
  }
})

test('a notice without buttons (Claude Code waiting) shows live as text, and again after a reload', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'askbridge-fyi-browser-'))
  const routes = join(dir, 'routes.json')
  writeFileSync(
    routes,
    JSON.stringify({
      routes: [
        {
          name: 'watched',
          match: { agentId: 'claude-code:abc123' },
          destinations: [{ platform: 'web' }],
          notices: ['Notification'],
        },
      ],
    }),
  )
  const watched = await startBridge({ ASKBRIDGE_ROUTES: routes })
  const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } })
  try {
    // Hold the page's first notices list: the server reads it now (before the notice exists), the
    // page gets it only after the notice's live event has arrived. A stale list once replaced the
    // live notice, and this test timed out waiting for it.
    const list = await holdList(tab, '/inbox/api/notices')
    await tab.goto(`${watched.url}${watched.bridge.http.signInLink()}`)
    await tab.locator('#live.live').waitFor()
    await until(async () => list.read() >= 1, 'the notices list read')
    expect(await httpHook(watched.url, fixture('notification'))).toEqual({ status: 200, body: {} })
    const fyi = tab.locator('article.fyi')
    await fyi.waitFor()
    const listed = tab.waitForResponse((r) => new URL(r.url()).pathname === '/inbox/api/notices')
    await list.release()
    await (await listed).finished()
    await tab.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)))
    // The stale list has landed: the live notice is still shown.
    expect(await fyi.count()).toBe(1)
    expect(await fyi.locator('.q-text').textContent()).toBe('Permission needed')
    expect(await fyi.locator('.fyi-text').textContent()).toBe('Claude needs your permission to use Bash')
    expect(await tab.locator('h2.section', { hasText: 'Notices (1)' }).count()).toBe(1)
    await tab.reload()
    await tab.locator('article.fyi').waitFor()
    expect(await tab.locator('article.fyi').count()).toBe(1)
  } finally {
    await tab.close()
    await watched.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the settled list shows the newest 30 cards; "Show older" loads the rest', async () => {
  const paged = await startBridge()
  const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } })
  try {
    const q = { id: 'go', question: 'Go?', options: [{ label: 'Yes' }] }
    for (let i = 0; i < 32; i++) {
      const asking = request(paged.url, 'POST', '/v1/ask', { callId: `old-${i}`, questions: [q] })
      await cardPosted(paged.url, `old-${i}`)
      await act(paged.url, `old-${i}`, { type: 'choose', questionId: 'go', label: 'Yes' })
      await asking
    }
    await tab.goto(`${paged.url}${paged.bridge.http.signInLink()}`)
    const settled = tab.locator('article.settled')
    const older = tab.locator('button[data-older]')
    await older.waitFor()
    expect(await settled.count()).toBe(30)
    // The oldest two are on the next page.
    expect(await tab.locator('article[data-call-id="old-0"], article[data-call-id="old-1"]').count()).toBe(0)
    await older.click()
    await until(async () => (await settled.count()) === 32, 'older cards shown')
    expect(await older.count()).toBe(0)
    expect(await tab.locator('h2.section', { hasText: 'Settled (32)' }).count()).toBe(1)
  } finally {
    await tab.close()
    await paged.close()
  }
})

test('a card that appears while the page is loading its list stays shown (the list was read before it)', async () => {
  const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } })
  try {
    // Hold the page's list: the server reads it now (before the card exists), the page gets it
    // only after the card's live event has arrived.
    const list = await holdList(tab, '/inbox/api/cards')
    await tab.goto(`${b.url}${b.bridge.http.signInLink()}`)
    // Two lists: the page's first, and the one it asks for once its live stream is open. The
    // second means the stream is connected, so the card's live event cannot be missed.
    await until(async () => list.read() >= 2, 'both list requests read')
    const asking = request(b.url, 'POST', '/v1/ask', {
      callId: 'race-1',
      questions: [{ id: 'go', question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }],
    })
    const c = tab.locator('article[data-call-id="race-1"]')
    await c.waitFor()
    // The page asks for its notices once it has the list, and applies both together.
    const notices = tab.waitForResponse((r) => new URL(r.url()).pathname === '/inbox/api/notices')
    await list.release()
    await (await notices).finished()
    await tab.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)))
    // The stale list has landed: the card is still there, and answerable.
    expect(await c.count()).toBe(1)
    await tab.fill('#me', 'Ada Lovelace')
    await c.locator('button[data-option="Yes"]').click({ timeout: 5000 })
    expect((await asking).body.answers).toEqual([{ id: 'go', selected: ['Yes'] }])
  } finally {
    await tab.close()
  }
})

/**
 * Hold the page's responses from `path`: the server reads each at once, the page gets it only
 * after `release()`, so what happens meanwhile (a live event) lands before a stale list.
 * `release()` also stops holding: later requests go straight through, and a held one the page has
 * dropped meanwhile (a reload, the tab closing) is not fulfilled into a response that is gone.
 */
async function holdList(
  tab: Page,
  path: string,
): Promise<{ release: () => Promise<void>; read: () => number }> {
  let open: () => void = () => {}
  const released = new Promise<void>((resolve) => {
    open = resolve
  })
  let read = 0
  await tab.route(`**${path}`, async (route) => {
    const stale = await route.fetch()
    read++
    await released
    await route.fulfill({ response: stale })
  })
  const release = async () => {
    open()
    await tab.unrouteAll({ behavior: 'ignoreErrors' })
  }
  return { release, read: () => read }
}
