/**
 * A flood of clicks: 500 people click one card at once, over Slack's HTTP interactivity (signed
 * requests to the real Bolt receiver). Every click gets its response before the fake Slack's
 * acknowledgement deadline (3 s, as Slack's), none is dropped without one, one answer wins and
 * reaches the waiting agent once, and the other 499 are refused and audited so.
 */
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { decodeComponentId } from '../../src/card/codec.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { until } from '../helpers/service.js'
import { type Bridge, startBridge, startSlackRig } from '../slack/rig.js'

const CLICKS = 500
const pick: AskUserQuestionItem = {
  id: 'pick',
  question: 'Ship it?',
  options: [{ label: 'Yes' }, { label: 'No' }],
}

/**
 * What Slack's side does, on a thread of its own: send every signed request at once and time each
 * against the acknowledgement deadline. Sent from the bridge's own event loop, the 500 clients'
 * work would be counted as the bridge's.
 */
async function sendFromAnotherThread(
  requests: Array<{ url: string; headers: Record<string, string>; body: string }>,
  deadlineMs: number,
): Promise<Array<{ status: number; timedOut: boolean }>> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { requests, deadlineMs } = workerData
    Promise.all(requests.map(async ({ url, headers, body }) => {
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(), deadlineMs)
      try {
        const res = await fetch(url, { method: 'POST', headers, body, signal: controller.signal })
        await res.text()
        return { status: res.status, timedOut: false }
      } catch {
        return { status: 0, timedOut: controller.signal.aborted }
      } finally {
        clearTimeout(timer)
      }
    })).then((results) => parentPort.postMessage(results))
  `
  const worker = new Worker(code, { eval: true, workerData: { requests, deadlineMs } })
  try {
    return await new Promise((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
    })
  } finally {
    await worker.terminate()
  }
}

let bridge: Bridge
let rig: Awaited<ReturnType<typeof startSlackRig>>
beforeAll(async () => {
  rig = await startSlackRig('http')
  bridge = await startBridge(rig)
})
afterAll(async () => {
  await bridge.close()
})

it(`${CLICKS} clicks at once on one card: each answered in time, one answer to the agent`, async () => {
  const answers: unknown[] = []
  const asking = bridge.service
    .ask({ questions: [pick], agent: bridge.agent(), wait: { callId: 'flood' } })
    .then((answer) => {
      answers.push(answer)
      return answer
    })
  await until(() => rig.fake.liveActionIds('flood').length > 0, 'card posted')
  const message = rig.fake.messagesOf('flood')[0]
  if (!message) throw new Error('no card')
  const buttons = rig.fake.liveActionIds('flood').filter((id) => decodeComponentId(id)?.verb === 'choose')
  const people = Array.from({ length: CLICKS }, (_, i) => ({ id: `U0FLOOD${String(i).padStart(3, '0')}` }))
  const payloads = people.map((p, i) =>
    rig.fake.actionPayload(p, message, buttons[i % buttons.length] as string),
  )
  const deliveries = await sendFromAnotherThread(
    payloads.map((p) => rig.fake.signedRequest(p)),
    rig.fake.options.ackTimeoutMs,
  )
  // Each one acknowledged before the fake's deadline: none timed out, none dropped.
  expect(deliveries.filter((d) => d.timedOut)).toEqual([])
  expect(deliveries.length).toBe(CLICKS)

  const answer = await asking
  expect(answer.answers).toHaveLength(1)
  const audit = await bridge.service.store.listAudit({ callId: 'flood' })
  const clicks = audit.filter((a) => a.kind === 'interaction')
  expect(clicks.filter((a) => !a.refused)).toHaveLength(1)
  expect(clicks.filter((a) => a.refused)).toHaveLength(CLICKS - 1)
  expect(audit.filter((a) => a.kind === 'completed')).toHaveLength(1)
  const call = await bridge.service.store.getCall({ agentId: 'agent-1', callId: 'flood' })
  expect(call?.state).toBe('settled')
  expect(answers).toHaveLength(1)
}, 60_000)
