/**
 * Plans render through one parser on every surface: numbering, nesting, tables and code survive
 * in Slack mrkdwn, Discord markdown and the inbox's sanitized HTML.
 */

import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { describe, expect, it } from 'vitest'
import { markdownToDiscord } from '../../adapters/discord/markdown.js'
import { cardToDiscordMessages } from '../../adapters/discord/render.js'
import { markdownToMrkdwn } from '../../adapters/slack/markdown.js'
import { cardToMessages } from '../../adapters/slack/render.js'
import { markdownToHtml } from '../../adapters/web/markdown.js'
import { newCard } from '../../src/card/lifecycle.js'
import { parseMarkdown } from '../../src/card/markdown.js'
import { validateMessage } from '../fakes/discord/validate.js'
import { checkMessage, mentionsIn } from '../fakes/slack/validate.js'
import { CODE_PLAN, CORPUS, LONG_PLAN, MIGRATION_PLAN, NESTED_PLAN, TABLE_PLAN } from '../fixtures/plans.js'

const lines = (text: string) => text.split('\n')
const numbered = (text: string) =>
  lines(text)
    .map((l) => /^(\d+)\. /.exec(l)?.[1])
    .filter((n) => n !== undefined)
    .map(Number)

describe('numbered lists keep their numbers', () => {
  it('items separated by blank lines count 1..5 (not 1, 1, 1…) on Slack and Discord', () => {
    expect(numbered(markdownToMrkdwn(MIGRATION_PLAN))).toEqual([1, 2, 3, 4, 5])
    expect(numbered(markdownToDiscord(MIGRATION_PLAN))).toEqual([1, 2, 3, 4, 5])
  })
  it('in HTML one <ol> holds all five items', () => {
    const html = markdownToHtml(MIGRATION_PLAN)
    expect(html.match(/<ol[ >]/g)).toHaveLength(1)
    expect(html.match(/<li>/g)?.length).toBeGreaterThanOrEqual(5 + 3) // 5 steps, 3 nested bullets
  })
  it('a list starting at 7 stays 7, 8; the nested one counts 1, 2', () => {
    const slack = markdownToMrkdwn(NESTED_PLAN)
    expect(slack).toMatch(/^7\. Split/m)
    expect(slack).toMatch(/^8\. Ship/m)
    expect(slack).toMatch(/^ {4}1\. extract interfaces$/m)
    expect(slack).toMatch(/^ {4}2\. move the tax code$/m)
    const discord = markdownToDiscord(NESTED_PLAN)
    expect(discord).toMatch(/^7\. Split/m)
    expect(discord).toMatch(/^ {3}1\. extract interfaces$/m)
    expect(markdownToHtml(NESTED_PLAN)).toContain('<ol start="7">')
  })
  it('a 120-step plan numbers 1..120 on both chat surfaces', () => {
    const want = Array.from({ length: 120 }, (_, i) => i + 1)
    expect(numbered(markdownToMrkdwn(LONG_PLAN))).toEqual(want)
    expect(numbered(markdownToDiscord(LONG_PLAN))).toEqual(want)
  })
})

describe('nested lists stay nested', () => {
  it('Slack indents and changes the bullet per level', () => {
    const slack = markdownToMrkdwn(MIGRATION_PLAN)
    expect(slack).toMatch(/^ {4}◦ write to Redis \*and\* PostgreSQL$/m)
    expect(slack).toMatch(/^ {8}▪ compare both reads in the background$/m)
  })
  it('Discord indents under the item text', () => {
    const discord = markdownToDiscord(MIGRATION_PLAN)
    expect(discord).toMatch(/^ {3}- write to Redis \*\*and\*\* PostgreSQL$/m)
    expect(discord).toMatch(/^ {5}- compare both reads in the background$/m)
  })
  it('HTML nests <ul> inside <li>', () => {
    expect(markdownToHtml(MIGRATION_PLAN)).toMatch(/<li>[\s\S]*?<ul>[\s\S]*?<li>[\s\S]*?<ul>/)
  })
  it('task lists show their state', () => {
    expect(markdownToMrkdwn(NESTED_PLAN)).toContain('• ☑ agree on the API')
    expect(markdownToDiscord(NESTED_PLAN)).toContain('- ☐ write the migration guide')
    expect(markdownToHtml(NESTED_PLAN)).toMatch(/<input type="checkbox" checked disabled>/)
  })
})

