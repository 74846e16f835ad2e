// Regenerate the table in docs/configuration.md from the config schema (src/config/env.ts).
// Run through `npm run docs:config`, which builds dist/ first.
import { readFileSync, writeFileSync } from 'node:fs'
import { configRows, withConfigTable } from '../dist/src/config/reference.js'

for (const row of configRows()) {
  if (row.description === '')
    console.warn(`${row.name} has no description: add .meta({ description }) in src/config/env.ts`)
}

const path = new URL('../docs/configuration.md', import.meta.url)
const before = readFileSync(path, 'utf8')
const after = withConfigTable(before)
if (after === before) {
  console.log('docs/configuration.md is up to date')
} else {
  writeFileSync(path, after)
  console.log('docs/configuration.md: table regenerated')
}
