/**
 * The inbox page's drawing: every card from its view, each control the view offers as a widget (controls.ts).
 * Every piece of agent text is set with textContent; only the server's escaped markdown
 * (`detailHtml`) goes in as HTML.
 */
import { act, loadOlder } from './actions.js'
import { addControl, type Slots } from './controls.js'
import { ago, fmt, h } from './dom.js'
import { iHold } from './session.js'
import { cards, fyis, keyOf, notices, olderCursor } from './store.js'
import type { WebCardView, WebQuestionView } from './types.js'

function detailBox(q: WebQuestionView): HTMLDivElement {
  const d = h('div', { className: 'detail' })
  d.innerHTML = q.detailHtml ?? '' // escaped and rendered on the server
  return d
}

function headOf(q: WebQuestionView, box: HTMLElement): void {
  if (q.header) box.appendChild(h('div', { className: 'q-header', text: q.header }))
  if (q.subject)
    box.appendChild(h('div', { className: 'subject' }, 'Requested for ', h('b', { text: q.subject })))
  box.appendChild(h('p', { className: 'q-text', text: q.question }))
}

/** A live question: its text, then each control the card view offers, as a widget. */
function renderQuestion(card: WebCardView, q: WebQuestionView): HTMLElement {
  const box = h('div', { className: 'q', 'data-question': q.id })
  headOf(q, box)
  if (q.detailHtml) box.appendChild(detailBox(q))
  const slots: Slots = { box, buttons: h('div', { className: 'actions' }), row: null }
  for (const c of q.controls) addControl(card, q, c, slots)
  if (slots.buttons.childNodes.length) box.appendChild(slots.buttons)
  if (q.note) box.appendChild(h('div', { className: 'draft-note', text: q.note }))
  return box
}

/** A finished card: each question with its answer; details fold away. */
function renderSettled(card: WebCardView): HTMLElement {
  const wrap = h('div', { className: 'results' })
  for (const q of card.questions) {
    const box = h('div', { className: 'q', 'data-question': q.id })
    headOf(q, box)
    const parts = q.answer
    if (parts) {
      const line = h('div', { className: 'result' })
      if (parts.length === 0) line.appendChild(h('span', { className: 'skipped', text: 'skipped' }))
      else {
        const cls = `answer${card.tone === 'bad' ? ' declined' : ''}`
        line.appendChild(h('span', { className: cls, text: parts.join(', ') }))
      }
      box.appendChild(line)
    }
    if (q.detailHtml) box.appendChild(h('details', {}, h('summary', { text: 'Details' }), detailBox(q)))
    wrap.appendChild(box)
  }
  return wrap
}

/** The status badge: a rejected approval or a declined plan is red, not a green "answered". */
function statusBadge(card: WebCardView): HTMLElement {
  if (card.status === 'answered' && card.tone === 'bad') {
    const word = card.kind === 'plan-review' ? 'declined' : 'rejected'
    return h('span', { className: 'badge status-declined', 'data-badge': word, text: word })
  }
  return h('span', { className: `badge status-${card.status}`, 'data-badge': card.status, text: card.status })
}

/** Status lines the page shows as text (the countdown shows the deadline and who holds it). */
function statusText(card: WebCardView): string {
  return card.statusLines
    .filter((l) => l.kind !== 'deadline' && l.kind !== 'holding')
    .map((l) => l.text)
    .join(' · ')
}

function kindWord(card: WebCardView): string {
  if (card.kind === 'approval') return 'approval'
  if (card.kind === 'plan-review') return 'plan review'
  return card.questions.length > 1 ? `${card.questions.length} questions` : 'question'
}

function renderCard(card: WebCardView): HTMLElement {
  const open = card.live
  const el = h('article', {
    className: `card${open ? '' : ' settled'}`,
    'data-call-id': card.callId,
    'data-status': card.status,
  })
  const head = h(
    'div',
    { className: 'card-head' },
    h('span', { className: `badge ${card.kind}`, text: kindWord(card) }),
    statusBadge(card),
    h('span', { text: `from ${card.agentId} · ${ago(card.createdAt)}` }),
    h('span', { className: 'grow' }),
  )
  const holding = iHold(card)
  const holdable = card.footer.some((c) => c.kind !== 'options' && c.verb === 'hold')
  if (holdable) {
    if (card.holders.length > 0) {
      const names = card.holders.map((p) => p.name).join(', ')
      head.appendChild(h('span', { className: 'countdown', text: `held by ${names}` }))
    } else {
      const deadline = card.deadline ?? Date.now()
      head.appendChild(
        h('span', {
          className: 'countdown',
          'data-deadline': deadline,
          text: `${fmt(deadline - Date.now())} left`,
        }),
      )
    }
    head.appendChild(
      h(
        'button',
        {
          className: 'link',
          'data-hold': card.callId,
          onclick: () => void act(card, { type: holding ? 'release' : 'hold' }),
        },
        holding ? 'Resume the timer' : 'Take my time',
      ),
    )
  }
  el.appendChild(head)
  const body = h('div', { className: 'card-body' })
  if (card.oncall && open) body.appendChild(h('div', { className: 'draft-note', text: card.oncall }))
  if (!open) body.appendChild(renderSettled(card))
  else for (const q of card.questions) body.appendChild(renderQuestion(card, q))
  const st = statusText(card)
  if (st) {
    const cls = card.status === 'continued' ? 'continued-note' : open ? 'quorum' : 'draft-note'
    body.appendChild(h('div', { className: cls, text: st }))
  }
  if (open) body.appendChild(renderFooter(card))
  const n = notices[keyOf(card)]
  if (n)
    body.appendChild(
      h('div', { className: `notice ${n.kind}`, role: n.kind === 'bad' ? 'alert' : 'status', text: n.text }),
    )
  el.appendChild(body)
  return el
}

