import { describe, expect, it } from 'vitest'
import { markdownToMrkdwn } from '../../adapters/slack/markdown.js'
import { escapeMrkdwn, splitMrkdwn, truncateMrkdwn, truncatePlain } from '../../adapters/slack/text.js'

/** Anything Slack would turn into a notification or a link we did not build. */
const PINGS = /<(!channel|!here|!everyone|@[UW]|!subteam\^|#C)/

describe('escaping agent text', () => {
  it('escapes &, < and >', () => {
    expect(escapeMrkdwn('a & b < c > d')).toBe('a &amp; b &lt; c &gt; d')
  })

  it.each([
    '<!channel>',
    '<!here>',
    '<!everyone>',
    '<@U0123ABC>',
    '<!subteam^S0ONCALL>',
    '<#C0123|general>',
    '&lt;!channel&gt;',
    'ping <!channel|channel> now',
  ])('agent text %j never becomes a mention', (text) => {
    for (const out of [escapeMrkdwn(text), markdownToMrkdwn(text)]) {
      expect(out).not.toMatch(PINGS)
    }
  })

  it('defangs bare @here, @channel and @everyone', () => {
    const out = escapeMrkdwn('hey @here and @channel and @Everyone')
    expect(out).not.toMatch(/@(here|channel|everyone)\b/i)
    expect(out.replace(/\u200b/g, '')).toBe('hey @here and @channel and @Everyone')
  })

  it('a markdown link cannot smuggle a mention or a broken link', () => {
    const out = markdownToMrkdwn('[<!channel>](https://example.com/a?b=1&c=2) and [x](javascript:alert(1))')
    expect(out).toContain('<https://example.com/a?b=1&amp;c=2|&lt;!channel&gt;>')
    expect(out).not.toMatch(PINGS)
    expect(out).not.toContain('<javascript')
  })
})

describe('markdown to mrkdwn', () => {
  it('converts emphasis, strike, code and links', () => {
    expect(markdownToMrkdwn('**bold** and *it* and ~~gone~~ and `a<b`')).toBe(
      '*bold* and _it_ and ~gone~ and `a&lt;b`',
    )
    expect(markdownToMrkdwn('see [docs](https://x.dev/p)')).toBe('see <https://x.dev/p|docs>')
    expect(markdownToMrkdwn('<https://x.dev>')).toBe('<https://x.dev/|https://x.dev>')
  })

  it('converts headings, bullets, quotes, rules, tables and fences', () => {
    const md = [
      '# Plan',
      '',
      '- one',
      '  * two',
      '',
      '> quoted',
      '',
      '---',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '',
      '```ts',
      'if (a < b) {}',
      '```',
    ].join('\n')
    expect(markdownToMrkdwn(md)).toBe(
      [
        '*Plan*',
        '',
        '• one',
        '    ◦ two',
        '',
        '&gt; quoted',
        '',
        '──────────',
        '',
        '```',
        'a | b',
        '--|--',
        '1 | 2',
        '```',
        '',
        '```',
        'if (a &lt; b) {}',
        '```',
      ].join('\n'),
    )
  })

  it('closes an unclosed fence so it cannot swallow the rest of the card', () => {
    expect(markdownToMrkdwn('```\ncode')).toBe('```\ncode\n```')
  })
})

describe('splitting and truncating', () => {
  it('splits at paragraph boundaries and never exceeds the limit', () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} `.repeat(20).trim())
    const chunks = splitMrkdwn(paragraphs.join('\n\n'), 3000)
    expect(chunks.length).toBeGreaterThan(1)
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(3000)
    expect(chunks.join('\n\n')).toBe(paragraphs.join('\n\n'))
  })

  it('keeps code blocks balanced across chunks', () => {
    const code = ['```', ...Array.from({ length: 400 }, (_, i) => `line ${i} of code`), '```'].join('\n')
    const chunks = splitMrkdwn(code, 1000)
    expect(chunks.length).toBeGreaterThan(1)
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(1000)
      expect((c.match(/```/g) ?? []).length % 2).toBe(0)
    }
  })

  it('never cuts inside an entity or a link', () => {
    const text = `${'x'.repeat(95)}&amp;${'y'.repeat(10)} <https://example.com/${'p'.repeat(30)}|a link> tail`
    for (const c of splitMrkdwn(text, 100)) {
      expect(c).not.toMatch(/&[a-z]*$/)
      expect((c.match(/</g) ?? []).length).toBe((c.match(/>/g) ?? []).length)
    }
  })

  it('hard-splits a long word without losing characters or halving an emoji', () => {
    const text = '😀'.repeat(100)
    const chunks = splitMrkdwn(text, 51)
    expect(chunks.join('')).toBe(text)
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(51)
  })

  it('truncates visibly', () => {
    expect(truncatePlain('a'.repeat(75), 75)).toBe('a'.repeat(75))
    expect(truncatePlain('a'.repeat(76), 75)).toBe(`${'a'.repeat(74)}…`)
    expect(truncatePlain('a😀b', 2)).toBe('a…')
    expect(truncateMrkdwn(`${'word '.repeat(100)}`, 50).length).toBeLessThanOrEqual(50)
    expect(truncateMrkdwn('short', 50)).toBe('short')
  })
})
