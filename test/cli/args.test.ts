import { describe, expect, test } from 'vitest'
import { exitCodeOf, formatAnswers } from '../../src/cli/ask.js'
import { parseAskArgs, UsageError } from '../../src/cli/ask-args.js'
import { formatDuration, parseDuration } from '../../src/cli/duration.js'

const io = {
  readFile: (path: string) => {
    if (path === 'PLAN.md') return '1. Do it'
    throw new Error('ENOENT')
  },
  readStdin: () => 'from stdin',
}

describe('askbridge ask arguments', () => {
  test('options, multi, header, detail', () => {
    const cmd = parseAskArgs(
      [
        '--question',
        'Regions?',
        '--option',
        'eu',
        '--option',
        'us',
        '--multi',
        '--header',
        'Infra',
        '--detail',
        '-',
      ],
      io,
    )
    expect(cmd.question).toEqual({
      id: 'q1',
      question: 'Regions?',
      header: 'Infra',
      detail: 'from stdin',
      options: [{ label: 'eu' }, { label: 'us' }],
      multiSelect: true,
    })
    expect(cmd.kind).toBe('questions')
  })

  test('--approval makes a valid approval (detail defaults to the question)', () => {
    const cmd = parseAskArgs(['--approval', '--always', '-q', 'Deploy?'], io)
    expect(cmd.kind).toBe('approval')
    expect(cmd.question).toMatchObject({
      detail: 'Deploy?',
      options: [{ label: 'Approve' }, { label: 'Reject' }, { label: 'Always approve' }],
      intent: { kind: 'approval', approve: 'Approve', reject: 'Reject', always: 'Always approve' },
    })
  })

  test('--plan @file', () => {
    const cmd = parseAskArgs(['--plan', '@PLAN.md', '--question', 'OK?'], io)
    expect(cmd.question).toMatchObject({
      detail: '1. Do it',
      intent: { kind: 'plan-review', approve: 'Approve' },
      options: [{ label: 'Approve' }, { label: 'Request changes' }],
    })
  })

  test('--timeout, --route, --agent, --call-id, --json', () => {
    const cmd = parseAskArgs(
      ['-q', 'x', '--timeout', '5m', '--route', 'oncall', '--agent', 'ci', '--call-id', 'job-1', '--json'],
      io,
    )
    expect(cmd).toMatchObject({
      timeoutMs: 300_000,
      route: 'oncall',
      agentId: 'ci',
      callId: 'job-1',
      json: true,
    })
  })

  test.each([
    [[], /--question is required/],
    [['-q', 'x', '--timeout', 'later'], /not a duration/],
    [['-q', 'x', '--approval', '--option', 'A'], /fixed/],
    [['-q', 'x', '--multi'], /needs at least one --option/],
    [['-q', 'x', '--always'], /needs --approval/],
    [['-q', 'x', '--approval', '--timeout', '1m'], /waits until someone decides/],
    [['-q', 'x', '--detail', '@missing.md'], /cannot read/],
    [['-q', 'x', '--plan', 'PLAN.md'], /takes @FILE/],
    [['-q', 'x', 'stray'], /Unexpected argument/],
  ])('usage error: %j', (argv, message) => {
    expect(() => parseAskArgs(argv as string[], io)).toThrow(UsageError)
    expect(() => parseAskArgs(argv as string[], io)).toThrow(message)
  })

  test('exit codes and output', () => {
    const approval = parseAskArgs(['--approval', '--always', '-q', 'Deploy?'], io)
    expect(exitCodeOf(approval, [{ id: 'q1', selected: ['Approve'] }])).toBe(0)
    expect(exitCodeOf(approval, [{ id: 'q1', selected: ['Always approve'] }])).toBe(0)
    expect(exitCodeOf(approval, [{ id: 'q1', selected: ['Reject'] }])).toBe(4)
    const plan = parseAskArgs(['--plan', '@PLAN.md', '-q', 'OK?'], io)
    expect(exitCodeOf(plan, [{ id: 'q1', selected: ['Approve'] }])).toBe(0)
    expect(exitCodeOf(plan, [{ id: 'q1', selected: [], custom: 'no' }])).toBe(4)
    expect(formatAnswers([{ id: 'q1', selected: ['a', 'b'], custom: 'c' }])).toBe('a, b, c\n')
    expect(
      formatAnswers([
        { id: 'x', selected: ['a'] },
        { id: 'y', selected: [] },
      ]),
    ).toBe('x: a\ny: \n')
  })

  test('durations', () => {
    expect([parseDuration('90s'), parseDuration('5m'), parseDuration('1h'), parseDuration('1d')]).toEqual([
      90_000, 300_000, 3_600_000, 86_400_000,
    ])
    expect(parseDuration('250ms')).toBe(250)
    expect(parseDuration('30')).toBe(30_000)
    expect([parseDuration('0s'), parseDuration('-1m'), parseDuration('soon')]).toEqual([
      undefined,
      undefined,
      undefined,
    ])
    expect(formatDuration(83_000)).toBe('1m 23s')
    expect(formatDuration(7_500_000)).toBe('2h 05m')
  })
})
