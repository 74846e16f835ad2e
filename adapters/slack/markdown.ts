/**
 * The parsed markdown tree (src/card/markdown.ts) printed as Slack mrkdwn. Slack has no tables or
 * nested list markup: tables become aligned monospace blocks, lists keep their own numbers
 * (`3.` stays `3.` however the items are spaced) and nest by indentation with `•`/`◦`/`▪`.
 * Every text node goes through {@link escapeMrkdwn}, so agent text never forms a mention, a
 * broadcast or a link; the only `<…>` in the output are links to http(s)/mailto URLs.
 */
import {
  listItemText,
  type Nodes,
  type PhrasingContent,
  parseMarkdown,
  plainText,
  tableCells,
  tableLines,
  wrapMarker,
} from '../../src/adapter-kit.js'
import { escapeMrkdwn } from './text.js'

const BULLETS = ['•', '◦', '▪']
const INDENT = '    '

/** Code is shown as is, escaped, with backtick runs that could close our fence neutralised. */
const code = (text: string) => escapeMrkdwn(text).replace(/`/g, 'ˋ')

function inline(nodes: readonly PhrasingContent[]): string {
  return nodes.map(phrasing).join('')
}

function phrasing(node: PhrasingContent): string {
  switch (node.type) {
    case 'text':
      return escapeMrkdwn(node.value)
    case 'strong':
      return wrapMarker('*', inline(node.children).replace(/\*/g, ''))
    case 'emphasis':
      return wrapMarker('_', inline(node.children).replace(/_/g, ''))
    case 'delete':
      return wrapMarker('~', inline(node.children).replace(/~/g, ''))
    case 'inlineCode':
      return node.value === '' ? '' : `\`${code(node.value).replace(/\n/g, ' ')}\``
    case 'break':
      return '\n'
    case 'link': {
      // `|` would end the URL part early and `>` ends the link: the URL is already a parsed href.
      const label = escapeMrkdwn(plainText(node).replace(/\s+/g, ' ').trim() || node.url).replace(/\|/g, '¦')
      return `<${node.url.replace(/&/g, '&amp;').replace(/[<>|]/g, encodeURIComponent)}|${label}>`
    }
    default:
      return escapeMrkdwn(plainText(node))
  }
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? line : by + line))
    .join('\n')
}

function block(node: Nodes, depth: number): string {
  switch (node.type) {
    case 'paragraph':
      return inline(node.children)
    case 'heading':
      return wrapMarker('*', inline(node.children).replace(/\*/g, ''))
    case 'thematicBreak':
      return '──────────'
    case 'blockquote':
      return blocks(node.children, depth)
        .split('\n')
        .map((line) => `&gt; ${line}`)
        .join('\n')
    case 'code':
      return `\`\`\`\n${code(node.value)}\n\`\`\``
    case 'list': {
      const start = node.start ?? 1
      return node.children
        .map((item, i) => {
          const marker = node.ordered ? `${start + i}.` : (BULLETS[depth % BULLETS.length] as string)
          return listItemText(marker, item.checked, blocks(item.children, depth + 1, '\n'), INDENT)
        })
        .join('\n')
    }
    case 'table':
      return `\`\`\`\n${tableLines(tableCells(node)).map(code).join('\n')}\n\`\`\``
    case 'footnoteDefinition':
      return `[^${escapeMrkdwn(node.identifier)}]: ${blocks(node.children, depth)}`
    case 'listItem':
      return blocks(node.children, depth)
    default:
      return 'children' in node
        ? inline(node.children as PhrasingContent[])
        : phrasing(node as PhrasingContent)
  }
}

function blocks(nodes: readonly Nodes[], depth: number, separator = '\n\n'): string {
  return nodes
    .map((n) => (n.type === 'list' && depth > 0 ? indent(block(n, depth), '') : block(n, depth)))
    .filter((s) => s !== '')
    .join(separator)
}

/** Agent markdown as Slack mrkdwn (see the module comment). */
export function markdownToMrkdwn(markdown: string): string {
  return blocks(parseMarkdown(markdown).children, 0)
}
