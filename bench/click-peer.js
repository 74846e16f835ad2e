// A peer the click section measures askbridge against, as its own process:
//   node bench/click-peer.js bolt|bolt-store|chat
// `bolt`: a bare @slack/bolt App with its HTTP receiver, one listener that acks every action.
// `bolt-store`: what a user would build instead of askbridge to hand a click to a waiting agent with
// the same promise (an answer is acknowledged only once it is on disk): the same Bolt App, whose
// listener stores the answer in SQLite (better-sqlite3, WAL, synchronous = FULL, on its event loop as
// such an app would), answers the agent's waiting `POST /ask?key=<action_ts>` (a custom route), acks,
// and then updates the card with chat.update. Environment: BENCH_STORE, the SQLite file.
// `chat`: the Vercel Chat SDK (`chat` + `@chat-adapter/slack`, in-memory state) behind a plain
// node:http server, one onAction handler. Both verify Slack's signature like askbridge does.
// Environment: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL. Prints {"url"} once listening.
import { createServer } from 'node:http'
import { createSlackAdapter } from '@chat-adapter/slack'
import { createMemoryState } from '@chat-adapter/state-memory'
import bolt from '@slack/bolt'
import Database from 'better-sqlite3'
import { Chat } from 'chat'
import { monotonicMs } from './lib.js'

const { SLACK_BOT_TOKEN: token, SLACK_SIGNING_SECRET: signingSecret, SLACK_API_URL: apiUrl } = process.env

async function startBolt() {
  let listened = {}
  const app = new bolt.App({
    token,
    signingSecret,
    customRoutes: [
      {
        path: '/listened',
        method: ['GET'],
        handler: (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(listened))
          listened = {}
        },
      },
    ],
    clientOptions: { slackApiUrl: apiUrl },
    logLevel: bolt.LogLevel.ERROR,
  })
  app.action(/.*/, async ({ ack, body }) => {
    // When the listener runs, by the action's action_ts: what askbridge's click → answer is
    // compared with (GET /listened hands them over and forgets them).
    listened[body.actions?.[0]?.action_ts] = monotonicMs()
    await ack()
  })
  const server = await app.start({ port: 0, host: '127.0.0.1' })
  return server.address().port
}

async function startBoltStore() {
  const db = new Database(process.env.BENCH_STORE)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec(
    'CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL, user TEXT, at INTEGER)',
  )
  const insert = db.prepare('INSERT OR IGNORE INTO answers (key, value, user, at) VALUES (?, ?, ?, ?)')
  const read = db.prepare('SELECT value FROM answers WHERE key = ?')
  /** The agents waiting, by key. */
  const waiting = new Map()
  /** Card updates finished: the bench waits for them before the next server's turn (GET /state). */
  let updated = 0
  const answer = (res, value) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: value }))
  const app = new bolt.App({
    token,
    signingSecret,
    customRoutes: [
      {
        path: '/ask',
        method: ['POST'],
        handler: (req, res) => {
          const key = new URL(req.url, 'http://x').searchParams.get('key') ?? ''
          const stored = read.get(key)
          if (stored) return answer(res, stored.value)
          waiting.set(key, res)
        },
      },
      {
        path: '/state',
        method: ['GET'],
        handler: (_req, res) =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ waiting: waiting.size, updated })),
      },
    ],
    clientOptions: { slackApiUrl: apiUrl },
    logLevel: bolt.LogLevel.ERROR,
  })
  app.action(/.*/, async ({ ack, body, action, client }) => {
    const key = body.actions?.[0]?.action_ts
    const value = action.value ?? action.selected_option?.value ?? ''
    // Durable before anyone hears of it; only the first answer to a key counts.
    const first = insert.run(key, value, body.user?.id, Date.now()).changes === 1
    if (first) {
      const res = waiting.get(key)
      waiting.delete(key)
      if (res) answer(res, value)
    }
    await ack()
    await client.chat.update({
      channel: body.channel.id,
      ts: body.message.ts,
      text: first ? `Answered: ${value}` : 'Already answered',
      blocks: [
        {
          type: 'section',
          text: { type: 'mrkdwn', text: first ? `Answered: ${value}` : 'Already answered' },
        },
      ],
    })
    updated++
  })
  const server = await app.start({ port: 0, host: '127.0.0.1' })
  return server.address().port
}

async function startChat() {
  const slack = createSlackAdapter({ botToken: token, signingSecret, apiUrl, logger: silent })
  const chat = new Chat({
    userName: 'bench',
    adapters: { slack },
    state: createMemoryState(),
    logger: 'silent',
  })
  chat.onAction(async () => {})
  const pending = new Set()
  const server = createServer(async (req, res) => {
    const chunks = []
    for await (const chunk of req) chunks.push(chunk)
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).filter(([, v]) => typeof v === 'string'),
      body: Buffer.concat(chunks),
    })
    const response = await chat.webhooks.slack(request, {
      waitUntil: (p) => {
        pending.add(p)
        void p.catch(() => {}).finally(() => pending.delete(p))
      },
    })
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server.address().port
}

const silent = {
  debug() {},
  info() {},
  warn() {},
  error: (...args) => console.error(...args),
  child: () => silent,
}

const kind = process.argv[2]
const start = { bolt: startBolt, 'bolt-store': startBoltStore, chat: startChat }[kind]
const port = start ? await start() : undefined
if (port === undefined) {
  console.error('usage: node bench/click-peer.js bolt|bolt-store|chat')
  process.exit(2)
}
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`)
