import { expect, it } from 'vitest'
import { WrittenCards } from '../../src/store/written.js'

it('keeps the calls written last, up to its limit, the oldest write going first', () => {
  const written = new WrittenCards(2)
  const key = (callId: string) => ({ agentId: 'alice', callId })
  written.wrote(key('a'), { card: { version: 1, state: '{"n":1}' }, record: 'ra' })
  written.wrote(key('b'), { card: { version: 1, state: '{}' } })
  // Written again: now the latest, and what it had that this write does not say is kept.
  written.wrote(key('a'), { card: { version: 2, state: '{"n":2}' } })
  written.wrote(key('c'), { record: 'rc' })
  expect(written.cards('b')).toEqual([])
  const rows: unknown[] = []
  expect(written.cards('a', (k, version, record) => rows.push([k.callId, version, record]))).toEqual([
    { ...key('a'), version: 2, state: { n: 2 }, remembered: true },
  ])
  expect(rows).toEqual([['a', 2, 'ra']])
  // A row without a card is no card.
  expect(written.cards('c')).toEqual([])
  written.forget(key('a'))
  expect(written.cards('a')).toEqual([])
  expect(written.card(key('a'))).toBeUndefined()
  // The card as last written, with its identity where the store gave one.
  written.wrote(key('d'), { card: { version: 3, state: '{}', identity: '41' } })
  expect(written.card(key('d'))).toEqual({ version: 3, state: '{}', identity: '41' })
})
