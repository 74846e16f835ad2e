/**
 * The inbox page's card store (adapters/web/client/store.ts, no DOM in it): a reload of the list
 * that was read while cards changed must not drop or roll back what the page learned meanwhile.
 * The race, seen in the browser suite: the page's list request is read before an ask's card
 * exists, the card's live event arrives, then the list replaces everything and the card vanished
 * until its next change.
 */
import { beforeEach, expect, test } from 'vitest'
import {
  addFyi,
  cards,
  fyis,
  keyOf,
  learnedMark,
  replaceAll,
  setFyis,
  upsert,
} from '../../adapters/web/client/store.js'
import type { WebCardView, WebFyi, WebFyiList } from '../../adapters/web/client/types.js'

function view(callId: string, version: number, status: WebCardView['status'] = 'open'): WebCardView {
  return {
    callId,
    agentId: 'default',
    kind: 'questions',
    status,
    live: status === 'open',
    createdAt: 1,
    questions: [],
    footer: [],
    statusLines: [],
    quorum: 1,
    holders: [],
    version,
  }
}

const shown = () => [...cards.values()].map((c) => `${c.callId}@${c.version}`).sort()

beforeEach(() => {
  replaceAll([], undefined, learnedMark())
  setFyis(listed(), learnedMark())
})

test('a card learned while the list was on its way stays, even though the list lacks it', () => {
  upsert(view('old', 1))
  const mark = learnedMark()
  upsert(view('new', 1)) // its live event, after the list was requested
  replaceAll([view('old', 1)], undefined, mark)
  expect(shown()).toEqual(['new@1', 'old@1'])
})

test('a card learned meanwhile keeps its newer version over the older one listed', () => {
  upsert(view('a', 1))
  const mark = learnedMark()
  upsert(view('a', 3)) // an action's reply
  replaceAll([view('a', 2)], undefined, mark)
  expect(cards.get(keyOf(view('a', 0)))?.version).toBe(3)
})

test('what the page knew before the request follows the list: dropped, or replaced even by a lower version', () => {
  upsert(view('gone', 4))
  upsert(view('kept', 5))
  const mark = learnedMark()
  replaceAll([view('kept', 2, 'answered')], undefined, mark)
  expect(shown()).toEqual(['kept@2'])
})

test('a newer listed version replaces one learned meanwhile', () => {
  const mark = learnedMark()
  upsert(view('b', 1))
  replaceAll([view('b', 2)], undefined, mark)
  expect(cards.get(keyOf(view('b', 0)))?.version).toBe(2)
})

// The same race for notices without buttons (a Claude Code "waiting" notice), seen in CI's
// browser suite: the page's notices request was read before the hook's notice existed, its live
// event arrived, then the list replaced every notice and the new one was gone.
const fyi = (id: string): WebFyi => ({ id, title: id, text: '', agentId: 'claude-code:abc', at: 1 })
const fyiIds = () => fyis.map((n) => n.id)
/** The server's notices list, keeping its default 30. */
const listed = (...notices: WebFyi[]): WebFyiList => ({ notices, limit: 30 })

test('a notice pushed while the notices list was on its way stays first, though the list lacks it', () => {
  addFyi(fyi('old'))
  const mark = learnedMark()
  addFyi(fyi('new')) // its live event, after the list was requested
  setFyis(listed(fyi('old')), mark)
  expect(fyiIds()).toEqual(['new', 'old'])
})

test('notices the page had before the request follow the list; one listed and pushed shows once', () => {
  addFyi(fyi('gone'))
  const mark = learnedMark()
  addFyi(fyi('both'))
  setFyis(listed(fyi('both'), fyi('listed')), mark)
  expect(fyiIds()).toEqual(['both', 'listed'])
  // A later reload without a push in between is the list, exactly.
  setFyis(listed(fyi('listed')), learnedMark())
  expect(fyiIds()).toEqual(['listed'])
})

test('the page keeps as many notices as the server says it keeps', () => {
  setFyis({ notices: [fyi('b'), fyi('a')], limit: 2 }, learnedMark())
  addFyi(fyi('c'))
  expect(fyiIds()).toEqual(['c', 'b'])
})
