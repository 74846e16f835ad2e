import { CLIENT_ENTRY } from './assets.js'
import { INBOX_CSS } from './page-style.js'

/**
 * The start of an inbox page up to `<body>`: `title` is text (escaped by the caller), `css`
 * inline, `extra` more of the head (the inbox's script).
 */
export function pageHead(title: string, css: string, extra = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${css}</style>${extra}
</head>`
}

/** The whole inbox: one page with inline CSS and its own module script (adapters/web/client). */
export function inboxPage(): string {
  return `${pageHead('askbridge inbox', INBOX_CSS, `\n<script type="module" src="${CLIENT_ENTRY}"></script>`)}
<body>
<header class="top">
  <div class="brand"><span id="live" class="dot" title="connecting"></span> askbridge inbox</div>
  <label class="me"><span class="long">Answering as</span> <input id="me" type="text" placeholder="your name" aria-label="Answering as (your name)" autocomplete="name" maxlength="80"></label>
</header>
<main id="cards"></main>
</body>
</html>
`
}

/**
 * A strict CSP: only the inbox's own script files run (no inline script, nothing from elsewhere),
 * so even markup that slipped into a card could not execute.
 */
export const INBOX_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')
