/**
 * The parsed markdown tree (src/card/markdown.ts) as sanitized HTML for the inbox:
 * mdast -> hast (mdast-util-to-hast) -> sanitized (hast-util-sanitize, GitHub's schema narrowed
 * to http(s)/mailto links and no images) -> HTML (hast-util-to-html). Raw HTML in agent text was
 * turned into literal text by the parser, so it shows as typed and never becomes markup.
 */
import type { Element, RootContent as HastContent, Root as HastRoot } from 'hast'
import { defaultSchema, type Schema, sanitize } from 'hast-util-sanitize'
import { toHtml } from 'hast-util-to-html'
import { toHast } from 'mdast-util-to-hast'
import { parseMarkdown } from '../../src/adapter-kit.js'

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)
}

const SCHEMA: Schema = {
  ...defaultSchema,
  // No images (the page's CSP would block them anyway) and no inputs but task-list checkboxes.
  tagNames: (defaultSchema.tagNames ?? []).filter((t) => t !== 'img' && t !== 'picture' && t !== 'source'),
  protocols: { ...defaultSchema.protocols, href: ['http', 'https', 'mailto'], src: [] },
  attributes: {
    ...defaultSchema.attributes,
    a: ['href', 'title', 'target', 'rel'],
  },
}

/** Agent headings sit inside a card: shift them down so an h1 never outranks the page. */
function adjust(node: HastRoot | HastContent): void {
  if (node.type === 'element') {
    const level = /^h([1-6])$/.exec(node.tagName)?.[1]
    if (level) node.tagName = `h${Math.min(6, Number(level) + 2)}`
    if (node.tagName === 'a') {
      const el = node as Element
      el.properties = { ...el.properties, target: '_blank', rel: ['noopener', 'noreferrer', 'nofollow'] }
    }
  }
  if ('children' in node) for (const child of node.children) adjust(child as HastContent)
}

/** Agent markdown as safe HTML. */
export function markdownToHtml(markdown: string): string {
  const hast = toHast(parseMarkdown(markdown)) as HastRoot
  const clean = sanitize(hast, SCHEMA) as HastRoot
  adjust(clean)
  return toHtml(clean, { characterReferences: { useNamedReferences: true } })
}