describe('tables', () => {
  it('Slack and Discord show an aligned monospace block', () => {
    for (const out of [markdownToMrkdwn(TABLE_PLAN), markdownToDiscord(TABLE_PLAN)]) {
      const block = out.slice(out.indexOf('```'), out.lastIndexOf('```') + 3)
      // As a reader sees it: entities decoded, zero-width spaces (mention escapes) gone.
      const seen = block
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&')
        .replace(/\u200b/g, '')
      const rows = lines(seen).slice(1, -1)
      expect(rows[0]).toMatch(/^Region +\| Window \(UTC\) +\| Owner +\| Notes$/)
      expect(rows[1]).toMatch(/^-+-\|-+-\|-+-\|-+$/)
      expect(rows).toHaveLength(5)
      // Columns line up: every " | " sits at the same offsets.
      const bars = rows.filter((_, i) => i !== 1).map((r) => [...r.matchAll(/ \| /g)].map((m) => m.index))
      for (const b of bars) expect(b).toEqual(bars[0])
    }
  })
  it('HTML has a real table', () => {
    const html = markdownToHtml(TABLE_PLAN)
    expect(html).toContain('<table>')
    expect(html).toMatch(/<th[^>]*>Region<\/th>/)
    expect(html).toContain('<td><strong>first</strong></td>')
  })
})

