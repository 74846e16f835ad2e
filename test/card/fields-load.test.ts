/**
 * ajv loads with the first form a card carries (prepareFields, when the card is built on the ask's
 * path), not with the module and not on a person's click. Run in a fresh Node process on the built
 * package: the test runner's own process may have loaded ajv for something else.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, expect, test } from 'vitest'
import { ensureBuilt, ROOT } from '../cli/built.js'

beforeAll(ensureBuilt, 120_000)

test('importing the field checks loads no ajv; preparing a form compiles its validators', async () => {
  const fields = join(ROOT, 'dist/src/card/fields.js')
  const script = `
import { createRequire } from 'node:module'
const fields = await import(${JSON.stringify(fields)})
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((p) => /node_modules[\\\\/]ajv[\\\\/]/.test(p))
const before = loaded()
const rule = { kind: 'text', schema: { type: 'string', format: 'email' }, required: true }
fields.prepareFields({ email: rule, go: { kind: 'decision', schema: {}, required: true } })
const after = loaded()
const checked = fields.checkFieldText(rule, 'not an address')
console.log(JSON.stringify({ before, after, checked }))
`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
  })
  expect(JSON.parse(stdout)).toEqual({
    before: false,
    after: true,
    checked: { ok: false, message: 'must be an email address' },
  })
})
