import { expect, it } from 'vitest'
import { setBounded } from '../src/bounded.js'

it('keeps the last written keys up to the limit, a key written again becoming the newest', () => {
  const map = new Map<string, number>()
  setBounded(map, 'a', 1, 2)
  setBounded(map, 'b', 2, 2)
  setBounded(map, 'a', 3, 2)
  setBounded(map, 'c', 4, 2)
  expect([...map]).toEqual([
    ['a', 3],
    ['c', 4],
  ])
  // A smaller limit drops as many of the oldest as it takes.
  setBounded(map, 'd', 5, 1)
  expect([...map]).toEqual([['d', 5]])
})
