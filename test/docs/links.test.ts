/**
 * The docs hold together: every relative link in README.md and docs/*.md points at a file that
 * exists (and, into a markdown file, at a heading it has), and every `*.md` a source comment
 * names exists in the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import type { Nodes, Root } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'

const root = resolve(import.meta.dirname, '../..')

function parse(path: string): Root {
  return fromMarkdown(readFileSync(path, 'utf8'), {
    extensions: [gfm()],
    mdastExtensions: [gfmFromMarkdown()],
  })
}

function walk(node: Nodes, visit: (node: Nodes) => void): void {
  visit(node)
  if ('children' in node) for (const child of node.children) walk(child, visit)
}

/** A heading's text as GitHub reads it: the text of its text and code children. */
function plainText(node: Nodes): string {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value
  return 'children' in node ? node.children.map((c) => plainText(c as Nodes)).join('') : ''
}

/**
 * GitHub's heading anchors (as github-slugger makes them): lower case, every character that is
 * not a letter, mark, number, connector, space or hyphen dropped, spaces turned into hyphens; a
 * repeated slug gets `-1`, `-2`, ... in document order.
 */
function slugs(headings: string[]): string[] {
  const seen = new Map<string, number>()
  return headings.map((text) => {
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    const n = seen.get(base)
    seen.set(base, (n ?? -1) + 1)
    return n === undefined ? base : `${base}-${n + 1}`
  })
}

function anchorsOf(path: string): Set<string> {
  const headings: string[] = []
  walk(parse(path), (node) => {
    if (node.type === 'heading') headings.push(plainText(node))
  })
  return new Set(slugs(headings))
}

const anchorCache = new Map<string, Set<string>>()
const anchors = (path: string) => {
  let found = anchorCache.get(path)
  if (!found) {
    found = anchorsOf(path)
    anchorCache.set(path, found)
  }
  return found
}

/** What is wrong with a relative target `ref` (path and optional `#anchor`) seen from `dir`, if anything. */
function problemOf(dir: string, ref: string): string | undefined {
  const hash = ref.indexOf('#')
  const pathPart = decodeURIComponent(hash < 0 ? ref : ref.slice(0, hash))
  const anchor = hash < 0 ? undefined : decodeURIComponent(ref.slice(hash + 1))
  const target = resolve(dir, pathPart)
  if (!existsSync(target)) return `${relative(root, target)} does not exist`
  if (anchor && target.endsWith('.md') && !anchors(target).has(anchor)) {
    return `${relative(root, target)} has no heading #${anchor}`
  }
  return undefined
}

const docs = [
  'README.md',
  ...(existsSync(join(root, 'SECURITY.md')) ? ['SECURITY.md'] : []),
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

describe('relative links in the docs', () => {
  test.each(docs)('%s', (file) => {
    const path = join(root, file)
    const broken: string[] = []
    walk(parse(path), (node) => {
      if (node.type !== 'link' && node.type !== 'definition' && node.type !== 'image') return
      const url = node.url
      // Absolute URLs and protocol-relative ones leave the repository.
      if (/^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')) return
      const target = url === '' ? file : url.startsWith('#') ? `${file.split('/').pop()}${url}` : url
      const problem = problemOf(dirname(path), target)
      if (problem) broken.push(`${url}: ${problem}`)
    })
    expect(broken).toEqual([])
  })

  test('anchors follow the rule of GitHub', () => {
    expect(
      slugs([
        '`askbridge ask` in scripts and CI',
        'MCP: let Claude Code, Cursor or any MCP client ask people',
        'Rate limits',
        'Rate limits',
        'Set up a Slack app, step by step',
        'Signing in / out (OIDC) — café_1',
      ]),
    ).toEqual([
      'askbridge-ask-in-scripts-and-ci',
      'mcp-let-claude-code-cursor-or-any-mcp-client-ask-people',
      'rate-limits',
      'rate-limits-1',
      'set-up-a-slack-app-step-by-step',
      'signing-in--out-oidc--café_1',
    ])
  })
})

/** Source files under the folders a contributor edits. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name)
    if (name === 'node_modules' || name === 'dist') return []
    if (statSync(join(root, path)).isDirectory()) return sources(path)
    return /\.(ts|js|mjs)$/.test(name) ? [path] : []
  })
}

/** The comments of a source file, read with TypeScript's own scanner. */
function commentsOf(path: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard)
  scanner.setText(readFileSync(join(root, path), 'utf8'))
  const comments: string[] = []
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.SingleLineCommentTrivia || token === ts.SyntaxKind.MultiLineCommentTrivia) {
      comments.push(scanner.getTokenText())
    }
  }
  return comments
}

describe('markdown files named in source comments', () => {
  const files = ['src', 'adapters', 'bench', 'test'].flatMap(sources)

  test('there are sources to read', () => {
    expect(files.length).toBeGreaterThan(100)
  })

  test('every *.md a comment names exists (from the repository root or the file)', () => {
    const missing: string[] = []
    let named = 0
    for (const file of files) {
      for (const comment of commentsOf(file)) {
        for (const [ref] of comment.matchAll(/[\w./-]*\w\.md(?:#[\w-]+)?/g)) {
          named++
          const fromRoot = problemOf(root, ref)
          const fromFile = problemOf(dirname(join(root, file)), ref)
          if (fromRoot && fromFile) missing.push(`${file}: ${ref}: ${fromRoot}`)
        }
      }
    }
    expect(named).toBeGreaterThan(0)
    expect(missing).toEqual([])
  })
})
