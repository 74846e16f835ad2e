/**
 * The inbox page's entry point (a module script, allowed by the page's CSP as `'self'`): loads
 * the cards, follows changes over server-sent events, ticks countdowns and keeps holds alive.
 */
import { renewHolds } from './actions.js'
import { fmt } from './dom.js'
import { renderAll } from './render.js'
import { myUserId, whoAmI } from './session.js'
import { addFyi, cards, keyOf, learnedMark, notices, onChange, replaceAll, setFyis, upsert } from './store.js'
import type { WebCardList, WebCardView, WebFyi, WebFyiList, WebNotice } from './types.js'

const liveDot = document.getElementById('live') as HTMLElement

async function load(): Promise<void> {
  const mark = learnedMark()
  const res = await fetch('/inbox/api/cards')
  if (!res.ok) throw new Error(`HTTP ${res.status}`)
  const data = (await res.json()) as WebCardList
  const notes = await fetch('/inbox/api/notices')
  if (notes.ok) setFyis((await notes.json()) as WebFyiList, mark)
  replaceAll(data.cards, data.nextCursor, mark)
}

function connect(): void {
  const es = new EventSource('/inbox/api/events')
  es.addEventListener('open', () => {
    liveDot.classList.add('live')
    liveDot.title = 'live'
    load().catch(() => {})
  })
  es.addEventListener('card', (e) => {
    const view = JSON.parse((e as MessageEvent<string>).data) as WebCardView
    const before = cards.get(keyOf(view))
    // A card that just closed drops its stale hints ("please answer or skip").
    if (before?.live && !view.live) notices[keyOf(view)] = undefined
    upsert(view)
  })
  es.addEventListener('fyi', (e) => addFyi(JSON.parse((e as MessageEvent<string>).data) as WebFyi))
  es.addEventListener('notice', (e) => {
    const n = JSON.parse((e as MessageEvent<string>).data) as WebNotice
    if (n.userId === myUserId() && n.callId) {
      notices[keyOf({ agentId: n.agentId ?? 'default', callId: n.callId })] = { kind: 'info', text: n.text }
      renderAll()
    }
  })
  es.addEventListener('error', () => {
    liveDot.classList.remove('live')
    liveDot.title = 'reconnecting'
  })
}

onChange(renderAll)

setInterval(() => {
  document.querySelectorAll('[data-deadline]').forEach((el) => {
    el.textContent = `${fmt(Number(el.getAttribute('data-deadline')) - Date.now())} left`
  })
}, 1000)

// A hold ("Take my time") lasts only while this tab is open: see renewHolds.
setInterval(renewHolds, 10_000)

renderAll()
whoAmI()
  .catch(() => {})
  .then(() => {
    load().catch(() => {})
    connect()
  })
