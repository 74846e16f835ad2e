/** The hook's time: ASKBRIDGE_HOOK_TIMEOUT and the share of it askbridge waits for people. */
import { describe, expect, it } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { ConfigError, parseConfig } from '../../src/config/index.js'
import { hookAgentId, waitBudget } from '../../src/hooks/run.js'

describe('hook timeouts', () => {
  it('ASKBRIDGE_HOOK_TIMEOUT defaults to 600s (as Claude Code does) and takes durations or seconds', () => {
    expect(parseConfig({}, PLATFORMS).ASKBRIDGE_HOOK_TIMEOUT).toBe(600_000)
    expect(parseConfig({ ASKBRIDGE_HOOK_TIMEOUT: '10m' }, PLATFORMS).ASKBRIDGE_HOOK_TIMEOUT).toBe(600_000)
    expect(parseConfig({ ASKBRIDGE_HOOK_TIMEOUT: '90' }, PLATFORMS).ASKBRIDGE_HOOK_TIMEOUT).toBe(90_000)
    expect(() => parseConfig({ ASKBRIDGE_HOOK_TIMEOUT: 'soon' }, PLATFORMS)).toThrow(ConfigError)
    expect(() => parseConfig({ ASKBRIDGE_HOOK_TIMEOUT: 'soon' }, PLATFORMS)).toThrow(/ASKBRIDGE_HOOK_TIMEOUT/)
  })

  it('ASKBRIDGE_HOOK_TIMEOUT_DECISION is ask by default, or deny; anything else is refused by name', () => {
    expect(parseConfig({}, PLATFORMS).ASKBRIDGE_HOOK_TIMEOUT_DECISION).toBe('ask')
    expect(
      parseConfig({ ASKBRIDGE_HOOK_TIMEOUT_DECISION: 'deny' }, PLATFORMS).ASKBRIDGE_HOOK_TIMEOUT_DECISION,
    ).toBe('deny')
    expect(() => parseConfig({ ASKBRIDGE_HOOK_TIMEOUT_DECISION: 'allow' }, PLATFORMS)).toThrow(
      /ASKBRIDGE_HOOK_TIMEOUT_DECISION/,
    )
  })

  it('the answer comes before the hook gives up: 10% spare, at least 0.5 s, at most 5 s', () => {
    expect(waitBudget(2_000)).toBe(1_500)
    expect(waitBudget(10_000)).toBe(9_000)
    expect(waitBudget(55_000)).toBe(50_000)
    expect(waitBudget(600_000)).toBe(595_000)
  })

  it('a Claude Code session asks as its own agent id, safe for every platform id field', () => {
    expect(hookAgentId('abc123')).toBe('claude-code:abc123')
    expect(hookAgentId('a b/c')).toBe('claude-code:a-b-c')
    expect(hookAgentId('x'.repeat(200))).toMatch(/^[A-Za-z0-9_.:-]{1,64}$/)
  })
})
