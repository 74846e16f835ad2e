import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * The floors of the code, bottom-up (docs/architecture.md, "Folders and layers"). A file may
 * import from its own floor and the floors below it, never from a floor above; and no files
 * import each other in a circle, type imports included. Each floor is a list of folders (a
 * trailing slash) or single files; every file under src/ and adapters/ must be on one.
 *
 * Where the order is a choice, the imports made it: the card needs only the protocol, the service
 * checks callIds with the card's codec; routing sits below the configuration, which reads the
 * routes file's types and its duration parser; PagerDuty (oncall) sits above both, since its
 * start-up check reads the routes file and reports a ConfigError. A platform's descriptor (ids,
 * variables, mentions) is low, for configuration and routing; its module (src/platform.ts) names
 * the adapter and the server's mounts, so it shares the server's floor.
 */
const FLOORS: ReadonlyArray<{ floor: string; holds: readonly string[] }> = [
  { floor: 'bounded maps', holds: ['src/bounded.ts'] },
  { floor: 'log', holds: ['src/log.ts'] },
  { floor: 'errors', holds: ['src/errors.ts'] },
  { floor: 'protocol', holds: ['src/protocol/'] },
  { floor: 'card', holds: ['src/card/'] },
  { floor: 'store', holds: ['src/store/'] },
  { floor: 'service', holds: ['src/service/'] },
  { floor: 'platform descriptors', holds: ['src/platform-descriptor.ts'] },
  { floor: 'routing', holds: ['src/routing/'] },
  { floor: 'config', holds: ['src/config/'] },
  { floor: 'oncall', holds: ['src/oncall/'] },
  { floor: 'answerer', holds: ['src/answerer/'] },
  { floor: 'hooks', holds: ['src/hooks/'] },
  { floor: 'server', holds: ['src/server/', 'src/platform.ts'] },
  { floor: 'cli', holds: ['src/cli/'] },
  { floor: 'adapter kit', holds: ['src/adapter-kit.ts'] },
  { floor: 'adapters', holds: ['adapters/'] },
  { floor: 'library', holds: ['src/index.ts'] },
]

type Edge = { from: string; to: string }

const root = new URL('..', import.meta.url).pathname

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return files(path)
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : []
  })
}

/**
 * Every relative import of each file under src/ and adapters/, as paths from the repository
 * root: `import`, `import type`, `export … from` and `import('…')`, read by the TypeScript
 * scanner (so an import in a comment or a string is not one).
 */
function importGraph(): { nodes: string[]; edges: Edge[] } {
  const paths = [...files(join(root, 'src')), ...files(join(root, 'adapters'))]
  const edges = paths.flatMap((path) =>
    ts
      .preProcessFile(readFileSync(path, 'utf8'), true, true)
      .importedFiles.map((f) => f.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => ({
        from: relative(root, path),
        to: relative(root, join(dirname(path), spec)).replace(/\.js$/, '.ts'),
      })),
  )
  return { nodes: paths.map((p) => relative(root, p)), edges }
}

/** The floor a file is on (its index in `floors`), or -1. */
function floorOf(file: string, floors = FLOORS): number {
  return floors.findIndex(({ holds }) =>
    holds.some((h) => (h.endsWith('/') ? file.startsWith(h) : file === h)),
  )
}

/** Imports that reach up: from a file to one on a higher floor. */
function upward(edges: readonly Edge[], floors = FLOORS): string[] {
  return edges
    .filter(({ from, to }) => floorOf(to, floors) > floorOf(from, floors))
    .map(
      ({ from, to }) =>
        `${from} (${floors[floorOf(from, floors)]?.floor}) imports ${to} (${floors[floorOf(to, floors)]?.floor})`,
    )
}

/** The import circles: each strongly connected set of two or more files (or a file importing itself). */
function circles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>()
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to])
  // Tarjan's algorithm.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v) as number)
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
      }
    }
    if (low.get(v) !== index.get(v)) return
    const set: string[] = []
    let w: string | undefined
    do {
      w = stack.pop() as string
      onStack.delete(w)
      set.push(w)
    } while (w !== v)
    if (set.length > 1 || next.get(v)?.includes(v)) found.push(set.sort())
  }
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v)
  return found
}

describe('architecture: floors and circles', () => {
  const { nodes, edges } = importGraph()

  it('sees the imports (type imports, re-exports and dynamic imports too)', () => {
    expect(nodes.length).toBeGreaterThan(100)
    const has = (from: string, to: string) => edges.some((e) => e.from === from && e.to === to)
    // A type-only import, a re-export and a dynamic import of the real code base.
    expect(has('src/service/replicas.ts', 'src/service/service.ts')).toBe(true)
    expect(has('src/adapter-kit.ts', 'src/card/view.ts')).toBe(true)
    expect(has('src/cli/main.ts', 'src/config/platforms.ts')).toBe(true)
    // Every imported file exists: the graph has no misread paths.
    const missing = edges.filter((e) => !nodes.includes(e.to))
    expect(missing).toEqual([])
  })

  it('every file under src/ and adapters/ is on a floor', () => {
    expect(nodes.filter((file) => floorOf(file) < 0)).toEqual([])
  })

  it('no file imports from a higher floor', () => {
    expect(upward(edges)).toEqual([])
  })

  it('no files import each other in a circle', () => {
    expect(circles(edges)).toEqual([])
  })

  it('docs/architecture.md lists the same floors, in the same order', () => {
    const page = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
    const section = page.slice(
      page.indexOf('## Folders and layers'),
      page.indexOf('\n## ', page.indexOf('## Folders and layers') + 1),
    )
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => [...(line.split(' | ')[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]))
    expect(rows).toEqual(FLOORS.map(({ holds }) => holds))
  })

  it('the checks themselves catch an upward import and a circle', () => {
    const floors = [
      { floor: 'low', holds: ['low/'] },
      { floor: 'high', holds: ['high.ts'] },
    ]
    const sample: Edge[] = [
      { from: 'high.ts', to: 'low/a.ts' },
      { from: 'low/a.ts', to: 'low/b.ts' },
      { from: 'low/b.ts', to: 'low/c.ts' },
      { from: 'low/c.ts', to: 'low/a.ts' },
      { from: 'low/c.ts', to: 'high.ts' },
      { from: 'low/d.ts', to: 'low/d.ts' },
    ]
    expect(upward(sample, floors)).toEqual(['low/c.ts (low) imports high.ts (high)'])
    expect(circles(sample)).toEqual([['high.ts', 'low/a.ts', 'low/b.ts', 'low/c.ts'], ['low/d.ts']])
    expect(circles(sample.slice(0, 3))).toEqual([])
    expect(floorOf('low/x/y.ts', floors)).toBe(0)
    expect(floorOf('high.ts', floors)).toBe(1)
    expect(floorOf('elsewhere.ts', floors)).toBe(-1)
  })
})
