/**
 * docs/library.md holds: its list under "What the package exports" names exactly the exports of
 * src/index.ts (types included, as the TypeScript checker sees them), and its TypeScript examples
 * type-check against the sources, with `askbridge` and its adapter entry points resolved to them.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Nodes, Root } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import ts from 'typescript'
import { expect, test } from 'vitest'

const root = resolve(import.meta.dirname, '../..')
const page: Root = fromMarkdown(readFileSync(join(root, 'docs/library.md'), 'utf8'))
const index = join(root, 'src/index.ts')

/** Each example is a module of its own in the test folder (an ES module: top-level await works). */
const examples = new Map(
  page.children
    .flatMap((n) => (n.type === 'code' && n.lang === 'ts' ? [n.value] : []))
    .map((code, i) => [join(root, `test/docs/library-example-${i}.ts`), code]),
)

/** One program over src/index.ts and the examples, with the project's compiler options. */
function program(): ts.Program {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config as object
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root)
  Object.assign(options, {
    noEmit: true,
    paths: {
      askbridge: [index],
      'askbridge/adapters': [join(root, 'adapters/platforms.ts')],
      'askbridge/adapters/slack': [join(root, 'adapters/slack/index.ts')],
    },
  })
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = (f) => examples.has(f) || fileExists(f)
  host.readFile = (f) => examples.get(f) ?? readFile(f)
  host.getSourceFile = (f, lang, ...rest) => {
    const code = examples.get(f)
    return code === undefined ? getSourceFile(f, lang, ...rest) : ts.createSourceFile(f, code, lang)
  }
  return ts.createProgram([index, ...examples.keys()], options, host)
}

const built = program()

/** The code spans of the lists in the section "What the package exports". */
function namedInDocs(): string[] {
  const names: string[] = []
  let inSection = false
  const visit = (node: Nodes) => {
    if (node.type === 'inlineCode' && /^[A-Za-z_]\w*$/.test(node.value)) names.push(node.value)
    if ('children' in node) for (const child of node.children) visit(child as Nodes)
  }
  for (const node of page.children) {
    if (node.type === 'heading')
      inSection = node.depth === 2 && JSON.stringify(node).includes('What the package exports')
    else if (inSection && node.type === 'list') visit(node)
  }
  return names
}

test('docs/library.md lists every export of src/index.ts, and nothing else', () => {
  const checker = built.getTypeChecker()
  const source = built.getSourceFile(index)
  const module = source && checker.getSymbolAtLocation(source)
  if (!module) throw new Error('src/index.ts is not a module')
  const exported = checker.getExportsOfModule(module).map((s) => s.name)
  expect(exported.length).toBeGreaterThan(20)
  expect([...new Set(namedInDocs())].sort()).toEqual([...exported].sort())
})

test('the TypeScript examples of docs/library.md type-check', () => {
  expect(examples.size).toBeGreaterThanOrEqual(2)
  const problems = [...examples.keys()].flatMap((file) =>
    ts
      .getPreEmitDiagnostics(built, built.getSourceFile(file))
      .map((d) => `example ${file}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`),
  )
  expect(problems).toEqual([])
})
