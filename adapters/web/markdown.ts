/**
 * A tiny markdown renderer for agent-written text (question detail, plans). It escapes HTML
 * FIRST, then adds a small set of tags from markdown syntax, so agent text can never inject
 * markup. Supported: headings, paragraphs, fenced and inline code, bold, italic,
 * strikethrough, bullet and numbered lists, block quotes, rules, and links with http(s) URLs only.
 */

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

/** Inline markup on already-escaped text. Code spans are cut out first so nothing inside them changes. */
function inline(escaped: string): string {
  const codes: string[] = []
  let out = escaped.replace(/`([^`\n]+)`/g, (_m, code: string) => {
    codes.push(`<code>${code}</code>`)
    return `\u0000${codes.length - 1}\u0000`
  })
  // Links: [text](http(s)://...). The URL is already escaped, so it cannot close the attribute.
  out = out.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_m, text: string, url: string) => {
    return `<a href="${url}" target="_blank" rel="noopener noreferrer nofollow">${text}</a>`
  })
  out = out
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
    .replace(/__([^_\n]+)__/g, '<strong>$1</strong>')
    .replace(/~~([^~\n]+)~~/g, '<del>$1</del>')
    .replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, '$1<em>$2</em>')
    .replace(/(^|[^_\w])_([^_\n]+)_(?!\w)/g, '$1<em>$2</em>')
  return out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => codes[Number(i)] ?? '')
}

type Block =
  | { type: 'p'; lines: string[] }
  | { type: 'ul' | 'ol'; items: string[] }
  | { type: 'quote'; lines: string[] }

/** Render markdown to safe HTML. */
export function markdownToHtml(markdown: string): string {
  const lines = escapeHtml(markdown.replace(/\r\n?/g, '\n')).split('\n')
  const html: string[] = []
  let block: Block | undefined
  const flush = () => {
    if (!block) return
    if (block.type === 'p') html.push(`<p>${block.lines.map(inline).join('<br>')}</p>`)
    else if (block.type === 'quote')
      html.push(`<blockquote>${block.lines.map(inline).join('<br>')}</blockquote>`)
    else
      html.push(`<${block.type}>${block.items.map((i) => `<li>${inline(i)}</li>`).join('')}</${block.type}>`)
    block = undefined
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line)
    if (fence) {
      flush()
      const body: string[] = []
      i++
      while (i < lines.length && !new RegExp(`^\\s*${fence[1]}\\s*$`).test(lines[i] as string)) {
        body.push(lines[i] as string)
        i++
      }
      const lang = fence[2] ? ` class="language-${fence[2]}"` : ''
      html.push(`<pre><code${lang}>${body.join('\n')}</code></pre>`)
      continue
    }
    if (line.trim() === '') {
      flush()
      continue
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading) {
      flush()
      // Agent headings sit inside a card: shift them down so h1 never outranks the page.
      const level = Math.min(6, (heading[1] as string).length + 2)
      html.push(`<h${level}>${inline(heading[2] as string)}</h${level}>`)
      continue
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush()
      html.push('<hr>')
      continue
    }
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line)
    const numbered = /^\s*\d{1,9}[.)]\s+(.*)$/.exec(line)
    const item = bullet ?? numbered
    if (item) {
      const type = bullet ? 'ul' : 'ol'
      if (block?.type !== type) {
        flush()
        block = { type, items: [] }
      }
      block.items.push(item[1] as string)
      continue
    }
    const quote = /^\s*&gt;\s?(.*)$/.exec(line)
    if (quote) {
      if (block?.type !== 'quote') {
        flush()
        block = { type: 'quote', lines: [] }
      }
      block.lines.push(quote[1] as string)
      continue
    }
    // A lazy continuation of a list item.
    if ((block?.type === 'ul' || block?.type === 'ol') && /^\s{2,}\S/.test(line)) {
      const last = block.items.length - 1
      block.items[last] = `${block.items[last]} ${line.trim()}`
      continue
    }
    if (block?.type !== 'p') {
      flush()
      block = { type: 'p', lines: [] }
    }
    block.lines.push(line)
  }
  flush()
  return html.join('\n')
}
