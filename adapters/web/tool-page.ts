/**
 * The whole tool input of a Claude Code hook call (`GET /inbox/tool/:callId`): a card shows the
 * first 3,000 characters and links here. Rendered for a person like the card (a Bash command in
 * a code block, an Edit as a diff, a whole Write), escaped by the inbox's markdown renderer, on a
 * page with no script at all. Behind the inbox's own authentication (token or sign-in).
 */
import { z } from 'zod'
import { renderTool } from '../../src/hooks/tool.js'
import type { StoredAuditEntry } from '../../src/store/types.js'
import { escapeHtml, markdownToHtml } from './markdown.js'
import { pageHead } from './page.js'

/** No script, nothing loaded from anywhere: the page is text and inline style only. */
export const TOOL_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The audit entry the hook path writes before it asks (src/hooks/run.ts). */
const hookDetail = z.object({
  event: z.string(),
  tool_name: z.string(),
  tool_input: z.record(z.string(), z.unknown()),
})

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2430}
main{max-width:980px;margin:0 auto;padding:16px}
a{color:#3b5bdb}
.meta{color:#5f6b7a;font-size:13px}
.detail{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:8px 14px;overflow:auto;word-break:break-word}
pre{white-space:pre-wrap;background:#eef0f3;padding:8px 10px;border-radius:6px}`

function page(title: string, body: string): string {
  return `${pageHead(`${escapeHtml(title)} · askbridge inbox`, STYLE)}
<body><main>
<p class="meta"><a href="/inbox">← askbridge inbox</a></p>
${body}
</main></body>
</html>
`
}

/** The page for one call: 200 with the whole input, or 404 when no hook call has this id. */
export function toolInputPage(
  callId: string,
  audit: readonly StoredAuditEntry[],
): { status: 200 | 404; html: string } {
  const parsed = hookDetail.safeParse(audit.find((e) => e.kind === 'hook' && e.callId === callId)?.detail)
  if (!parsed.success) {
    return {
      status: 404,
      html: page(
        'Not found',
        `<h1>No tool call "${escapeHtml(callId)}"</h1><p>askbridge keeps the whole input of each Claude Code hook call it asked about; this id names none.</p>`,
      ),
    }
  }
  const { event, tool_name: tool, tool_input: input } = parsed.data
  const rendered = renderTool(tool, input, { full: true })
  const body = `<h1>${escapeHtml(rendered.subject)}</h1>
<p class="meta">The whole tool input of Claude Code's ${escapeHtml(event)} call <code>${escapeHtml(callId)}</code>.</p>
<div class="detail">${markdownToHtml(rendered.detail)}</div>`
  return { status: 200, html: page(`Tool input: ${rendered.subject}`, body) }
}
