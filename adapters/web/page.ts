import { createHash } from 'node:crypto'
import { INBOX_JS } from './page-script.js'
import { INBOX_CSS } from './page-style.js'

/** The whole inbox: one self-contained page (inline CSS and JS, no external assets). */
export function inboxPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>askbridge inbox</title>
<link rel="icon" href="data:,">
<style>${INBOX_CSS}</style>
</head>
<body>
<header class="top">
  <div class="brand"><span id="live" class="dot" title="connecting"></span> askbridge inbox</div>
  <label class="me"><span class="long">Answering as</span> <input id="me" type="text" placeholder="your name" aria-label="Answering as (your name)" autocomplete="name" maxlength="80"></label>
</header>
<main id="cards"></main>
<script>${INBOX_JS}</script>
</body>
</html>
`
}

const scriptHash = createHash('sha256').update(INBOX_JS, 'utf8').digest('base64')

/**
 * A strict CSP: only the page's own script (pinned by hash) runs, nothing loads from elsewhere,
 * so even markup that slipped into a card could not execute.
 */
export const INBOX_CSP = [
  "default-src 'none'",
  `script-src 'sha256-${scriptHash}'`,
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')
