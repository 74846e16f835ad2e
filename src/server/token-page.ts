import type { ServerResponse } from 'node:http'

/**
 * What a person who opens the inbox without its credential sees: a short page saying how to get
 * in, instead of the API's JSON error. Static text only (nothing from the request is echoed back).
 */
export function sendTokenPage(res: ServerResponse, wrong: boolean): void {
  const why = wrong
    ? 'That sign-in link is not valid: each link works once, and a newer one replaces it.'
    : 'This bridge shows its inbox only to a browser that opened its sign-in link.'
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>askbridge inbox: sign-in link needed</title>
<link rel="icon" href="data:,">
<style>
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f6f7f9; color: #1d2330; }
main { max-width: 560px; margin: 12vh auto 0; padding: 24px; background: #fff; border: 1px solid #e3e6ec; border-radius: 10px; }
h1 { font-size: 19px; margin: 0 0 8px; }
code { background: #f1f3f5; padding: 1px 5px; border-radius: 4px; word-break: break-all; }
p { margin: 8px 0; }
</style>
</head>
<body>
<main>
<h1>askbridge inbox: sign-in link needed</h1>
<p>${why}</p>
<p>Open the link <code>askbridge serve</code> printed in its terminal
(<code>http://HOST:PORT/inbox?login=…</code>). It works once: the browser then keeps a cookie,
and <code>serve</code> prints the next link for another browser. The API and agent tokens are
not accepted here.</p>
<p>Ask whoever runs this bridge for a link if you cannot see its terminal.</p>
</main>
</body>
</html>
`
  res.writeHead(401, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  })
  res.end(html)
}
