/**
 * The parsed markdown tree (src/card/markdown.ts) printed as Discord markdown. Discord renders
 * headings (#, ##, ###), lists, quotes, code and masked links, but no tables: tables become
 * aligned code blocks. Ordered lists keep their own numbers. Every text node is escaped
 * (markdown characters and mentions), so agent text never pings, never forms a masked link and
 * never changes the markup around it.
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
import { escapeInline, escapeMentions } from './text.js'

/**
 * Code is shown as is; backtick runs that could close our fence are neutralised, and `](` gets a
 * zero-width space: should a cut ever leave code outside its fence (a quote's code block split
 * across embeds), its text still forms no masked link.
 */
const code = (text: string) => escapeMentions(text).replace(/`/g, 'ˋ').replace(/\]\(/g, ']\u200b(')

function inline(nodes: readonly PhrasingContent[]): string {
  return nodes.map(phrasing).join('')
}

function phrasing(node: PhrasingContent): string {
  switch (node.type) {
    case 'text':
      return escapeInline(node.value)
    case 'strong':
      return wrapMarker('**', inline(node.children))
    case 'emphasis':
      return wrapMarker('*', inline(node.children))
    case 'delete':
      return wrapMarker('~~', inline(node.children))
    case 'inlineCode':
      return node.value === '' ? '' : `\`${code(node.value).replace(/\n/g, ' ')}\``
    case 'break':
      return '\n'
    case 'link': {
      const label = escapeInline(plainText(node).replace(/\s+/g, ' ').trim() || node.url)
      // Percent-encoded by hand: encodeURIComponent leaves `(` and `)`, and a `)` would end the link early.
      const url = node.url.replace(/[()<>[\] ]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
      return `[${label}](${url})`
    }
    default:
      return escapeInline(plainText(node))
  }
}

function block(node: Nodes): string {
  switch (node.type) {
    case 'paragraph':
      return inline(node.children)
    case 'heading': {
      const text = inline(node.children).replace(/\n/g, ' ')
      return node.depth <= 3 ? `${'#'.repeat(node.depth)} ${text}` : wrapMarker('**', text)
    }
    case 'thematicBreak':
      return '──────────'
    case 'blockquote':
      // Discord quotes do not nest: a quote inside a quote is one quote.
      return blocks(node.children)
        .split('\n')
        .map((line) => (line.startsWith('> ') ? line : `> ${line}`))
        .join('\n')
    case 'code':
      return `\`\`\`${/^[\w+-]{1,20}$/.test(node.lang ?? '') ? node.lang : ''}\n${code(node.value)}\n\`\`\``
    case 'list': {
      const start = node.start ?? 1
      return node.children
        .map((item, i) => {
          const marker = node.ordered ? `${start + i}.` : '-'
          return listItemText(
            marker,
            item.checked,
            blocks(item.children, '\n'),
            ' '.repeat(marker.length + 1),
          )
        })
        .join('\n')
    }
    case 'table':
      return `\`\`\`\n${tableLines(tableCells(node)).map(code).join('\n')}\n\`\`\``
    case 'footnoteDefinition':
      return `[^${escapeInline(node.identifier)}]: ${blocks(node.children)}`
    case 'listItem':
      return blocks(node.children)
    default:
      return 'children' in node
        ? inline(node.children as PhrasingContent[])
        : phrasing(node as PhrasingContent)
  }
}

function blocks(nodes: readonly Nodes[], separator = '\n\n'): string {
  return nodes
    .map(block)
    .filter((s) => s !== '')
    .join(separator)
}

/** Agent markdown as Discord markdown (see the module comment). */
export function markdownToDiscord(markdown: string): string {
  return blocks(parseMarkdown(markdown).children)
}
