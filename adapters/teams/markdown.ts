/**
 * The parsed markdown tree (src/card/markdown.ts) as Adaptive Card TextBlocks. Teams renders a
 * small markdown subset in TextBlocks (bold, italic, lists, links); headings become bold lines,
 * code blocks and tables become monospace blocks. Every text node goes through {@link plain}, so
 * agent text never forms a mention, a link or markup it did not write.
 */
import {
  type Nodes,
  type PhrasingContent,
  parseMarkdown,
  plainText,
  safeUrl,
  tableCells,
  tableLines,
} from '../../src/adapter-kit.js'
import { noMentions, plain } from './text.js'

export interface TextBlock {
  type: 'TextBlock'
  text: string
  wrap: true
  fontType?: 'Monospace'
  weight?: 'Bolder'
  size?: 'Medium'
  isSubtle?: boolean
  color?: 'Good' | 'Attention' | 'Warning'
  spacing?: 'None' | 'Small' | 'Medium'
}

const block = (text: string, extra: Partial<TextBlock> = {}): TextBlock => ({
  type: 'TextBlock',
  text,
  wrap: true,
  ...extra,
})

function inline(nodes: readonly PhrasingContent[]): string {
  return nodes.map(phrasing).join('')
}

function phrasing(node: PhrasingContent): string {
  switch (node.type) {
    case 'text':
      return plain(node.value)
    case 'strong':
      return `**${inline(node.children)}**`
    case 'emphasis':
      return `_${inline(node.children)}_`
    case 'inlineCode':
      return plain(node.value)
    case 'break':
      return '\n'
    case 'link': {
      const label = plain(plainText(node).replace(/\s+/g, ' ').trim() || node.url)
      const url = safeUrl(node.url)
      return url ? `[${label}](${url.replace(/[()<> ]/g, encodeURIComponent)})` : label
    }
    default:
      return plain(plainText(node))
  }
}

function blocks(nodes: readonly Nodes[]): TextBlock[] {
  const out: TextBlock[] = []
  for (const node of nodes) {
    switch (node.type) {
      case 'paragraph':
        out.push(block(inline(node.children)))
        break
      case 'heading':
        out.push(block(inline(node.children).replace(/\n/g, ' '), { weight: 'Bolder' }))
        break
      case 'code':
        out.push(block(noMentions(node.value), { fontType: 'Monospace' }))
        break
      case 'table':
        out.push(block(noMentions(tableLines(tableCells(node)).join('\n')), { fontType: 'Monospace' }))
        break
      case 'list': {
        const start = node.start ?? 1
        const lines = node.children.map((item, i) => {
          const marker = node.ordered ? `${start + i}.` : '-'
          const box = item.checked === true ? '☑ ' : item.checked === false ? '☐ ' : ''
          const text = blocks(item.children)
            .map((b) => b.text)
            .join(' ')
          return `${marker} ${box}${text}`
        })
        out.push(block(lines.join('\n')))
        break
      }
      case 'blockquote':
        for (const b of blocks(node.children)) out.push({ ...b, isSubtle: true })
        break
      case 'thematicBreak':
        break
      default: {
        const text = 'children' in node ? plain(plainText(node)) : plain(plainText(node))
        if (text) out.push(block(text))
      }
    }
  }
  return out
}

/** Agent markdown as TextBlocks (see the module comment). */
export function markdownToTeams(markdown: string): TextBlock[] {
  return blocks(parseMarkdown(markdown).children).filter((b) => b.text !== '')
}
