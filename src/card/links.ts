/**
 * Where a link goes, against where its visible text says it goes. A link whose text (or a word of
 * it) looks like a URL, a domain or an e-mail address but leads somewhere else (`[https://good.example](https://evil.example/login)`)
 * is shown with its real destination after the text: `https://good.example (→ evil.example)`.
 * The markdown normaliser applies this once, so every surface shows the same thing.
 *
 * Hosts are compared as the URL parser gives them (lower case, IDN as punycode), so a look-alike
 * host (Cyrillic `о` for `o`) differs from the real one and shows in its `xn--` form.
 */

/** Invisible format characters (zero-width space and joiners, soft hyphen, ...): removed before judging text. */
const FORMAT_CHARS = /\p{Cf}/gu
/** Quotes and brackets around a URL in prose, and sentence punctuation after it. */
const WRAPPERS = /^[<([{"'“‘«]+|[>)\]}"'”’».,;:!?]+$/gu

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

const stripDot = (host: string) => host.replace(/\.$/, '')

/** A host name that reads as a domain: at least two labels and a letter-only (or punycode) top level, or IPv6. */
function isDomain(host: string): boolean {
  if (/^\[.*\]$/.test(host)) return true // IPv6
  const labels = stripDot(host).split('.')
  const top = labels.at(-1) ?? ''
  if (labels.length < 2 || labels.some((l) => l === '')) return false
  return /^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/.test(top)
}

/** The addresses of a mailto URL, lower case (`a@x.example,b@y.example`). */
function mailAddresses(url: URL): string {
  let path = url.pathname
  try {
    path = decodeURIComponent(path)
  } catch {
    // keep the encoded form
  }
  return path.toLowerCase()
}

/** Where a link URL (already checked to be http(s) or mailto) really goes: its host, or its addresses. */
export function linkDestination(href: string): string | undefined {
  const url = parseUrl(href)
  if (!url) return undefined
  if (url.protocol === 'mailto:') return mailAddresses(url) || undefined
  return url.hostname ? stripDot(url.hostname) : undefined
}

/**
 * The host or e-mail address a link's visible text claims, when the text (one word, quotes and
 * trailing punctuation aside) looks like a URL, a domain or an e-mail address; otherwise undefined.
 * @example claimedDestination('https://Good.example/login') // 'good.example'
 * @example claimedDestination('the runbook') // undefined
 */
export function claimedDestination(label: string): string | undefined {
  const text = label.replace(FORMAT_CHARS, '').trim().replace(WRAPPERS, '')
  if (text === '' || /\s/.test(text)) return undefined
  if (/^mailto:/i.test(text)) {
    const url = parseUrl(text)
    return url ? mailAddresses(url) || undefined : undefined
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const host = parseUrl(text)?.hostname
    return host ? stripDot(host) : undefined
  }
  const bare = text.replace(/^\/\//, '')
  const url = parseUrl(`http://${bare}`)
  // An IPv4 address only when written as one (the URL parser also reads `3.5` as 3.0.0.5).
  const ipv4 = /^(?:\d{1,3}\.){3}\d{1,3}(?:[:/?#]|$)/.test(bare)
  if (!url || !(ipv4 || isDomain(url.hostname))) return undefined
  // `name@domain` reads as an e-mail address; `user:pass@host/...` is a URL with credentials.
  if (url.username && !url.password && url.pathname === '/' && !text.includes('/'))
    return `${decodeURIComponent(url.username).toLowerCase()}@${stripDot(url.hostname)}`
  return stripDot(url.hostname)
}

/**
 * What to show after a link's text so a reader sees where it really goes: the destination when
 * any word of the text claims another one (or the URL hides credentials before its host);
 * otherwise undefined.
 * @example destinationNote('https://good.example', 'https://evil.example/login') // 'evil.example'
 * @example destinationNote('Open good.example now', 'https://evil.example') // 'evil.example'
 */
export function destinationNote(label: string, href: string): string | undefined {
  const claims = label
    .replace(FORMAT_CHARS, '')
    .split(/\s+/)
    .map(claimedDestination)
    .filter((c) => c !== undefined)
  if (claims.length === 0) return undefined
  const real = linkDestination(href)
  if (real === undefined) return undefined
  const url = parseUrl(href)
  const credentials =
    url !== undefined && url.protocol !== 'mailto:' && (url.username !== '' || url.password !== '')
  return credentials || claims.some((c) => c !== real) ? real : undefined
}
