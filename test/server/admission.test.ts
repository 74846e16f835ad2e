/**
 * Bad input: a client that opens far more blocking asks at once than the bridge admits. Every
 * request gets an HTTP answer: the admitted ones wait for their answers, the excess gets 503
 * OVERLOADED with Retry-After (not stored, so asking again later is safe). No connection is left
 * hanging or dropped.
 */
import { afterEach, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { askThroughRestarts, BridgeClient } from '../../src/cli/client.js'
import { parseConfig } from '../../src/config/env.js'
import { act, cardPosted, startBridge, type TestBridge, until } from './helpers.js'

let bridge: TestBridge | undefined
afterEach(async () => {
  await bridge?.close()
  bridge = undefined
})

const question = { id: 'q', question: 'Proceed?', options: [{ label: 'Yes' }, { label: 'No' }] }

interface Outcome {
  status: number
  code?: string
  retryAfter?: string | null
  answers?: unknown
}

function ask(url: string, callId: string): Promise<Outcome> {
  return fetch(`${url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId, questions: [question] }),
  }).then(async (res) => {
    const body = (await res.json()) as { error?: { code: string }; answers?: unknown }
    return {
      status: res.status,
      ...(body.error ? { code: body.error.code } : {}),
      retryAfter: res.headers.get('retry-after'),
      ...(body.answers ? { answers: body.answers } : {}),
    }
  })
}

it('300 blocking asks at once with room for 20: 20 wait, 280 get 503 OVERLOADED; every connection answered', async () => {
  bridge = await startBridge({ ASKBRIDGE_MAX_WAITING_ASKS: '20' })
  const { url } = bridge
  const outcomes: Array<Outcome | Error | undefined> = Array.from({ length: 300 })
  const requests = outcomes.map((_, i) =>
    ask(url, `flood-${i}`).then(
      (o) => {
        outcomes[i] = o
      },
      (error: unknown) => {
        outcomes[i] = error as Error
      },
    ),
  )
  await until(() => outcomes.filter((o) => o !== undefined).length === 280, '280 answered', 3000)
  const refused = outcomes.filter((o): o is Outcome => o !== undefined && !(o instanceof Error))
  expect(refused).toHaveLength(280)
  for (const o of refused) expect(o).toEqual({ status: 503, code: 'OVERLOADED', retryAfter: '1' })
  // The 20 admitted are open questions, waiting; the refused ones were never stored.
  const waiting = outcomes.flatMap((o, i) => (o === undefined ? [`flood-${i}`] : []))
  expect(waiting).toHaveLength(20)
  const known = async (callId: string) => (await fetch(`${url}/v1/questions/${callId}`)).status
  for (const callId of waiting) await until(async () => (await known(callId)) === 200, `${callId} stored`)
  const refusedId = `flood-${outcomes.findIndex((o) => o !== undefined)}`
  expect(await known(refusedId)).toBe(404)

  // An answer frees a place: the next ask is admitted and waits.
  const first = waiting[0] as string
  // Someone answers in the web inbox, on the card it shows.
  await cardPosted(url, first)
  const answered = await act(url, first, { type: 'choose', questionId: 'q', label: 'Yes' })
  expect(answered.status, answered.text).toBe(200)
  await until(() => outcomes[Number(first.slice(6))] !== undefined, 'first answer returned')
  expect(outcomes[Number(first.slice(6))]).toMatchObject({
    status: 200,
    answers: [{ id: 'q', selected: ['Yes'] }],
  })
  const later = ask(url, 'later')
  await until(async () => (await known('later')) === 200, 'later admitted')
  expect(await ask(url, 'one-too-many')).toMatchObject({ status: 503, code: 'OVERLOADED' })

  // Shutting down ends the waiting ones with a code too: nothing is dropped silently.
  await bridge.close()
  bridge = undefined
  await Promise.all(requests)
  expect(await later).toMatchObject({ status: 503, code: 'SHUTTING_DOWN' })
  const errors = outcomes.filter((o) => o instanceof Error)
  expect(errors).toEqual([])
  expect(outcomes.filter((o) => (o as Outcome).code === 'SHUTTING_DOWN')).toHaveLength(19)
}, 60_000)

it('askbridge ask (askThroughRestarts) asks again after OVERLOADED until it is taken', async () => {
  bridge = await startBridge({ ASKBRIDGE_MAX_WAITING_ASKS: '1' })
  const { url } = bridge
  const first = ask(url, 'first')
  await cardPosted(url, 'first')
  const client = new BridgeClient({ url })
  const second = askThroughRestarts(client, { callId: 'second', questions: [question] })
  // Refused while the first waits (the bridge counts it), then taken once the first is answered.
  await until(
    async () => (await fetch(`${url}/metrics`).then((r) => r.text())).includes('OVERLOADED'),
    'refused once',
  )
  expect((await fetch(`${url}/v1/questions/second`)).status).toBe(404)
  await act(url, 'first', { type: 'choose', questionId: 'q', label: 'No' })
  expect(await first).toMatchObject({ status: 200 })
  // Taken: stored, and its card is in the inbox to be answered.
  await cardPosted(url, 'second')
  await act(url, 'second', { type: 'choose', questionId: 'q', label: 'Yes' })
  expect(await second).toMatchObject({ answers: [{ id: 'q', selected: ['Yes'] }] })
})

it('the limit is validated and defaults to 5000', () => {
  expect(parseConfig({}, PLATFORMS).ASKBRIDGE_MAX_WAITING_ASKS).toBe(5000)
  expect(parseConfig({ ASKBRIDGE_MAX_WAITING_ASKS: '12' }, PLATFORMS).ASKBRIDGE_MAX_WAITING_ASKS).toBe(12)
  for (const bad of ['0', '-3', '1.5', 'many'])
    expect(() => parseConfig({ ASKBRIDGE_MAX_WAITING_ASKS: bad }, PLATFORMS), bad).toThrow(
      /ASKBRIDGE_MAX_WAITING_ASKS/,
    )
})
