import { describe, expect, it } from 'vitest'
import { cleanText } from '../../src/card/text.js'

describe('cleanText', () => {
  it('removes every bidi override and isolate character', () => {
    const bidi = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069']
    for (const c of bidi) expect(cleanText(`Approve${c}txt.exe`)).toBe('Approvetxt.exe')
    expect(cleanText('a\u202Eb\u2067c')).toBe('abc')
  })
  it('keeps ordinary text, tabs, newlines and right-to-left scripts', () => {
    expect(cleanText('שלום\tworld\nمرحبا 👍')).toBe('שלום\tworld\nمرحبا 👍')
    expect(cleanText('a\u200Db')).toBe('a\u200Db') // zero-width joiner is part of emoji sequences
  })
  it('normalises line endings and drops other control characters', () => {
    expect(cleanText('a\r\nb\rc')).toBe('a\nb\nc')
    expect(cleanText('a\u0000b\u001Bc\u0085d')).toBe('abcd')
  })
})
