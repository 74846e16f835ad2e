import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type CardRef, cardRef } from '../../src/card/codec.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import type { CallKey, Store } from '../../src/store/types.js'

export const colour: AskUserQuestionItem = {
  id: 'colour',
  question: 'Which colour?',
  options: [{ label: 'Red' }, { label: 'Blue' }],
}

export const regions: AskUserQuestionItem = {
  id: 'regions',
  question: 'Which regions?',
  multiSelect: true,
  options: [{ label: 'eu' }, { label: 'us' }, { label: 'ap' }],
}

/** A temporary directory removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'askbridge-test-'))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

export function makeService(store: Store = openStore('memory')) {
  const service = new UserQuestionService({ store })
  return { service, store }
}

/** A promise with its resolvers exposed. */
export function deferred<T>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** The real one, captured before any test fakes the timers. */
const realImmediate = setImmediate

/**
 * Let the store commit what was asked of it, also under fake timers: SQLite commits a turn's
 * writes together on the next real turn of the event loop (src/store/sqlite-group.ts).
 */
export async function committed(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => realImmediate(resolve))
}

/** Wait until `check` returns a truthy value (polling; no wall-clock assertions). */
export async function until<T>(
  check: () => T | Promise<T>,
  what = 'condition',
  tries = 400,
): Promise<NonNullable<T>> {
  for (let i = 0; i < tries; i++) {
    const value = await check()
    if (value) return value as NonNullable<T>
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/**
 * The key of the one call with this callId (tests that ask as a single agent). An unknown
 * callId gives the `default` agent's key; several agents' calls throw.
 */
export async function keyFor(store: Pick<Store, 'findCalls'> | undefined, callId: string): Promise<CallKey> {
  const found = store ? await store.findCalls(callId) : []
  if (found.length > 1) throw new Error(`callId "${callId}" names calls of several agents`)
  return { agentId: found[0]?.agentId ?? 'default', callId }
}

/**
 * The reference a card's components carry (its callId and agent tag), to find the card the way
 * a click does. `default` is the agent of an ask that named none.
 */
export function refFor(callId: string, agentId = 'default'): CardRef {
  return cardRef({ agentId, callId })
}
