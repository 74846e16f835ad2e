import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SlackQueueError } from '../adapters/slack/queue.js'
import { TeamsTransportError } from '../adapters/teams/transport.js'
import { CodecError } from '../src/card/codec.js'
import { UsageError } from '../src/cli/ask-args.js'
import { ConfigError } from '../src/config/env.js'
import { AskbridgeError, HttpError } from '../src/errors.js'
import { HookError } from '../src/hooks/errors.js'
import { PagerDutyError } from '../src/oncall/pagerduty.js'
import { UserQuestionError } from '../src/protocol/errors.js'
import { RoutesError } from '../src/routing/routes.js'
import { StorageError } from '../src/store/errors.js'
import { StoreOpenError } from '../src/store/pg-connect.js'

const root = new URL('..', import.meta.url).pathname

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
  })
}

describe('one coded error base', () => {
  const errors: Array<[AskbridgeError, string, string]> = [
    [new HttpError('NOT_FOUND', 'm'), 'HttpError', 'NOT_FOUND'],
    [new UserQuestionError('NO_PROVIDER', 'm'), 'UserQuestionError', 'NO_PROVIDER'],
    [new HookError('BAD_HOOK', 'm'), 'HookError', 'BAD_HOOK'],
    [new StorageError('full', 'm'), 'StorageError', 'STORAGE_UNAVAILABLE'],
    [new ConfigError(['X is bad']), 'ConfigError', 'INVALID_CONFIG'],
    [new RoutesError(['x is bad']), 'RoutesError', 'INVALID_ROUTES'],
    [new PagerDutyError('unauthorized', 'm', 401), 'PagerDutyError', 'unauthorized'],
    [new CodecError('m'), 'CodecError', 'UNENCODABLE_ID'],
    [new UsageError('m'), 'UsageError', 'USAGE'],
    [new StoreOpenError('m'), 'StoreOpenError', 'STORE_OPEN_FAILED'],
    [new TeamsTransportError('m', 403), 'TeamsTransportError', 'TEAMS_TRANSPORT'],
    [new SlackQueueError('m'), 'SlackQueueError', 'SLACK_QUEUE'],
  ]

  it.each(errors)('%s is an AskbridgeError with a stable name and code', (error, name, code) => {
    expect(error).toBeInstanceOf(AskbridgeError)
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe(name)
    expect(error.code).toBe(code)
    expect(error.toJSON()).toEqual({ name, code, message: error.message })
    expect(JSON.parse(JSON.stringify(error))).toEqual({ name, code, message: error.message })
  })

  it('keeps the cause, never in the wire shape', () => {
    const cause = new Error('driver said no')
    const error = new StorageError('io', 'storage unavailable', { cause })
    expect(error.cause).toBe(cause)
    expect(Object.keys(error.toJSON()).sort()).toEqual(['code', 'message', 'name'])
  })

  it('an HttpError a client saw keeps the status it got; a server one has none (its code decides)', () => {
    expect(new HttpError('NOT_FOUND', 'm', { status: 404 }).status).toBe(404)
    expect(new HttpError('NOT_FOUND', 'm').status).toBeUndefined()
  })

  it('no other class under src/ or adapters/ extends Error directly', () => {
    const offenders = [...files(join(root, 'src')), ...files(join(root, 'adapters'))]
      .filter((file) => !file.endsWith(join('src', 'errors.ts')))
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/class\s+(\w+)\s+extends\s+Error\b/g)].map(
          (m) => `${relative(root, file)}: ${m[1]}`,
        ),
      )
    expect(offenders).toEqual([])
  })
})
