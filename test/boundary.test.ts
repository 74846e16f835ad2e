import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = new URL('..', import.meta.url).pathname
const PLATFORM_SDKS = [
  /^@slack\//,
  /^discord\.js$/,
  /^@discordjs\//,
  /^discord-api-types/,
  /^discord-interactions$/,
  /^@microsoft\/agents-/,
]

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** Every module specifier a file imports, statically or dynamically. */
function specifiers(source: string): string[] {
  const found: string[] = []
  const patterns = [
    /\bfrom\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]/g,
    /\bimport\s+['"]([^'"]+)['"]/g,
  ]
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) if (m[1]) found.push(m[1])
  // A dynamic import through a variable hides its target: flag it too.
  if (/\bimport\s*\(\s*[^'"\s)]/.test(source)) found.push('<dynamic import of a computed path>')
  return found
}

describe('boundary: the core knows no platform', () => {
  const offenders = files(join(root, 'src')).flatMap((file) =>
    specifiers(readFileSync(file, 'utf8'))
      .filter(
        (spec) =>
          spec.includes('/adapters/') ||
          spec.startsWith('<dynamic') ||
          PLATFORM_SDKS.some((sdk) => sdk.test(spec)),
      )
      .map((spec) => `${relative(root, file)} imports ${spec}`),
  )

  it('nothing under src/ imports from adapters/ or a platform SDK', () => {
    expect(offenders).toEqual([])
  })

  it('the check itself sees imports (it would catch an offender)', () => {
    expect(
      specifiers(
        "import { App } from '@slack/bolt'\nconst x = await import('../../adapters/slack/index.js')",
      ),
    ).toEqual(['@slack/bolt', '../../adapters/slack/index.js'])
    expect(specifiers('const m = await import(path)')).toContain('<dynamic import of a computed path>')
  })
})
