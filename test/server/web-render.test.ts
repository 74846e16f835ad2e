import { describe, expect, test } from 'vitest'
import { markdownToHtml } from '../../adapters/web/markdown.js'
import { INBOX_CSP, inboxPage } from '../../adapters/web/page.js'
import { cardToWebView } from '../../adapters/web/view.js'
import { newCard } from '../../src/card/lifecycle.js'

describe('markdownToHtml', () => {
  test('escapes HTML before anything else', () => {
    const html = markdownToHtml('<script>alert(1)</script> <img src=x onerror=alert(1)> "quotes" & \'apos\'')
    // Raw HTML shows as typed: `<` is escaped, so nothing becomes an element.
    expect(html).toBe(
      '<p>&lt;script>alert(1)&lt;/script> &lt;img src=x onerror=alert(1)> "quotes" &amp; \'apos\'</p>',
    )
  })

  test('headings, emphasis, code, lists, quotes, rules', () => {
    const html = markdownToHtml(
      '# Title\n\nSome **bold**, *italic*, _also_, ~~gone~~ and `a<b>`.\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n---\n\n```ts\nconst x = 1 < 2\n```',
    )
    expect(html).toContain('<h3>Title</h3>')
    expect(html).toContain('<strong>bold</strong>')
    expect(html).toContain('<em>italic</em>')
    expect(html).toContain('<em>also</em>')
    expect(html).toContain('<del>gone</del>')
    expect(html).toContain('<code>a&lt;b></code>')
    expect(html).toContain('<ul>\n<li>one</li>\n<li>two</li>\n</ul>')
    expect(html).toContain('<ol>\n<li>first</li>\n<li>second</li>\n</ol>')
    expect(html).toContain('<blockquote>\n<p>quoted</p>\n</blockquote>')
    expect(html).toContain('<hr>')
    expect(html).toContain('<pre><code class="language-ts">const x = 1 &lt; 2\n</code></pre>')
  })

  test('links only with http(s) URLs, never closing the attribute', () => {
    expect(markdownToHtml('[ok](https://example.com/a?b=1&c=2)')).toBe(
      '<p><a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer nofollow">ok</a></p>',
    )
    expect(markdownToHtml('[x](javascript:alert(1))')).toBe('<p>x (javascript:alert(1))</p>')
    expect(markdownToHtml('[x](https://e.com/"onmouseover="alert(1))')).not.toMatch(
      /href="[^"]*"\s*onmouseover/,
    )
    expect(markdownToHtml('[x](data:text/html,hi)')).not.toContain('<a ')
  })

  test('snake_case and code spans are left alone', () => {
    expect(markdownToHtml('use snake_case_name here')).toBe('<p>use snake_case_name here</p>')
    expect(markdownToHtml('`**not bold**`')).toBe('<p><code>**not bold**</code></p>')
  })
})

describe('cardToWebView', () => {
  test('renders detail as safe HTML and keeps labels as plain data', () => {
    const card = newCard({
      callId: 'c1',
      agentId: 'a',
      now: 1,
      questions: [
        {
          id: 'deploy',
          question: 'Deploy?',
          detail: 'Ship <b>now</b>',
          options: [{ label: '<Approve>' }, { label: 'Reject' }],
          intent: { kind: 'approval', approve: '<Approve>', reject: 'Reject', subject: { name: 'bot' } },
        },
      ],
    })
    const view = cardToWebView(card, 3)
    expect(view.kind).toBe('approval')
    expect(view.questions[0]?.detailHtml).toBe('<p>Ship &lt;b>now&lt;/b></p>')
    expect(view.questions[0]?.controls).toEqual([
      { kind: 'button', verb: 'approve', label: '<Approve>', tone: 'primary' },
      { kind: 'button', verb: 'reject', label: 'Reject', tone: 'danger' },
      {
        kind: 'form',
        verb: 'approve',
        q: 0,
        label: 'Approve with reason…',
        tone: 'neutral',
        form: 'approve',
      },
      { kind: 'form', verb: 'reject', q: 0, label: 'Reject with reason…', tone: 'neutral', form: 'reject' },
    ])
    expect(view.questions[0]?.subject).toBe('bot')
    expect(view.version).toBe(3)
  })
})

describe('inbox page', () => {
  test('nothing from elsewhere, no inline script: a CSP that runs only its own script files', () => {
    const html = inboxPage()
    expect(html).not.toMatch(/(src|href)="https?:/)
    expect(html).not.toContain('${')
    expect(html).toContain('<script type="module" src="/inbox/client/main.js"></script>')
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/)
    // Only same-origin script files: no inline script, no eval, nothing from elsewhere.
    expect(INBOX_CSP.split('; ').find((d) => d.startsWith('script-src'))).toBe("script-src 'self'")
    expect(INBOX_CSP).toContain("default-src 'none'")
  })
})
