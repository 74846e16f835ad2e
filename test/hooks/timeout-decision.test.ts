/**
 * ASKBRIDGE_HOOK_TIMEOUT_DECISION=deny, from the configuration to the hook's answer: a real
 * bridge (the inbox only) where nobody answers a PreToolUse in time, and one shutting down.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { fixture, httpHook } from '../helpers/claude-code.js'
import { until } from '../helpers/service.js'
import { startBridge, type TestBridge } from '../server/helpers.js'

let tb: TestBridge
beforeAll(async () => {
  tb = await startBridge({ ASKBRIDGE_HOOK_TIMEOUT_DECISION: 'deny' })
})
afterAll(async () => {
  await tb?.close()
})

const deny = (why: string) => ({
  hookSpecificOutput: {
    hookEventName: 'PreToolUse',
    permissionDecision: 'deny',
    permissionDecisionReason: `${why}; the call is refused.`,
  },
})

it('a PreToolUse nobody answers is denied; a PermissionRequest still answers {}', async () => {
  expect(await httpHook(tb.url, fixture('pre-tool-use-bash'), 'timeout=1')).toEqual({
    status: 200,
    body: deny('Nobody decided in askbridge in time'),
  })
  expect(await httpHook(tb.url, fixture('permission-request-bash'), 'timeout=1')).toEqual({
    status: 200,
    body: {},
  })
})

it('a PreToolUse waiting while the bridge shuts down is denied, never left to {}', async () => {
  const waiting = httpHook(tb.url, fixture('pre-tool-use-bash'))
  await until(async () => (await tb.bridge.store.listCards()).length === 3, 'the third card')
  await tb.close()
  expect(await waiting).toEqual({ status: 200, body: deny('askbridge is shutting down') })
})
