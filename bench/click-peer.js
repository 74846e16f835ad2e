// A peer the click section measures askbridge against, as its own process:
//   node bench/click-peer.js bolt|chat
// `bolt`: a bare @slack/bolt App with its HTTP receiver, one listener that acks every action.
// `chat`: the Vercel Chat SDK (`chat` + `@chat-adapter/slack`, in-memory state) behind a plain
// node:http server, one onAction handler. Both verify Slack's signature like askbridge does.
// Environment: SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL. Prints {"url"} once listening.
import { createServer } from 'node:http'
import { createSlackAdapter } from '@chat-adapter/slack'
import { createMemoryState } from '@chat-adapter/state-memory'
import bolt from '@slack/bolt'
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
const port = kind === 'bolt' ? await startBolt() : kind === 'chat' ? await startChat() : undefined
if (port === undefined) {
  console.error('usage: node bench/click-peer.js bolt|chat')
  process.exit(2)
}
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`)