describe('code blocks', () => {
  it('keep their content; a fence inside code cannot close the block', () => {
    const slack = markdownToMrkdwn(CODE_PLAN)
    expect(slack).toContain(
      '```\nexport function retry&lt;T&gt;(fn: () =&gt; Promise&lt;T&gt;, attempts = 3)',
    )
    expect(slack).toContain('// ˋˋˋ inside code stays code')
    expect(slack.match(/```/g)).toHaveLength(4)
    const discord = markdownToDiscord(CODE_PLAN)
    expect(discord).toContain('```ts\nexport function retry<T>(fn: () => Promise<T>, attempts = 3)')
    expect(discord).toContain('```bash\nnpm test && npm run build\n```')
    expect(discord.match(/```/g)).toHaveLength(4)
    const html = markdownToHtml(CODE_PLAN)
    expect(html).toContain('<pre><code class="language-ts">export function retry&lt;T>')
  })
  it('the SQL inside a list item stays a code block in the item', () => {
    expect(markdownToMrkdwn(MIGRATION_PLAN)).toContain('    ```\n    INSERT INTO sessions')
    expect(markdownToHtml(MIGRATION_PLAN)).toMatch(
      /<li>[\s\S]*<pre><code class="language-sql">INSERT INTO sessions/,
    )
  })
})

describe('links', () => {
  it('a link whose text names its own host, or no host, is left as written', () => {
    expect(markdownToMrkdwn('[the runbook](https://evil.example/x)')).toBe(
      '<https://evil.example/x|the runbook>',
    )
    expect(markdownToMrkdwn('[wiki.example.com](https://WIKI.example.com./a)')).toBe(
      '<https://wiki.example.com./a|wiki.example.com>',
    )
    expect(markdownToMrkdwn('https://a.example/b and a@b.example')).toBe(
      '<https://a.example/b|https://a.example/b> and <mailto:a@b.example|a@b.example>',
    )
  })

  it('a link whose text names another host carries the real one, on every surface alike', () => {
    const md = '[docs.example.com](https://evil.example/docs)'
    expect(markdownToMrkdwn(md)).toBe('<https://evil.example/docs|docs.example.com (→ evil.example)>')
    expect(markdownToDiscord(md)).toBe('[docs.example.com \\(→ evil.example\\)](https://evil.example/docs)')
    expect(markdownToHtml(md)).toContain('>docs.example.com (→ evil.example)</a>')
  })

  it('an autolink that is not a link to follow shows as typed, brackets included', () => {
    expect(markdownToMrkdwn('see <ftp://files.example/x> now')).toBe('see &lt;ftp://files.example/x&gt; now')
  })

  it('safe links are links on every surface', () => {
    expect(markdownToMrkdwn(MIGRATION_PLAN)).toContain(
      '<https://wiki.example.com/runbooks/sessions?v=2&amp;x=1|the runbook>',
    )
    expect(markdownToDiscord(MIGRATION_PLAN)).toContain(
      '[the runbook](https://wiki.example.com/runbooks/sessions?v=2&x=1)',
    )
    expect(markdownToHtml(MIGRATION_PLAN)).toContain(
      '<a href="https://wiki.example.com/runbooks/sessions?v=2&amp;x=1" target="_blank" rel="noopener noreferrer nofollow">the runbook</a>',
    )
  })
})

describe('the corpus on real cards, within every platform limit', () => {
  it.each(Object.entries(CORPUS))('%s', (_name, plan) => {
    const card = newCard({
      callId: 'plan-1',
      agentId: 'agent',
      now: 0,
      questions: [
        {
          id: 'plan',
          question: 'Approve this plan?',
          detail: plan,
          options: [{ label: 'Approve' }, { label: 'Revise' }],
          intent: { kind: 'plan-review', approve: 'Approve' },
        },
      ],
    })
    const slack = cardToMessages(card)
    for (const m of slack) {
      expect(checkMessage({ channel: 'C1', text: m.text, blocks: m.blocks } as never)).toBeUndefined()
      expect(mentionsIn(m.blocks)).toEqual([])
    }
    for (const m of cardToDiscordMessages(card)) expect(validateMessage(m)).toEqual([])
  })
})

describe('plain text skips the parser and gets the tree the parser gives', () => {
  // Strip what only the parser adds (source positions) before comparing trees.
  const bare = (node: unknown): unknown =>
    Array.isArray(node)
      ? node.map(bare)
      : node && typeof node === 'object'
        ? Object.fromEntries(
            Object.entries(node)
              .filter(([k]) => k !== 'position')
              .map(([k, v]) => [k, bare(v)]),
          )
        : node
  const parsed = (text: string) =>
    bare(fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }))

  it('for every string of the plain alphabet, and near misses that must be parsed', () => {
    // A seeded generator over the plain alphabet plus every markup character, so both paths run.
    let seed = 7
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed
    }
    const plainChars = 'aZé漢1 ,;?\'"/%-0'
    const markup = '.@*_~`#|<>[]()!&:=+\\\t\n'
    // Plain questions, and one line of each construct a plain-looking line could hide.
    const samples = ['Ship build r0-12?', 'Deploy 3 services, 50% now?', "Isn't it 'done'?", 'a #1 - b']
    samples.push('1. item', 'x _a_', 'x *a*', 'x ~~a~~', 'x `a`', 'a &amp; b', 'a <b> c', 'x [a] b')
    samples.push('mail a@b.co', 'see http://x.io', 'see www.x.io', 'a\\-b', 'x ![a](b) c', 'a | b')
    for (let i = 0; i < 6000; i++) {
      const chars = Array.from({ length: 1 + (next() % 12) }, () => plainChars[next() % plainChars.length])
      // Two in three samples get one markup character once or twice, anywhere.
      const mark = markup[next() % markup.length] as string
      const times = next() % 3
      for (let t = 0; t < times; t++) chars.splice(next() % (chars.length + 1), 0, mark)
      samples.push(chars.join(''))
    }
    // Trees with nodes the normaliser rewrites (raw HTML, links, references) are not compared:
    // none of them can come from a plain string (no `<`, `.`, `:`, `@` or `[`).
    const rewritten = /"type":"(html|definition|link|image|linkReference|imageReference)"/
    let plain = 0
    for (const text of samples) {
      const tree = bare(parseMarkdown(text))
      const expected = parsed(text)
      if (rewritten.test(JSON.stringify(expected))) continue
      if (!/[.@*_~`#|<>[\]()!&:=+\\\t\n]/.test(text) && text.trim() === text) plain++
      expect(tree, JSON.stringify(text)).toEqual(expected)
    }
    expect(plain).toBeGreaterThan(200)
  })
})
