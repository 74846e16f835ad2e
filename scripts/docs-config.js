// Regenerate the table in docs/configuration.md from the config schema (src/config/env.ts, which gathers src/config/*-vars.ts, and
// each platform's module in adapters/<platform>/platform.ts).
// Run through `npm run docs:config`, which builds dist/ first.
import { readFileSync, writeFileSync } from 'node:fs'
import { PLATFORMS } from '../dist/adapters/platforms.js'
import { configRows, withConfigTable } from '../dist/src/config/reference.js'

for (const row of configRows(PLATFORMS)) {
  if (row.description === '')
    console.warn(`${row.name} has no description: add .meta({ description }) where it is declared`)
}

const path = new URL('../docs/configuration.md', import.meta.url)
const before = readFileSync(path, 'utf8')
const after = withConfigTable(before, PLATFORMS)
if (after === before) {
  console.log('docs/configuration.md is up to date')
} else {
  writeFileSync(path, after)
  console.log('docs/configuration.md: table regenerated')
}
