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

/** Every string literal of a file's code (quoted or template), with its line. */
function literals(source: string): Array<{ text: string; line: number }> {
  const text = code(source)
  const found: Array<{ text: string; line: number }> = []
  for (const m of text.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)) {
    const value = m[1] ?? m[2] ?? m[3] ?? ''
    found.push({ text: value, line: text.slice(0, m.index).split('\n').length })
  }
  return found
}

/**
 * What names a platform in code: a literal that is a platform's id, or that holds one of its
 * environment variables. Both come from the platforms' modules, so a new platform is covered
 * the day it is added. The web inbox is the bridge's own surface (its `web` responder switch is
 * core), so `web` is not counted; prose in help texts (Slack, Discord) is not an id either.
 */
const platformIds = PLATFORMS.map((p) => p.id).filter((id) => id !== 'web')
const variables = PLATFORMS.flatMap((p) => Object.keys(p.env))
const prefixes = [...new Set(variables.map((v) => v.slice(0, v.indexOf('_') + 1)))].filter(
  (prefix) => prefix !== 'ASKBRIDGE_',
)

function namesAPlatform(literal: string): string | undefined {
  if (platformIds.includes(literal)) return `the platform id "${literal}"`
  const variable = prefixes.find((prefix) => new RegExp(`\\b${prefix}[A-Z]`).test(literal))
  return variable ? `a ${variable}* variable ("${literal}")` : undefined
}

describe('boundary: no platform is named in src/', () => {
  const found = files(join(root, 'src')).flatMap((file) =>
    literals(readFileSync(file, 'utf8')).flatMap(({ text, line }) => {
      const what = namesAPlatform(text)
      return what ? [`${relative(root, file)}:${line} names ${what}`] : []
    }),
  )

  it('no string literal under src/ is a platform id or a platform variable', () => {
    expect(found).toEqual([])
  })

  it('the check itself sees such literals (it would catch an offender)', () => {
    const sample = [
      "const a = 'slack'",
      "const b = 'x' // 'discord' in a comment is prose",
      'const c = "set TEAMS_APP_ID"',
    ].join('\n')
    expect(literals(sample).flatMap(({ text }) => (namesAPlatform(text) ? [text] : []))).toEqual([
      'slack',
      'set TEAMS_APP_ID',
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
