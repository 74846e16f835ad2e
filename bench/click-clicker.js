// The click section's clicker, as its own process: the fake Slack (in the bench process) serves
// every server's API calls, and askbridge's card updates are part of what it serves, so a clicker
// sharing that event loop would time the fake's work as the server's. Here nothing else runs.
//   node bench/click-clicker.js   (forked with IPC)
// Receives {url, bodies, secret, concurrency}; signs each body at send time like Slack does; replies
// {latencies, sent, failed}: per click, ms from sending the request to reading the whole ack, and
// when it was sent on the machine's monotonic clock (ms), which every process reads alike.
import { createHmac } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { monotonicMs, pool } from './lib.js'

function headers(body, secret) {
  const timestamp = Math.floor(Date.now() / 1000)
  const signature = createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')
  return {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': String(timestamp),
    'x-slack-signature': `v0=${signature}`,
  }
}

process.on('message', async ({ url, bodies, secret, concurrency }) => {
  const latencies = []
  const sent = []
  let failed = 0
  await pool(bodies, concurrency, async (body, i) => {
    const h = headers(body, secret)
    sent[i] = monotonicMs()
    const t = performance.now()
    try {
      const res = await fetch(url, { method: 'POST', headers: h, body })
      await res.arrayBuffer()
      if (res.status !== 200) failed++
    } catch {
      failed++
    }
    latencies.push(performance.now() - t)
  })
  process.send({ latencies, sent, failed })
})
