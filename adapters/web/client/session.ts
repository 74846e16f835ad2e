/**
 * Who the page answers as: the signed-in person (inbox sign-in, with the session's CSRF token on
 * every write), or the name typed in the header (kept in localStorage).
 */
import { h } from './dom.js'
import { changed } from './store.js'
import type { WebCardView, WebMe } from './types.js'

type SignedIn = Extract<WebMe, { signedIn: true }>

const nameInput = document.getElementById('me') as HTMLInputElement
let me: SignedIn | null = null

nameInput.value = localStorage.getItem('askbridge.name') || ''
nameInput.addEventListener('input', () => {
  localStorage.setItem('askbridge.name', nameInput.value.trim())
  changed()
})

export function myName(): string {
  return me ? me.name : nameInput.value.trim()
}

export function myUserId(): string {
  if (me) return me.userId
  const n = myName()
  return n ? `web:${n}` : 'local'
}

/** Whether this page's person holds the card's wait ("Take my time"). */
export function iHold(card: WebCardView): boolean {
  return card.holders.some((p) => p.userId === myUserId())
}

/** The person a request names (the server uses the signed-in one instead when there is one). */
export function personBody(): { name?: string } {
  return myName() ? { name: myName() } : {}
}

/** Headers for a write: JSON, plus the CSRF token when signed in. */
export function writeHeaders(): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (me) headers['x-csrf-token'] = me.csrf
  return headers
}

/** Ask the server who is signed in; a signed-in name replaces the name box. */
export async function whoAmI(): Promise<void> {
  const res = await fetch('/inbox/api/me')
  if (!res.ok) return
  const data = (await res.json()) as WebMe
  if (!data.signedIn) return
  me = data
  // The name comes from the sign-in and cannot be edited: show it, with a way out.
  const label = nameInput.parentElement
  const who = h(
    'span',
    { className: 'me', id: 'signed-in' },
    'Signed in as ',
    h('b', { text: data.name }),
    ` (${data.email})`,
    h('button', { className: 'link', id: 'sign-out', onclick: () => void signOut() }, 'Sign out'),
  )
  label?.replaceWith(who)
  changed()
}

async function signOut(): Promise<void> {
  await fetch('/inbox/logout', { method: 'POST', headers: writeHeaders() })
  me = null
  document.body.textContent = ''
  document.body.appendChild(
    h(
      'p',
      { className: 'signed-out' },
      'You are signed out. ',
      h('a', { href: '/inbox/login', text: 'Sign in again' }),
    ),
  )
}
