/**
 * docs/library.md names exactly what the package's main entry point exports: its list under
 * "What the package exports" is compared with the exports of src/index.ts, types included, as
 * the TypeScript checker sees them.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Nodes } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import ts from 'typescript'
import { expect, test } from 'vitest'

const root = resolve(import.meta.dirname, '../..')

function exportsOfIndex(): string[] {
  const file = join(root, 'src/index.ts')
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
  })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)
  const module = source && checker.getSymbolAtLocation(source)
  if (!module) throw new Error('src/index.ts is not a module')
  return checker.getExportsOfModule(module).map((s) => s.name)
}

/** The code spans of the docs section "What the package exports" up to the adapters paragraph. */
function namedInDocs(): string[] {
  const tree = fromMarkdown(readFileSync(join(root, 'docs/library.md'), 'utf8'))
  const names: string[] = []
  let inSection = false
  const visit = (node: Nodes) => {
    if (node.type === 'inlineCode' && /^[A-Za-z_]\w*$/.test(node.value)) names.push(node.value)
    if ('children' in node) for (const child of node.children) visit(child as Nodes)
  }
  for (const node of tree.children) {
    if (node.type === 'heading')
      inSection = node.depth === 2 && JSON.stringify(node).includes('What the package exports')
    else if (inSection && node.type === 'list') visit(node)
  }
  return names
}

test('docs/library.md lists every export of src/index.ts, and nothing else', () => {
  const exported = exportsOfIndex()
  expect(exported.length).toBeGreaterThan(20)
  expect([...new Set(namedInDocs())].sort()).toEqual([...exported].sort())
})