/** Card-wide controls after every question (Submit; Take my time sits by the countdown). */
function renderFooter(card: WebCardView): HTMLElement {
  const row = h('div', { className: 'actions' })
  for (const c of card.footer) {
    if (c.kind === 'options' || c.verb === 'hold') continue
    row.appendChild(h('span', { className: 'grow' }))
    row.appendChild(
      h(
        'button',
        {
          // A form's Decline is red, as every refusal on the page.
          className: c.tone === 'primary' ? 'primary' : c.tone === 'danger' ? 'reject' : '',
          'data-act': c.verb,
          onclick: () => void act(card, { type: c.verb }),
        },
        c.label,
      ),
    )
  }
  return row
}

/** A node of the list and what it is known by across redraws (a card by {@link keyOf}). */
interface Drawn {
  key: string
  node: Node
}

function section(title: string, list: WebCardView[], emptyEl?: HTMLElement): Drawn[] {
  const text = title + (list.length ? ` (${list.length})` : '')
  const nodes: Drawn[] = [{ key: `\u0001${title}`, node: h('h2', { className: 'section', text }) }]
  if (list.length === 0 && emptyEl) nodes.push({ key: '\u0001empty', node: emptyEl })
  for (const c of list) nodes.push({ key: keyOf(c), node: renderCard(c) })
  return nodes
}

/** Each node of the list as last placed, by its key: see {@link place}. */
let drawn = new Map<string, Node>()

/**
 * Put the freshly drawn nodes in `main`, keeping every element already there that draws the same
 * (`isEqualNode`: same tags, attributes and text). A card that did not change stays the very
 * element it was, where it was: a click whose press and release straddle a redraw (another card
 * arrived, an update repeated what the page shows) still lands, and a focused box keeps focus.
 */
function place(main: HTMLElement, fresh: Drawn[]): void {
  const next = new Map<string, Node>()
  const use = fresh.map(({ key, node }) => {
    const old = drawn.get(key)
    const kept = old?.parentNode === main && old.isEqualNode(node) ? old : node
    next.set(key, kept)
    return kept
  })
  const keep = new Set(use)
  for (const child of Array.from(main.childNodes)) if (!keep.has(child)) child.remove()
  let cur = main.firstChild
  for (const node of use) {
    if (node === cur) cur = cur.nextSibling
    else main.insertBefore(node, cur)
  }
  drawn = next
}

/** Notices without buttons (a Claude Code session is waiting or finished): text only, newest first. */
function noticeSection(): Drawn[] {
  const nodes: Drawn[] = [
    { key: '\u0001notices', node: h('h2', { className: 'section', text: `Notices (${fyis.length})` }) },
  ]
  for (const n of fyis) {
    nodes.push({
      key: `\u0001notice ${n.id}`,
      node: h(
        'article',
        { className: 'card fyi', 'data-notice': n.id },
        h(
          'div',
          { className: 'card-head' },
          h('span', { className: 'badge', text: 'FYI' }),
          h('span', { text: n.agentId }),
          h('span', { className: 'grow' }),
          h('span', { text: ago(n.at) }),
        ),
        h(
          'div',
          { className: 'card-body' },
          h('p', { className: 'q-text', text: n.title }),
          n.text ? h('div', { className: 'detail fyi-text', text: n.text }) : '',
        ),
      ),
    })
  }
  return nodes
}

/** Draw every card: the waiting ones first (oldest first), then the settled ones (newest first). */
export function renderAll(): void {
  // Keep focus and caret in a text box across re-renders.
  const active = document.activeElement
  const key = active?.getAttribute('data-key')
  const field = active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement ? active : null
  const sel = key && field ? [field.selectionStart, field.selectionEnd] : null
  const all = Array.from(cards.values())
  const open = all.filter((c) => c.live).sort((a, b) => a.createdAt - b.createdAt)
  const done = all
    .filter((c) => !c.live)
    .sort((a, b) => (b.answeredAt || b.createdAt) - (a.answeredAt || a.createdAt))
  const main = document.getElementById('cards')
  if (!main) return
  const empty = h(
    'div',
    { className: 'empty' },
    'No questions are waiting. Ask one from a terminal: ',
    h('code', { text: 'askbridge ask --question "Ship it?" --option Yes --option No' }),
  )
  const fresh: Drawn[] = section('Waiting for an answer', open, empty)
  if (fyis.length) fresh.push(...noticeSection())
  if (done.length) fresh.push(...section('Settled', done))
  if (olderCursor !== undefined) {
    // The settled list is paged: older finished cards load on request.
    const more: HTMLButtonElement = h(
      'button',
      {
        className: 'link older',
        'data-older': 'true',
        onclick: () => {
          more.disabled = true
          loadOlder().catch(() => {
            more.disabled = false
          })
        },
      },
      'Show older',
    )
    fresh.push({ key: '\u0001older', node: more })
  }
  place(main, fresh)
  document.title = `${open.length ? `(${open.length}) ` : ''}askbridge inbox`
  if (key) {
    const again = main.querySelector<HTMLInputElement | HTMLTextAreaElement>(
      `[data-key="${CSS.escape(key)}"]`,
    )
    if (again) {
      again.focus()
      try {
        again.setSelectionRange(sel?.[0] ?? null, sel?.[1] ?? null)
      } catch {}
    }
  }
}
