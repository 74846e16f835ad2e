/** The inbox page's widgets for a live question's controls: picks, "Other…", reason and feedback boxes, buttons. */
import { act } from './actions.js'
import { h } from './dom.js'
import { changed, inputKey, inputs, keyOf, notices } from './store.js'
import type { WebCardView, WebControl, WebQuestionView } from './types.js'

function textBox(cardKey: string, qid: string, what: string, placeholder: string, multiline: boolean) {
  const key = inputKey(cardKey, qid, what)
  const el = multiline ? h('textarea') : h('input', { type: 'text' })
  el.placeholder = placeholder
  el.setAttribute('data-key', key)
  el.setAttribute('aria-label', placeholder)
  el.addEventListener('input', () => {
    inputs[key] = el.value
  })
  el.value = inputs[key] || ''
  return el
}

/** Where a question's widgets go: its box, its row of buttons, and the "Other…" row a Skip joins. */
export interface Slots {
  box: HTMLElement
  buttons: HTMLElement
  row: HTMLElement | null
}

type OptionsControl = Extract<WebControl, { kind: 'options' }>

/** A pick: one button per option (toggles when several may be chosen). */
function optionsWidget(card: WebCardView, q: WebQuestionView, c: OptionsControl): HTMLElement {
  const opts = h('div', { className: 'options', role: c.mode === 'any' ? 'group' : 'radiogroup' })
  for (const o of c.options) {
    opts.appendChild(
      h(
        'button',
        {
          className: `opt${c.mode === 'any' ? ' multi' : ''}${o.chosen ? ' chosen' : ''}`,
          'aria-pressed': o.chosen ? 'true' : 'false',
          'data-option': o.label,
          onclick: () =>
            void act(card, {
              type: c.mode === 'any' ? 'toggle' : 'choose',
              questionId: q.id,
              label: o.label,
            }),
        },
        o.label,
        o.description ? h('span', { className: 'desc', text: o.description }) : null,
      ),
    )
  }
  return opts
}

/** "Other…" (or the only answer of a free-text question): a text box and its Send, Enter sends too. */
function otherRow(card: WebCardView, q: WebQuestionView, label: string): HTMLElement {
  const key = keyOf(card)
  const freeText = !q.controls.some((x) => x.kind === 'options')
  const otherKey = inputKey(key, q.id, 'other')
  const other = textBox(key, q.id, 'other', freeText ? 'Your answer' : label, false)
  const send = () => {
    const text = (inputs[otherKey] || '').trim()
    if (!text) {
      notices[key] = { kind: 'bad', text: 'Please type an answer first.' }
      changed()
      return
    }
    void act(card, { type: 'other', questionId: q.id, text }).then((ok) => {
      if (ok) inputs[otherKey] = ''
    })
  }
  other.addEventListener('keydown', (e) => {
    if ((e as KeyboardEvent).key === 'Enter') {
      e.preventDefault()
      send()
    }
  })
  return h(
    'div',
    { className: 'other' },
    other,
    h('button', { onclick: send, 'data-send': q.id }, freeText ? 'Send' : 'Use my answer'),
  )
}

/** Decline with feedback: the feedback box in the question, its button with the others. */
function declineWidgets(card: WebCardView, label: string, slots: Slots): void {
  const key = keyOf(card)
  const placeholder = 'What should change? (optional)'
  slots.box.appendChild(
    h('div', { className: 'decline-box' }, textBox(key, '', 'feedback', placeholder, true)),
  )
  const decline = () => {
    const text = (inputs[inputKey(key, '', 'feedback')] || '').trim()
    void act(card, text ? { type: 'decline', feedback: text } : { type: 'decline' })
  }
  slots.buttons.appendChild(
    h('button', { className: 'reject', 'data-act': 'decline', onclick: decline }, label),
  )
}

type ButtonControl = Extract<WebControl, { kind: 'button' }>

/** A verb's button; Approve and Reject of an approval send the reason box's text with them. */
function verbButton(card: WebCardView, c: ButtonControl): HTMLElement {
  const key = keyOf(card)
  const cls = c.tone === 'primary' ? 'approve' : c.tone === 'danger' ? 'reject' : ''
  const use = () => {
    const reason =
      (c.verb === 'approve' || c.verb === 'reject') && card.kind === 'approval'
        ? (inputs[inputKey(key, '', 'reason')] || '').trim()
        : ''
    void act(card, reason ? { type: c.verb, reason } : { type: c.verb })
  }
  return h('button', { className: cls, 'data-act': c.verb, onclick: use }, c.label)
}

/** One control the card view offers, as its widget in the question's slots. */
export function addControl(card: WebCardView, q: WebQuestionView, c: WebControl, slots: Slots): void {
  const { box } = slots
  if (c.kind === 'options') {
    box.appendChild(optionsWidget(card, q, c))
  } else if (c.kind === 'form' && c.form === 'other') {
    slots.row = otherRow(card, q, c.label)
    box.appendChild(slots.row)
  } else if (c.kind === 'form' && (c.form === 'approve' || c.form === 'reject')) {
    // The inbox's form for a reason is one text box; Approve and Reject send what it holds.
    if (!box.querySelector('.reason-box')) {
      const placeholder = 'Reason (optional): kept with your decision and sent to the agent'
      box.appendChild(
        h('div', { className: 'reason-box' }, textBox(keyOf(card), '', 'reason', placeholder, true)),
      )
    }
  } else if (c.kind === 'form' && c.form === 'decline') {
    declineWidgets(card, c.label, slots)
  } else if (c.kind === 'button' && c.verb === 'skip') {
    const skip = h(
      'button',
      {
        className: 'link',
        'data-skip': q.id,
        onclick: () => void act(card, { type: 'skip', questionId: q.id }),
      },
      c.label,
    )
    if (slots.row) slots.row.appendChild(skip)
    else box.appendChild(skip)
  } else if (c.kind === 'button') {
    slots.buttons.appendChild(verbButton(card, c))
  }
}
