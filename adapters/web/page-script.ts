/**
 * The inbox page's script: plain browser JavaScript, no framework. Every piece of agent text is
 * set with textContent; only the server's escaped markdown (`detailHtml`) goes in as HTML.
 */
export const INBOX_JS = String.raw`
'use strict';
var cards = new Map();
var notices = {};
var inputs = {};
var nameInput = document.getElementById('me');
var liveDot = document.getElementById('live');
nameInput.value = localStorage.getItem('askbridge.name') || '';
nameInput.addEventListener('input', function () {
  localStorage.setItem('askbridge.name', nameInput.value.trim());
  renderAll();
});

// Signed in (inbox sign-in): who the server answers as, and the session's CSRF token.
var me = null;
function myName() { return me ? me.name : nameInput.value.trim(); }
function myUserId() { if (me) return me.userId; var n = myName(); return n ? 'web:' + n : 'local'; }
function writeHeaders() {
  var headers = { 'content-type': 'application/json' };
  if (me) headers['x-csrf-token'] = me.csrf;
  return headers;
}

async function whoAmI() {
  var res = await fetch('/inbox/api/me');
  if (!res.ok) return;
  var data = await res.json();
  if (!data.signedIn) return;
  me = data;
  // The name comes from the sign-in and cannot be edited: show it, with a way out.
  var label = nameInput.parentNode;
  var who = h('span', { className: 'me', id: 'signed-in' }, 'Signed in as ', h('b', { text: data.name }), ' (' + data.email + ')',
    h('button', { className: 'link', id: 'sign-out', onclick: async function () {
      await fetch('/inbox/logout', { method: 'POST', headers: writeHeaders() });
      me = null;
      document.body.textContent = '';
      document.body.appendChild(h('p', { className: 'signed-out' }, 'You are signed out. ', h('a', { href: '/inbox/login', text: 'Sign in again' })));
    } }, 'Sign out'));
  label.replaceWith(who);
  renderAll();
}

function h(tag, attrs) {
  var el = document.createElement(tag);
  if (attrs) {
    for (var k in attrs) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') el.textContent = v;
      else if (k === 'className') el.className = v;
      else if (k === 'onclick') el.addEventListener('click', v);
      else if (k === 'oninput') el.addEventListener('input', v);
      else if (k === 'onkeydown') el.addEventListener('keydown', v);
      else if (k === 'disabled') el.disabled = !!v;
      else el.setAttribute(k, String(v));
    }
  }
  for (var i = 2; i < arguments.length; i++) {
    var c = arguments[i];
    if (c === undefined || c === null || c === false) continue;
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return el;
}

function fmt(ms) {
  var s = Math.max(0, Math.ceil(ms / 1000));
  var m = Math.floor(s / 60); s = s % 60;
  if (m >= 60) return Math.floor(m / 60) + 'h ' + String(m % 60).padStart(2, '0') + 'm';
  return m > 0 ? m + 'm ' + String(s).padStart(2, '0') + 's' : s + 's';
}
function ago(t) {
  var s = Math.round((Date.now() - t) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 86400) return Math.floor(s / 3600) + ' h ago';
  return new Date(t).toLocaleString();
}

function newId() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return 'w' + Date.now().toString(36) + Math.random().toString(36).slice(2, 12);
}

function live(card) { return card.live; }

// callIds are unique per agent only: a card is known by both.
function keyOf(card) { return card.agentId + '\u0000' + card.callId; }

async function act(card, action) {
  var callId = keyOf(card);
  notices[callId] = undefined;
  var body = { action: action, person: myName() ? { name: myName() } : {}, id: newId() };
  var res, data;
  try {
    res = await fetch('/inbox/api/cards/' + encodeURIComponent(card.callId) + '/actions?agentId=' + encodeURIComponent(card.agentId), {
      method: 'POST',
      headers: writeHeaders(),
      body: JSON.stringify(body),
    });
    data = await res.json();
  } catch (e) {
    notices[callId] = { kind: 'bad', text: 'Could not reach askbridge: ' + e.message };
    renderAll();
    return false;
  }
  if (!res.ok || !data.ok) {
    var msg = (data && (data.message || (data.error && data.error.message))) || 'That did not work.';
    notices[callId] = { kind: 'bad', text: msg };
  } else if (data.message) {
    notices[callId] = { kind: 'info', text: data.message };
  }
  if (data && data.card) upsert(data.card);
  else renderAll();
  return !!(res.ok && data.ok);
}

function upsert(view) {
  var cur = cards.get(keyOf(view));
  if (cur && cur.version !== undefined && view.version !== undefined && view.version < cur.version) return;
  cards.set(keyOf(view), view);
  renderAll();
}

function inputKey(callId, qid, what) { return callId + '\u0000' + qid + '\u0000' + what; }

function textBox(callId, qid, what, placeholder, multiline) {
  var key = inputKey(callId, qid, what);
  var el = h(multiline ? 'textarea' : 'input', {
    type: multiline ? undefined : 'text',
    placeholder: placeholder,
    'data-key': key,
    'aria-label': placeholder,
    oninput: function () { inputs[key] = el.value; },
  });
  el.value = inputs[key] || '';
  return el;
}

function headOf(q, box) {
  if (q.header) box.appendChild(h('div', { className: 'q-header', text: q.header }));
  if (q.subject) box.appendChild(h('div', { className: 'subject' }, 'Requested for ', h('b', { text: q.subject })));
  box.appendChild(h('p', { className: 'q-text', text: q.question }));
}

/** A live question: its text, then each control the card view offers, as a widget. */
function renderQuestion(card, q, qi) {
  var box = h('div', { className: 'q', 'data-question': q.id });
  headOf(q, box);
  if (q.detailHtml) {
    var d = h('div', { className: 'detail' });
    d.innerHTML = q.detailHtml; // escaped and rendered on the server
    box.appendChild(d);
  }
  var buttons = h('div', { className: 'actions' });
  var row = null;
  q.controls.forEach(function (c) {
    if (c.kind === 'options') {
      var opts = h('div', { className: 'options', role: c.mode === 'any' ? 'group' : 'radiogroup' });
      c.options.forEach(function (o) {
        opts.appendChild(h('button', {
          className: 'opt' + (c.mode === 'any' ? ' multi' : '') + (o.chosen ? ' chosen' : ''),
          'aria-pressed': o.chosen ? 'true' : 'false',
          'data-option': o.label,
          onclick: function () {
            act(card, { type: c.mode === 'any' ? 'toggle' : 'choose', questionId: q.id, label: o.label });
          },
        }, o.label, o.description ? h('span', { className: 'desc', text: o.description }) : null));
      });
      box.appendChild(opts);
    } else if (c.kind === 'form' && c.form === 'other') {
      var freeText = !q.controls.some(function (x) { return x.kind === 'options'; });
      var key = inputKey(keyOf(card), q.id, 'other');
      var other = textBox(keyOf(card), q.id, 'other', freeText ? 'Your answer' : c.label, false);
      var send = function () {
        var text = (inputs[key] || '').trim();
        if (!text) { notices[keyOf(card)] = { kind: 'bad', text: 'Please type an answer first.' }; renderAll(); return; }
        act(card, { type: 'other', questionId: q.id, text: text }).then(function (ok) {
          if (ok) inputs[key] = '';
        });
      };
      other.addEventListener('keydown', function (e) { if (e.key === 'Enter') { e.preventDefault(); send(); } });
      row = h('div', { className: 'other' }, other,
        h('button', { onclick: send, 'data-send': q.id }, freeText ? 'Send' : 'Use my answer'));
      box.appendChild(row);
    } else if (c.kind === 'form' && (c.form === 'approve' || c.form === 'reject')) {
      // The inbox's form for a reason is one text box; Approve and Reject send what it holds.
      if (!box.querySelector('.reason-box')) {
        box.appendChild(h('div', { className: 'reason-box' }, textBox(keyOf(card), '', 'reason', 'Reason (optional): kept with your decision and sent to the agent', true)));
      }
    } else if (c.kind === 'form' && c.form === 'decline') {
      box.appendChild(h('div', { className: 'decline-box' }, textBox(keyOf(card), '', 'feedback', 'What should change? (optional)', true)));
      buttons.appendChild(h('button', { className: 'reject', 'data-act': 'decline', onclick: function () {
        var text = (inputs[inputKey(keyOf(card), '', 'feedback')] || '').trim();
        act(card, text ? { type: 'decline', feedback: text } : { type: 'decline' });
      } }, c.label));
    } else if (c.kind === 'button' && c.verb === 'skip') {
      var skip = h('button', { className: 'link', 'data-skip': q.id, onclick: function () {
        act(card, { type: 'skip', questionId: q.id });
      } }, c.label);
      if (row) row.appendChild(skip); else box.appendChild(skip);
    } else if (c.kind === 'button') {
      var cls = c.tone === 'primary' ? 'approve' : c.tone === 'danger' ? 'reject' : '';
      buttons.appendChild(h('button', { className: cls, 'data-act': c.verb, onclick: function () {
        var reason = (c.verb === 'approve' || c.verb === 'reject') && card.kind === 'approval'
          ? (inputs[inputKey(keyOf(card), '', 'reason')] || '').trim() : '';
        act(card, reason ? { type: c.verb, reason: reason } : { type: c.verb });
      } }, c.label));
    }
  });
  if (buttons.childNodes.length) box.appendChild(buttons);
  if (q.note) box.appendChild(h('div', { className: 'draft-note', text: q.note }));
  return box;
}

/** A finished card: each question with its answer; details fold away. */
function renderSettled(card) {
  var wrap = h('div', { className: 'results' });
  card.questions.forEach(function (q) {
    var box = h('div', { className: 'q', 'data-question': q.id });
    headOf(q, box);
    var parts = q.answer;
    if (parts) {
      var line = h('div', { className: 'result' });
      if (parts.length === 0) line.appendChild(h('span', { className: 'skipped', text: 'skipped' }));
      else line.appendChild(h('span', { className: 'answer' + (card.tone === 'bad' ? ' declined' : ''), text: parts.join(', ') }));
      box.appendChild(line);
    }
    if (q.detailHtml) {
      var d = h('div', { className: 'detail' });
      d.innerHTML = q.detailHtml; // escaped and rendered on the server
      box.appendChild(h('details', {}, h('summary', { text: 'Details' }), d));
    }
    wrap.appendChild(box);
  });
  return wrap;
}

/** The status badge: a rejected approval or a declined plan is red, not a green "answered". */
function statusBadge(card) {
  if (card.status === 'answered' && card.tone === 'bad') {
    var word = card.kind === 'plan-review' ? 'declined' : 'rejected';
    return h('span', { className: 'badge status-declined', 'data-badge': word, text: word });
  }
  return h('span', { className: 'badge status-' + card.status, 'data-badge': card.status, text: card.status });
}

/** Status lines the page shows as text (the countdown shows the deadline and who holds it). */
function statusText(card) {
  return card.statusLines.filter(function (l) { return l.kind !== 'deadline' && l.kind !== 'holding'; })
    .map(function (l) { return l.text; }).join(' · ');
}

function renderCard(card) {
  var open = live(card);
  var el = h('article', { className: 'card' + (open ? '' : ' settled'), 'data-call-id': card.callId, 'data-status': card.status });
  var head = h('div', { className: 'card-head' },
    h('span', { className: 'badge ' + card.kind, text: card.kind === 'questions' ? (card.questions.length > 1 ? card.questions.length + ' questions' : 'question') : card.kind === 'approval' ? 'approval' : 'plan review' }),
    statusBadge(card),
    h('span', { text: 'from ' + card.agentId + ' · ' + ago(card.createdAt) }),
    h('span', { className: 'grow' }));
  var holding = card.holders.some(function (p) { return p.userId === myUserId(); });
  var holdable = card.footer.some(function (c) { return c.verb === 'hold'; });
  if (holdable) {
    if (card.holders.length > 0) {
      head.appendChild(h('span', { className: 'countdown', text: 'held by ' + card.holders.map(function (p) { return p.name; }).join(', ') }));
    } else {
      head.appendChild(h('span', { className: 'countdown', 'data-deadline': card.deadline, text: fmt(card.deadline - Date.now()) + ' left' }));
    }
    head.appendChild(h('button', { className: 'link', 'data-hold': card.callId, onclick: function () {
      act(card, { type: holding ? 'release' : 'hold' });
    } }, holding ? 'Resume the timer' : 'Take my time'));
  }
  el.appendChild(head);
  var body = h('div', { className: 'card-body' });
  if (card.oncall && open) body.appendChild(h('div', { className: 'draft-note', text: card.oncall }));
  if (!open) {
    body.appendChild(renderSettled(card));
  } else card.questions.forEach(function (q, qi) { body.appendChild(renderQuestion(card, q, qi)); });
  var st = statusText(card);
  if (st) body.appendChild(h('div', { className: card.status === 'continued' ? 'continued-note' : open ? 'quorum' : 'draft-note', text: st }));
  if (open) body.appendChild(renderFooter(card));
  var n = notices[keyOf(card)];
  if (n) body.appendChild(h('div', { className: 'notice ' + n.kind, role: n.kind === 'bad' ? 'alert' : 'status', text: n.text }));
  el.appendChild(body);
  return el;
}

/** Card-wide controls after every question (Submit; Take my time sits by the countdown). */
function renderFooter(card) {
  var row = h('div', { className: 'actions' });
  card.footer.forEach(function (c) {
    if (c.verb === 'hold') return;
    row.appendChild(h('span', { className: 'grow' }));
    row.appendChild(h('button', { className: c.tone === 'primary' ? 'primary' : '', 'data-act': c.verb, onclick: function () { act(card, { type: c.verb }); } }, c.label));
  });
  return row;
}

function section(title, list, emptyEl) {
  var frag = document.createDocumentFragment();
  frag.appendChild(h('h2', { className: 'section', text: title + (list.length ? ' (' + list.length + ')' : '') }));
  if (list.length === 0 && emptyEl) frag.appendChild(emptyEl);
  list.forEach(function (c) { frag.appendChild(renderCard(c)); });
  return frag;
}

// Notices without buttons (a Claude Code session is waiting or finished): text only, newest first.
var fyis = [];
function noticeSection() {
  var frag = document.createDocumentFragment();
  frag.appendChild(h('h2', { className: 'section', text: 'Notices (' + fyis.length + ')' }));
  fyis.forEach(function (n) {
    frag.appendChild(h('article', { className: 'card fyi', 'data-notice': n.id },
      h('div', { className: 'card-head' }, h('span', { className: 'badge', text: 'FYI' }),
        h('span', { text: n.agentId }), h('span', { className: 'grow' }), h('span', { text: ago(n.at) })),
      h('div', { className: 'card-body' }, h('p', { className: 'q-text', text: n.title }),
        n.text ? h('div', { className: 'detail fyi-text', text: n.text }) : '')));
  });
  return frag;
}

function renderAll() {
  // Keep focus and caret in a text box across re-renders.
  var active = document.activeElement;
  var key = active && active.getAttribute && active.getAttribute('data-key');
  var sel = key ? [active.selectionStart, active.selectionEnd] : null;
  var all = Array.from(cards.values());
  var open = all.filter(live).sort(function (a, b) { return a.createdAt - b.createdAt; });
  var done = all.filter(function (c) { return !live(c); }).sort(function (a, b) { return (b.answeredAt || b.createdAt) - (a.answeredAt || a.createdAt); });
  var main = document.getElementById('cards');
  main.textContent = '';
  var empty = h('div', { className: 'empty' }, 'No questions are waiting. Ask one from a terminal: ',
    h('code', { text: 'askbridge ask --question "Ship it?" --option Yes --option No' }));
  main.appendChild(section('Waiting for an answer', open, empty));
  if (fyis.length) main.appendChild(noticeSection());
  if (done.length) main.appendChild(section('Settled', done.slice(0, 30)));
  document.title = (open.length ? '(' + open.length + ') ' : '') + 'askbridge inbox';
  if (key) {
    var again = main.querySelector('[data-key="' + CSS.escape(key) + '"]');
    if (again) { again.focus(); try { again.setSelectionRange(sel[0], sel[1]); } catch (e) {} }
  }
}

setInterval(function () {
  document.querySelectorAll('[data-deadline]').forEach(function (el) {
    el.textContent = fmt(Number(el.getAttribute('data-deadline')) - Date.now()) + ' left';
  });
}, 1000);

// A hold ("Take my time") lasts only while this tab is open: the bridge lets go once these
// heartbeats stop (within its hold lease, 30 s by default).
setInterval(function () {
  cards.forEach(function (card) {
    var mine = card.status === 'open' && card.holders.some(function (p) { return p.userId === myUserId(); });
    if (!mine) return;
    fetch('/inbox/api/cards/' + encodeURIComponent(card.callId) + '/hold?agentId=' + encodeURIComponent(card.agentId), {
      method: 'POST',
      headers: writeHeaders(),
      body: JSON.stringify({ person: myName() ? { name: myName() } : {} }),
    }).catch(function () {});
  });
}, 10000);

async function load() {
  var res = await fetch('/inbox/api/cards');
  if (!res.ok) throw new Error('HTTP ' + res.status);
  var data = await res.json();
  cards = new Map();
  data.cards.forEach(function (c) { cards.set(keyOf(c), c); });
  var notes = await fetch('/inbox/api/notices');
  if (notes.ok) fyis = (await notes.json()).notices;
  renderAll();
}

function connect() {
  var es = new EventSource('/inbox/api/events');
  es.addEventListener('open', function () { liveDot.classList.add('live'); liveDot.title = 'live'; load().catch(function () {}); });
  es.addEventListener('card', function (e) {
    var view = JSON.parse(e.data);
    var before = cards.get(keyOf(view));
    // A card that just closed drops its stale hints ("please answer or skip").
    if (before && live(before) && !live(view)) notices[keyOf(view)] = undefined;
    upsert(view);
  });
  es.addEventListener('fyi', function (e) {
    var n = JSON.parse(e.data);
    fyis = [n].concat(fyis.filter(function (x) { return x.id !== n.id; })).slice(0, 30);
    renderAll();
  });
  es.addEventListener('notice', function (e) {
    var n = JSON.parse(e.data);
    if (n.userId === myUserId() && n.callId) { notices[keyOf(n)] = { kind: 'info', text: n.text }; renderAll(); }
  });
  es.addEventListener('error', function () { liveDot.classList.remove('live'); liveDot.title = 'reconnecting'; });
}

renderAll();
whoAmI().catch(function () {}).then(function () {
  load().catch(function () {});
  connect();
});
`
