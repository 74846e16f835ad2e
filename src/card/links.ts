/**
 * Where a link goes, against where its visible text says it goes. A link whose text names a host
 * (a URL, a domain, an e-mail address, an IP address, anywhere in the text) other than the one it
 * leads to (`[https://good.example](https://evil.example/login)`) is shown with its real
 * destination after the text: `https://good.example (→ evil.example)`. So is a link whose URL
 * hides credentials before its host, or whose text already carries an arrow. The markdown
 * normaliser applies this once, so every surface shows the same thing.
 *
 * Hosts are compared as the URL parser gives them (lower case, IDN as punycode), so a look-alike
 * host (Cyrillic `о` for `o`) differs from the real one and shows in its `xn--` form.
 */

/** Invisible format characters (zero-width space and joiners, soft hyphen, ...): removed before judging text. */
const FORMAT_CHARS = /\p{Cf}/gu
/** The local part of an e-mail address (`name@`): the host is what follows it. */
const MAIL_LOCAL = /[\p{L}\p{N}._%+-]+@/gu
/** Runs of host-name characters with at least one dot (ideographic and full-width dots count as dots). */
const HOST_RUN = /[\p{L}\p{N}\p{M}_-]+(?:[.\u3002\uFF0E\uFF61][\p{L}\p{N}\p{M}_-]+)+/gu
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

const stripDot = (host: string) => host.replace(/\.$/, '')

/** The host a run of text names, as the URL parser reads it, when it reads as a domain or an IPv4 address. */
function hostOf(run: string): string | undefined {
  const host = parseUrl(`http://${run}/`)?.hostname
  if (!host) return undefined
  if (IPV4.test(run)) return host
  const labels = host.split('.')
  const top = labels.at(-1) ?? ''
  return labels.length >= 2 && /^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/.test(top) ? host : undefined
}

/**
 * The hosts a link's visible text names, lower case and punycoded.
 * @example claimedHosts('https://Good.example/login and a@bank.test') // ['good.example', 'bank.test']
 * @example claimedHosts('the runbook') // []
 */
export function claimedHosts(text: string): string[] {
  const plain = text.replace(FORMAT_CHARS, '').replace(MAIL_LOCAL, ' ')
  const hosts: string[] = []
  for (const [run] of plain.matchAll(HOST_RUN)) {
    const host = hostOf(run)
    if (host !== undefined) hosts.push(host)
  }
  return hosts
}

/**
 * Where a link URL (already checked to be http(s) or mailto) really goes: `hosts` to compare with
 * the text, and `shown`, what a reader is told (the host, or a mailto URL's addresses).
 */
function destination(href: string): { hosts: string[]; shown: string; credentials: boolean } | undefined {
  const url = parseUrl(href)
  if (!url) return undefined
  if (url.protocol === 'mailto:') {
    let addresses = url.pathname
    try {
      addresses = decodeURIComponent(addresses)
    } catch {
      // keep the encoded form
    }
    addresses = addresses.toLowerCase()
    const hosts = addresses.split(',').map((a) => stripDot(a.slice(a.lastIndexOf('@') + 1).trim()))
    return addresses ? { hosts, shown: addresses, credentials: false } : undefined
  }
  const host = stripDot(url.hostname)
  return host
    ? { hosts: [host], shown: host, credentials: url.username !== '' || url.password !== '' }
    : undefined
}

/**
 * What to show after a link's text so a reader sees where it really goes (see the module
 * comment); undefined when the text tells no other story.
 * @example destinationNote('https://good.example', 'https://evil.example/login') // 'evil.example'
 * @example destinationNote('the runbook', 'https://evil.example/login') // undefined
 */
export function destinationNote(text: string, href: string): string | undefined {
  const real = destination(href)
  if (!real) return undefined
  const claims = claimedHosts(text)
  const other = claims.some((host) => !real.hosts.includes(stripDot(host)))
  return other || text.includes('→') || (real.credentials && claims.length > 0) ? real.shown : undefined
}
