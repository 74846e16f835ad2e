import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PLATFORMS } from '../adapters/platforms.js'

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

/** Source text without comments: the rules below are about code, not prose about it. */
function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1')
}

/**
 * What names a platform in code: a platform's id as a word (in a string, a regular expression or
 * a property name: `'slack'`, `/^(email|slack):/`, `responders.slack`), or one of its environment
 * variables. Both come from the platforms' modules, so a new platform is covered the day it is
 * added. The web inbox is the bridge's own surface (its `web` responder switch is core), so `web`
 * is not counted; comments, and prose naming a product in a help text ("Slack, Discord"), are not
 * ids either.
 */
const platformIds = PLATFORMS.map((p) => p.id).filter((id) => id !== 'web')
const variables = PLATFORMS.flatMap((p) => Object.keys(p.env))
const prefixes = [...new Set(variables.map((v) => v.slice(0, v.indexOf('_') + 1)))].filter(
  (prefix) => prefix !== 'ASKBRIDGE_',
)
const naming = new RegExp(`\\b(${platformIds.join('|')})\\b|\\b(${prefixes.join('|')})[A-Z0-9_]+`, 'g')

/** Each place a file's code (comments left out) names a platform, with its line. */
function platformNames(source: string): Array<{ name: string; line: number }> {
  const text = code(source)
  return [...text.matchAll(naming)].map((m) => ({
    name: m[0],
    line: text.slice(0, m.index).split('\n').length,
  }))
}

describe('boundary: no platform is named in src/', () => {
  const found = files(join(root, 'src')).flatMap((file) =>
    platformNames(readFileSync(file, 'utf8')).map(
      ({ name, line }) => `${relative(root, file)}:${line} names "${name}"`,
    ),
  )

  it('no code under src/ names a platform id or a platform variable', () => {
    expect(found).toEqual([])
  })

  it('the check itself sees them (it would catch an offender)', () => {
    const sample = [
      "const a = 'slack'",
      "const b = 'x' // 'discord' in a comment is prose",
      'const c = "set TEAMS_APP_ID"',
      'const d = /^(email|discord):/',
      'const e = responders.teams',
      "const f = 'Ask in Slack or the inbox'",
    ].join('\n')
    expect(platformNames(sample)).toEqual([
      { name: 'slack', line: 1 },
      { name: 'TEAMS_APP_ID', line: 3 },
      { name: 'discord', line: 4 },
      { name: 'teams', line: 5 },
    ])
    expect(platformIds).toEqual(expect.arrayContaining(['slack', 'discord', 'teams']))
  })
})

/**
 * What an adapter may import from src/: the kit (src/adapter-kit.ts) and nothing else. The web
 * inbox is the exception: it is the bridge's own page, served by the bridge's HTTP server from
 * its store, so adapters/web may also import modules under src/server/, src/store/ and
 * src/hooks/ (routing, bodies, SSE, sign-in, the store's records, the rendered tool input);
 * everything card-related still comes through the kit.
 */
const KIT = 'src/adapter-kit.ts'
const WEB_EXTRA = [/^src\/server\//, /^src\/store\//, /^src\/hooks\//]

function allowed(adapterFile: string, target: string): boolean {
  if (target === KIT) return true
  return adapterFile.startsWith('adapters/web/') && WEB_EXTRA.some((pattern) => pattern.test(target))
}

describe('boundary: adapters reach the core only through the kit', () => {
  const offenders = files(join(root, 'adapters')).flatMap((file) => {
    const from = relative(root, file)
    return specifiers(readFileSync(file, 'utf8'))
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(root, join(dirname(file), spec)).replace(/\.js$/, '.ts'))
      .filter((target) => target.startsWith('src/') && !allowed(from, target))
      .map((target) => `${from} imports ${target}`)
  })

  it('adapters import nothing from src/ but src/adapter-kit.ts (adapters/web: also src/server, src/store, src/hooks)', () => {
    expect(offenders).toEqual([])
  })

  it('the rule itself refuses a deep import', () => {
    expect(allowed('adapters/slack/index.ts', 'src/store/pg-leader.ts')).toBe(false)
    expect(allowed('adapters/slack/index.ts', KIT)).toBe(true)
    expect(allowed('adapters/web/adapter.ts', 'src/server/sse.ts')).toBe(true)
    expect(allowed('adapters/web/adapter.ts', 'src/card/view.ts')).toBe(false)
  })
})
