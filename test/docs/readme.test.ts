/**
 * The README stays a five-minute read that points at docs/, and every docs page says first what
 * it is for: a title, then a paragraph.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { expect, test } from 'vitest'

const root = resolve(import.meta.dirname, '../..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

test('the README is at most 200 lines, names the test command and links every docs page', () => {
  expect(readme.split('\n').length).toBeLessThanOrEqual(200)
  expect(readme).toContain('npm test')
  const pages = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'))
  expect(pages.length).toBeGreaterThan(15)
  for (const page of pages) expect(readme, page).toContain(`](docs/${page}`)
})

test.each(
  readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
)('%s opens with its title and a paragraph saying what it is for', (file) => {
  const [first, second] = fromMarkdown(readFileSync(join(root, file), 'utf8')).children
  expect(first?.type === 'heading' && first.depth).toBe(1)
  expect(second?.type).toBe('paragraph')
})
