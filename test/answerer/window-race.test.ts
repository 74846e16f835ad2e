/**
 * A timed ask's window closes in the same instant as a click completes its card. The store
 * decides which came first, in one transaction each: the click's commit answers the open call (the
 * agent gets the answer, even though its window closed meanwhile), or the window's commit turns
 * the call continued and the click's commit queues its answer as the late reply (the agent gets
 * pending, then the reply). Never both, never neither, and never a click applied to a call that
 * is still open without an answer.
 */
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import type { Person } from '../../src/card/types.js'
import type { TimedUserQuestionResult } from '../../src/protocol/types.js'
import { openStore } from '../../src/store/index.js'
import { MemoryAdapter } from '../fakes/memory-adapter.js'
import { startAnswerer } from '../helpers/answerer.js'
import { colour, refFor, tempDir, until } from '../helpers/service.js'

const ROUNDS = 24
const ann: Person = { platform: 'slack', userId: 'U1', name: 'Ann' }

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** `n` turns of the event loop, each through the timers phase (where the window's timer runs). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 0))
}

it(`${ROUNDS} windows closing as a click completes the card: the agent gets the answer or pending and the reply`, async () => {
  const dir = tempDir()
  cleanups.push(dir.cleanup)
  const store = openStore(join(dir.dir, 'window-race.db'))
  let clock = Date.now()
  const adapter = new MemoryAdapter('slack')
  const { service, chat, close } = await startAnswerer({
    adapters: [adapter],
    destinations: [{ platform: 'slack', channel: 'C1' }],
    store,
    now: () => clock,
  })
  cleanups.push(close)
  const agent = service.agents.ensure('agent')
  const replies: string[] = []
  service.on('reply', ({ callId }) => replies.push(callId))
  const outcomes = { answered: 0, pending: 0 }

  for (let round = 0; round < ROUNDS; round++) {
    const callId = `race-${round}`
    const key = { agentId: 'agent', callId }
    const asking = service.askTimed({ questions: [colour], agent }, callId, 60_000)
    await until(() => adapter.messagesFor(callId).length === 1, `card ${callId}`)
    // A client holds the wait, so its timer is stopped until the claim is let go; meanwhile the
    // deadline passes. Letting go closes the window at once.
    const release = new AbortController()
    const claim = service.attachWait(agent, callId, release.signal)
    await claim.next()
    clock += 120_000
    const letGo = () => {
      release.abort()
      return claim.next()
    }
    const click = () =>
      chat.host.handle({
        ...refFor(callId, 'agent'),
        interaction: {
          id: `c${round}`,
          actor: ann,
          action: { type: 'choose', questionId: 'colour', label: 'Red' },
          at: clock,
        },
      })
    // Which starts first, and how many turns apart, varies from round to round.
    const apart = Math.floor(round / 2) % 6
    let clicked: ReturnType<typeof click>
    if (round % 2 === 0) {
      const closing = letGo()
      await turns(apart)
      clicked = click()
      await closing
    } else {
      clicked = click()
      await turns(apart)
      await letGo()
    }
    const outcome = await clicked
    // The click's answer counts either way: as the answer, or as the late reply.
    expect(outcome.ok, `round ${round}: the click`).toBe(true)
    // Decided in the click's own commit: the call is never left open with the card answered.
    const acked = await store.getCall(key)
    expect(['settled', 'continued'], `round ${round}: the call when the click is acknowledged`).toContain(
      acked?.state,
    )
    const result: TimedUserQuestionResult = await asking
    const call = await store.getCall(key)
    const events = (await store.events(key)).map((e) => e.type)
    if ('pending' in result) {
      outcomes.pending++
      expect(call?.state, `round ${round}`).toBe('continued')
      expect(call?.queuedReply?.payload.answers, `round ${round}: the reply`).toEqual([
        { id: 'colour', selected: ['Red'] },
      ])
      expect(events, `round ${round}`).toEqual(['asked', 'pending', 'reply_queued'])
      expect(replies, `round ${round}: the agent is told of the reply`).toContain(callId)
    } else {
      outcomes.answered++
      expect(result.answers, `round ${round}: the answer`).toEqual([{ id: 'colour', selected: ['Red'] }])
      expect(call?.state, `round ${round}`).toBe('settled')
      expect(call?.queuedReply, `round ${round}`).toBeUndefined()
      expect(events, `round ${round}`).toEqual(['asked', 'answered'])
      expect(replies, `round ${round}: no reply besides the answer`).not.toContain(callId)
    }
  }
  // Both ways of ending were taken, so the race was run both ways.
  expect(outcomes.answered, JSON.stringify(outcomes)).toBeGreaterThan(0)
  expect(outcomes.pending, JSON.stringify(outcomes)).toBeGreaterThan(0)
}, 60_000)
