/**
 * Agent markdown, parsed once (micromark + mdast with GitHub-flavoured extensions: tables, task
 * lists, strikethrough, autolinks) into a tree every surface prints in its own syntax: Slack
 * mrkdwn, Discord markdown, sanitized HTML for the inbox. No surface parses markdown itself.
 *
 * The tree is normalised for printing: text is {@link cleanText}ed (no bidi overrides or control
 * characters), raw HTML becomes literal text, reference links are resolved, and link URLs that
 * are not http(s) or mailto lose their link. Two rules decide what a reader sees of links, here
 * once for every surface:
 * - an autolink written with a `|` (Slack's `<https://x|label>` or `<mailto:a@x|mail>` in agent
 *   text) stays the text as typed: agent text never becomes a platform's own link syntax;
 * - a link whose text names a host (URL, domain, e-mail address) other than the one it opens
 *   shows the real one after the text: `https://good.example (→ evil.example)` (see links.ts).
 */
import type { Nodes, Parent, PhrasingContent, Root, Table } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { destinationNote } from './links.js'
import { cleanText } from './text.js'

export type { Nodes, PhrasingContent, Root }

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:'])

/** The URL when it is an absolute http(s) or mailto URL a reader may follow; otherwise undefined. */
export function safeUrl(url: string): string | undefined {
  if (/[\s\u0000-\u001F<>"`]/.test(url)) return undefined
  try {
    const parsed = new URL(url)
    return SAFE_PROTOCOLS.has(parsed.protocol) ? parsed.href : undefined
  } catch {
    return undefined
  }
}

/** The plain text of a node (what a reader sees, without markup). */
export function plainText(node: Nodes): string {
  if ('value' in node && typeof node.value === 'string') return node.value
  if ('children' in node) return (node.children as Nodes[]).map(plainText).join('')
  if (node.type === 'break') return '\n'
  if (node.type === 'image' || node.type === 'imageReference') return node.alt ?? ''
  return ''
}

/**
 * Parsed trees of recent texts: a card is re-rendered on every click and every copy, its texts are
 * not re-parsed. Bounded by entries and by the characters they were parsed from.
 */
const cache = new Map<string, Root>()
const CACHE_ENTRIES = 1024
const CACHE_CHARS = 512 * 1024
let cachedChars = 0

/**
 * Text no markdown construct can start in: one line of letters, digits, spaces and punctuation
 * that is never markup (no `.` or `@`, so no autolink; no leading digit-dot list; no `*_~` etc.).
 * Most questions and labels are like this; they skip the parser. A test holds this to the parser.
 */
const PLAIN = /^[\p{L}\p{N}](?:[\p{L}\p{N} ,;?'"/%-]*[\p{L}\p{N},;?'"/%-])?$/u

/** Parse agent markdown into the normalised tree (see the module comment). Never throws. */
export function parseMarkdown(markdown: string): Root {
  const hit = cache.get(markdown)
  if (hit) {
    cache.delete(markdown)
    cache.set(markdown, hit)
    return hit
  }
  const clean = cleanText(markdown)
  const tree: Root = PLAIN.test(clean)
    ? { type: 'root', children: [{ type: 'paragraph', children: [{ type: 'text', value: clean }] }] }
    : fromMarkdown(clean, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })
  normalise(tree, clean)
  cache.set(markdown, tree)
  cachedChars += markdown.length
  while (cache.size > CACHE_ENTRIES || (cachedChars > CACHE_CHARS && cache.size > 1)) {
    const oldest = cache.keys().next().value as string
    cache.delete(oldest)
    cachedChars -= oldest.length
  }
  return tree
}

/** The source text a node was parsed from, when the parser recorded where. */
function sourceOf(node: Nodes, source: string): string | undefined {
  const start = node.position?.start.offset
  const end = node.position?.end.offset
  return start === undefined || end === undefined ? undefined : source.slice(start, end)
}

/** Append a node; text is joined to a text node right before it (one node, escaped as one). */
function push(out: Nodes[], node: Nodes): void {
  const last = out.at(-1)
  if (node.type === 'text' && last?.type === 'text') last.value += node.value
  else out.push(node)
}

function normalise(tree: Root, source: string): void {
  const definitions = new Map<string, { url: string; title?: string | null }>()
  const collect = (node: Nodes) => {
    if (node.type === 'definition')
      definitions.set(node.identifier, { url: node.url, title: node.title ?? null })
    if ('children' in node) for (const child of node.children as Nodes[]) collect(child)
  }
  collect(tree)
  const visit = (parent: Parent) => {
    const out: Nodes[] = []
    for (const node of parent.children as Nodes[]) {
      switch (node.type) {
        case 'definition':
          continue // resolved into the links that use it
        case 'html': {
          // Raw HTML is shown as typed; an HTML block becomes a paragraph of that text.
          const text = { type: 'text' as const, value: node.value }
          push(
            out,
            parent.type === 'paragraph' || 'value' in parent ? text : { type: 'paragraph', children: [text] },
          )
          continue
        }
        case 'linkReference':
        case 'imageReference': {
          const def = definitions.get(node.identifier)
          const label =
            node.type === 'linkReference' ? node.children : [{ type: 'text' as const, value: node.alt ?? '' }]
          if (!def) {
            push(out, { type: 'text', value: `[${label.map(plainText).join('')}]` })
            continue
          }
          push(out, linkOrText(def.url, label as PhrasingContent[]))
          continue
        }
        case 'link': {
          // An autolink (`<url>`, or a bare URL or address) is shown as typed when its URL is not
          // one to follow or carries a `|`: Slack's `<url|label>` syntax is never a link.
          const typed = sourceOf(node, source)
          if (typed !== undefined && !typed.startsWith('[') && (typed.includes('|') || !safeUrl(node.url))) {
            push(out, { type: 'text', value: typed })
            continue
          }
          const link = linkOrText(node.url, node.children)
          if (link.type === 'link') visit(link)
          push(out, link)
          continue
        }
        case 'image':
          push(out, linkOrText(node.url, [{ type: 'text', value: node.alt || node.url }]))
          continue
        case 'text':
          push(out, { ...node })
          continue
        default:
          out.push(node)
      }
      if ('children' in node) visit(node as Parent)
    }
    parent.children = out as Parent['children']
  }
  visit(tree)
}

/**
 * A link when its URL is safe (with its real destination after the text when the text claims
 * another one); otherwise its text followed by the URL as plain text.
 */
function linkOrText(url: string, children: PhrasingContent[]): PhrasingContent {
  const safe = safeUrl(url)
  const label = children.map(plainText).join('')
  if (safe) {
    const note = destinationNote(label, safe)
    return {
      type: 'link',
      url: safe,
      children: note ? [...children, { type: 'text', value: ` (→ ${note})` }] : children,
    }
  }
  return { type: 'text', value: label && label !== url ? `${label} (${url})` : url }
}

// Printing helpers every text surface (Slack mrkdwn, Discord markdown) shares: one rule for
// emphasis around blank text, list markers and hanging indents, and tables as monospace lines.

/** Put an emphasis marker around the non-blank part of `inner` (`* x *` would show the stars). */
export function wrapMarker(marker: string, inner: string): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(inner)
  if (!m?.[2]) return inner
  return `${m[1]}${marker}${m[2]}${marker}${m[3]}`
}

/** One list item: its marker (and task box) on the first line, later lines indented by `pad`. */
export function listItemText(
  marker: string,
  checked: boolean | null | undefined,
  body: string,
  pad: string,
): string {
  const check = checked === true ? '☑ ' : checked === false ? '☐ ' : ''
  const [first = '', ...rest] = body.split('\n')
  return [`${marker} ${check}${first}`, ...rest.map((l) => (l === '' ? l : pad + l))].join('\n')
}

/** A table's cells as single-line plain text, row by row (for {@link tableLines}). */
export function tableCells(table: Table): string[][] {
  return table.children.map((row) => row.children.map((cell) => plainText(cell).replace(/\s+/g, ' ').trim()))
}

/** Cell texts of a table, padded to aligned columns, for surfaces without tables (a monospace block). */
export function tableLines(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = []
  for (const row of rows)
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, [...cell].length)
  const line = (row: readonly string[]) =>
    widths
      .map((w, i) => {
        const cell = row[i] ?? ''
        return cell + ' '.repeat(w - [...cell].length)
      })
      .join(' | ')
      .trimEnd()
  const [head, ...body] = rows
  if (!head) return []
  return [line(head), widths.map((w) => '-'.repeat(Math.max(w, 1))).join('-|-'), ...body.map(line)]
}
