/** Small DOM and formatting helpers for the inbox page. Agent text only ever goes in as text. */

type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void)
type Child = Node | string | null | undefined | false

/**
 * An element with attributes and children. `text` sets textContent, `className` the class,
 * `on…` functions become event listeners; null, undefined and false leave an attribute out.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, AttrValue> | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v)
    else if (k === 'text') el.textContent = String(v)
    else if (k === 'className') el.className = String(v)
    else if (k === 'disabled') el.toggleAttribute('disabled', true)
    else el.setAttribute(k, String(v))
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c)
  }
  return el
}

/** Time left, e.g. `4m 05s`, `1h 02m`, `9s`. */
export function fmt(ms: number): string {
  let s = Math.max(0, Math.ceil(ms / 1000))
  const m = Math.floor(s / 60)
  s = s % 60
  if (m >= 60) return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`
  return m > 0 ? `${m}m ${String(s).padStart(2, '0')}s` : `${s}s`
}

/** How long ago, e.g. `just now`, `5 min ago`. */
export function ago(t: number): string {
  const s = Math.round((Date.now() - t) / 1000)
  if (s < 60) return 'just now'
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`
  return new Date(t).toLocaleString()
}

/** An interaction id, so a retried click is applied once. */
export function newId(): string {
  // randomUUID exists only in secure contexts (https, localhost).
  if ('randomUUID' in crypto) return crypto.randomUUID()
  return `w${Date.now().toString(36)}${Math.random().toString(36).slice(2, 12)}`
}
