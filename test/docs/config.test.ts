import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { PLATFORMS } from '../../adapters/platforms.js'
import { configRows, withConfigTable } from '../../src/config/reference.js'

const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')

test('the table in docs/configuration.md is the one the config schema generates', () => {
  const expected = withConfigTable(page, PLATFORMS)
  if (expected !== page) {
    expect.fail(
      'docs/configuration.md differs from the config schema (src/config/env.ts and the platform modules): run `npm run docs:config` and commit the result',
    )
  }
})

test('the secrets column follows secretsOf', () => {
  const secret = configRows(PLATFORMS)
    .filter((r) => r.secret)
    .map((r) => r.name)
  expect(secret).toContain('SLACK_BOT_TOKEN')
  expect(secret).toContain('ASKBRIDGE_DB')
  expect(secret).not.toContain('SLACK_CHANNEL')
})
