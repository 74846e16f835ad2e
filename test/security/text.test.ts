/**
 * What people read (issue 27). Agent text never reaches Slack, Discord or the inbox in that
 * platform's own control syntax, and a link whose text names another host shows the real one.
 * The attack rows render real cards and modals; the property tests feed the three markdown
 * printers (and whole cards) random text full of those sequences, with markdown around them.
 *
 * The link rule is checked by an oracle of its own here, not by the code under test: for every
 * link a surface prints, if its text names one of the test's hosts other than where the link
 * goes, the text ends with ` (→ <real destination>)`, and any such note tells the truth.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { markdownToDiscord } from '../../adapters/discord/markdown.js'
import {
  declineModal as discordDeclineModal,
  otherModal as discordOtherModal,
} from '../../adapters/discord/modal.js'
import { noticeMessage as discordNotice } from '../../adapters/discord/notice.js'
import { cardToDiscordMessages, type DiscordMessage } from '../../adapters/discord/render.js'
import { splitMarkdown } from '../../adapters/discord/text.js'
import { markdownToMrkdwn } from '../../adapters/slack/markdown.js'
import { declineModal, noticeModal, reasonModal } from '../../adapters/slack/modal.js'
import { noticeMessage as slackNotice } from '../../adapters/slack/notice.js'
import { cardToMessages } from '../../adapters/slack/render.js'
import { escapeMrkdwnCut, splitMrkdwn, truncateMrkdwn } from '../../adapters/slack/text.js'
import { markdownToHtml } from '../../adapters/web/markdown.js'
import { cardToWebView } from '../../adapters/web/view.js'
import { newCard } from '../../src/card/lifecycle.js'
import type { CardState } from '../../src/card/types.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { validateMessage } from '../fakes/discord/validate.js'
import { checkMessage, checkView, mentionsIn } from '../fakes/slack/validate.js'

const SEED = 20261202
const DECEIVE = '[https://good.example](https://evil.example/login)'
const SLACK_LINK = '<https://evil.example/raw|raw link>'
const SLACK_MAIL = '<mailto:x@evil.example|mail>'

// ---------------------------------------------------------------------------------------------
// Rendering real cards and collecting what each surface shows.

function planCard(detail: string, question = 'Approve this plan?', extra: Partial<AskUserQuestionItem> = {}) {
  return newCard({
    callId: 'plan-1',
    agentId: 'agent',
    now: 0,
    questions: [
      {
        id: 'plan',
        question,
        detail,
        options: [{ label: 'Approve' }, { label: 'Revise' }],
        intent: { kind: 'plan-review', approve: 'Approve' },
        ...extra,
      },
    ],
  })
}

/** Every mrkdwn string of a Slack payload (and its top-level `text`): what Slack parses for `<…>`. */
function slackMrkdwn(value: unknown): string[] {
  const out: string[] = []
  const walk = (v: unknown, key?: string, mrkdwn = true) => {
    if (typeof v === 'string') {
      if (key === 'text' && mrkdwn) out.push(v)
    } else if (Array.isArray(v)) for (const x of v) walk(x, key, mrkdwn)
    else if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>
      for (const [k, x] of Object.entries(o)) walk(x, k, o.type !== 'plain_text')
    }
  }
  walk(value)
  return out
}

const slackOf = (card: CardState) => slackMrkdwn(cardToMessages(card, { locale: 'en' })).join('\n')

/**
 * The texts of Discord messages: content, embed descriptions and field values (rendered as
 * markdown, links included) and, unless `markdownOnly`, titles, author names and footers (plain
 * text on Discord, checked for mentions all the same).
 */
function discordTexts(messages: readonly DiscordMessage[], markdownOnly = false): string[] {
  const out: string[] = []
  for (const m of messages) {
    out.push(m.content)
    for (const e of m.embeds) {
      out.push(e.description ?? '')
      for (const f of e.fields ?? []) out.push(f.value)
      if (!markdownOnly) out.push(e.title ?? '', e.author?.name ?? '', e.footer?.text ?? '')
      if (!markdownOnly) for (const f of e.fields ?? []) out.push(f.name)
    }
  }
  return out
}

const discordOf = (card: CardState, markdownOnly = false) =>
  discordTexts(cardToDiscordMessages(card), markdownOnly).join('\n\n')
const webOf = (card: CardState) =>
  cardToWebView(card)
    .questions.map((q) => q.detailHtml ?? '')
    .join('\n')

// ---------------------------------------------------------------------------------------------
// Reading links back out of each surface's output.

interface ShownLink {
  href: string
  text: string
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" }
const decode = (s: string) => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ENTITIES[e] ?? '')

/** Slack links: `<url|text>` (dates and mentions start with `!` or `@` and are not links). */
function slackLinks(mrkdwn: string): ShownLink[] {
  return [...mrkdwn.matchAll(/<([^<>|!@#][^<>|]*)\|([^<>]*)>/g)].map((m) => ({
    href: decode(m[1] ?? ''),
    text: decode(m[2] ?? '').replace(/¦/g, '|'),
  }))
}

/** Discord masked links outside code (code shows `[a](b)` as typed), text by text (a link never spans two). */
function discordLinks(markdown: string | readonly string[]): ShownLink[] {
  if (typeof markdown !== 'string') return markdown.flatMap((m) => discordLinks(m))
  const prose = markdown.replace(/```[\s\S]*?```|`[^`\n]*`/g, '')
  return [...prose.matchAll(/(?<!\\)\[((?:\\[\s\S]|[^\\\]])*)\]\(([^()\s]+)\)/g)].map((m) => ({
    href: m[2] ?? '',
    text: (m[1] ?? '').replace(/\\([\s\S])/g, '$1'),
  }))
}

/** Inbox links that leave the page (footnote links `#…` stay on it). */
function htmlLinks(html: string): ShownLink[] {
  return [...html.matchAll(/<a href="([^"#][^"]*)"[^>]*>([\s\S]*?)<\/a>/g)].map((m) => ({
    href: decode(m[1] ?? ''),
    text: decode((m[2] ?? '').replace(/<[^>]*>/g, '')),
  }))
}

// ---------------------------------------------------------------------------------------------
// The link rule's oracle.

const HOSTS = ['good.example', 'evil.example', 'bank.test'] as const

/** Where a link goes: hosts to compare, and what the note must say (the host, or the mail addresses). */
function realDestination(href: string): { hosts: string[]; shown: string } {
  const url = new URL(href)
  if (url.protocol === 'mailto:') {
    const addresses = decodeURIComponent(url.pathname).toLowerCase()
    return { hosts: addresses.split(',').map((a) => a.slice(a.lastIndexOf('@') + 1)), shown: addresses }
  }
  return { hosts: [url.hostname], shown: url.hostname }
}

/** The text names `host` as a host: not inside a longer name, not as an address's local part. */
const names = (text: string, host: string) =>
  new RegExp(`(?<![\\p{L}\\p{N}_.-])${host.replace(/\./g, '\\.')}(?![\\p{L}\\p{N}_@-])`, 'iu').test(
    text.replace(/\u200b/g, ''),
  )

function expectHonest(link: ShownLink, surface: string): void {
  const real = realDestination(link.href)
  const note = / \(→ ([^()]+)\)$/.exec(link.text)
  const before = note ? link.text.slice(0, note.index) : link.text
  const where = `${surface} link ${JSON.stringify(link)}`
  if (note) expect(note[1], where).toBe(real.shown)
  for (const host of HOSTS)
    if (names(before, host) && !real.hosts.includes(host)) expect(note?.[1], where).toBe(real.shown)
}

// ---------------------------------------------------------------------------------------------
// What must never appear.

/** Slack: the only `<` left starts a link or a date we built (`<http…|…>`, `<mailto:…|…>`, `<!date^…|…>`). */
function expectSlackSafe(mrkdwn: string): void {
  for (const m of mrkdwn.matchAll(/</g)) {
    const rest = mrkdwn.slice(m.index)
    expect(rest, mrkdwn).toMatch(/^<(?:(?:https?|mailto):[^\s<>|]+|!date\^\d+\^[^<>|]*)\|[^<>]*>/)
  }
  // Outside our links' URLs (Slack reads no broadcast there), no bare broadcast word.
  expect(mrkdwn.replace(/<[^<>|]*\|/g, '<|')).not.toMatch(/@(channel|here|everyone)\b/i)
}

/** Discord: no mention, slash command, emoji, timestamp or guild link, and no bare broadcast. */
function expectDiscordSafe(markdown: string): void {
  expect(markdown).not.toMatch(/<\\?[@#]|<\/[^<>\n]*:\d|<a?:\w+:\d|<t:-?\d|<id:/i)
  // Outside our masked links' URLs (Discord renders no mention there), no bare broadcast.
  expect(markdown.replace(/\]\([^()\s]*\)/g, '](…)')).not.toMatch(/@(everyone|here)/i)
}

/** The tags and attributes the inbox's sanitized markdown may contain; anything else came from agent text. */
const HTML_TAGS = new Set(
  'p a strong em del code pre ul ol li h2 h3 h4 h5 h6 blockquote hr br table thead tbody tr th td input sup section'.split(
    ' ',
  ),
)
const HTML_ATTRIBUTES = new Set(
  'href title target rel class id type checked disabled start align data-footnotes data-footnote-ref data-footnote-backref aria-describedby aria-label'.split(
    ' ',
  ),
)

/** Every `<` left in the HTML opens one of our tags (agent text's `<` is always `&lt;`). */
function expectHtmlSafe(html: string): void {
  for (const m of html.matchAll(/</g)) {
    const tag = /^<\/?([a-z][a-z0-9]*)((?:\s+[a-z-]+(?:="[^"<>]*")?)*)\s*\/?>/.exec(html.slice(m.index))
    expect(tag, html).not.toBeNull()
    expect(HTML_TAGS, html).toContain(tag?.[1])
    for (const [, name, value] of (tag?.[2] ?? '').matchAll(/([a-z-]+)(?:="([^"]*)")?/g)) {
      expect(HTML_ATTRIBUTES, html).toContain(name)
      if (name === 'href' && !value?.startsWith('#'))
        expect(decode(value ?? ''), html).toMatch(/^(https?|mailto):/)
    }
  }
}

// ---------------------------------------------------------------------------------------------

describe('attack rows: each failed before this change', () => {
  it('a link whose text is https://good.example but goes to evil.example shows evil.example, on every surface', () => {
    const card = planCard(`Log in at ${DECEIVE} first.`)
    expect(slackOf(card)).toContain('<https://evil.example/login|https://good.example (→ evil.example)>')
    expect(discordOf(card)).toContain(
      '[https://good.example \\(→ evil.example\\)](https://evil.example/login)',
    )
    expect(webOf(card)).toMatch(
      /href="https:\/\/evil\.example\/login"[^>]*>https:\/\/good\.example \(→ evil\.example\)<\/a>/,
    )
    for (const l of slackLinks(slackOf(card))) expectHonest(l, 'slack')
    for (const l of discordLinks(discordTexts(cardToDiscordMessages(card), true))) expectHonest(l, 'discord')
    for (const l of htmlLinks(webOf(card))) expectHonest(l, 'web')
  })

  it('a bare domain, an address, or a host inside other words also shows the real host', () => {
    const md = [
      '[good.example](https://evil.example/)',
      '[Open good.example now](https://evil.example/)',
      '[help@good.example](mailto:help@evil.example)',
      '[gооgle.com](https://google.com/)', // Cyrillic о: a look-alike of the real host
    ].join('\n\n')
    const slack = markdownToMrkdwn(md)
    expect(slack).toContain('|good.example (→ evil.example)>')
    expect(slack).toContain('|Open good.example now (→ evil.example)>')
    expect(slack).toContain('|help@good.example (→ help@evil.example)>')
    expect(slack).toContain('|gооgle.com (→ google.com)>')
  })

  it.each([
    [SLACK_LINK, '&lt;https://evil.example/raw|raw link&gt;'],
    [SLACK_MAIL, '&lt;mailto:x@evil.example|mail&gt;'],
    ['<https://evil.example/raw|raw>', '&lt;https://evil.example/raw|raw&gt;'],
  ])('Slack link syntax %s in a plan is shown as typed, never a link', (syntax, shown) => {
    const card = planCard(`Download ${syntax} now.`)
    const slack = slackOf(card)
    expect(slack).toContain(shown)
    expect(slackLinks(slack).filter((l) => l.href.includes('evil.example'))).toEqual([])
    expectSlackSafe(slack)
    // The other surfaces show the same text as typed.
    expect(discordLinks(discordOf(card)).filter((l) => l.href.includes('evil.example'))).toEqual([])
    expect(htmlLinks(webOf(card)).filter((l) => l.href.includes('evil.example'))).toEqual([])
    expect(webOf(card)).toContain(decode(shown).replace(/</g, '&lt;'))
  })

  it('Discord slash-command mentions, emoji and timestamps in agent text stay text', () => {
    const evil = 'Run </deploy prod:123456789> or <:party:42> <a:spin:43> by <t:2000000000:R> <id:customize>'
    const card = planCard(evil, evil, { header: evil })
    expectDiscordSafe(discordOf(card))
    expectDiscordSafe(markdownToDiscord(evil))
  })

  it('on Discord a long question and option descriptions follow the link rule too (they were raw markdown)', () => {
    const card = newCard({
      callId: 'q-1',
      agentId: 'agent',
      now: 0,
      questions: [
        {
          id: 'q',
          question: `Is this the right login page?\n${DECEIVE}`,
          options: [
            { label: 'Yes', description: `It is ${DECEIVE}` },
            { label: 'No', description: 'Something else' },
          ],
        },
      ],
    })
    const discord = discordOf(card, true)
    const links = discordLinks(discordTexts(cardToDiscordMessages(card), true))
    expect(links.length).toBeGreaterThan(0)
    for (const l of links) expectHonest(l, 'discord')
    expect(discord).toContain('[https://good.example \\(→ evil.example\\)](https://evil.example/login)')
  })

  it('a Discord modal quoting the question (a text display renders markdown) follows the link rule', () => {
    const card = planCard('The plan.', `Approve the login change at ${DECEIVE}?`)
    for (const modal of [discordDeclineModal(card, 0), discordOtherModal(card, 0)]) {
      const shown = JSON.stringify(modal)
      const texts = (modal.components as { content?: string }[]).map((c) => c.content ?? '')
      expect(texts.join('\n')).toContain(
        '[https://good.example \\(→ evil.example\\)](https://evil.example/login)',
      )
      for (const l of discordLinks(texts)) expectHonest(l, 'discord modal')
      expectDiscordSafe(shown)
    }
  })

  it('a Slack modal quoting a question of 2,800 "<" stays within the 3,000-character section limit', () => {
    const card = newCard({
      callId: 'a-1',
      agentId: 'agent',
      now: 0,
      questions: [
        {
          id: 'ok',
          question: '<'.repeat(2800),
          options: [{ label: 'Approve' }, { label: 'Reject' }],
          intent: { kind: 'approval', approve: 'Approve', reject: 'Reject' },
        },
      ],
    })
    for (const view of [
      declineModal(card),
      reasonModal(card, 'approve'),
      noticeModal(card, '&'.repeat(2990)),
    ]) {
      expect(checkView(view)).toBeUndefined()
      for (const text of slackMrkdwn(view)) {
        expect(text).not.toMatch(/&[a-z]*…?$|&[a-z]*[^a-z;]/) // no entity cut in half
        expectSlackSafe(text)
      }
    }
  })

  it('a link longer than a Slack section is never cut into a broken <…', () => {
    const card = planCard(`See [the docs](https://good.example/${'p'.repeat(6000)}) and ${SLACK_LINK}.`)
    for (const m of cardToMessages(card)) {
      expect(checkMessage({ channel: 'C1', text: m.text, blocks: m.blocks } as never)).toBeUndefined()
      for (const text of slackMrkdwn(m)) expectSlackSafe(text)
    }
  })
})

describe('what held, and must keep holding', () => {
  const SLACK_EVIL = '<!channel> <!here> <!everyone> <@U0BOSS> <#C0GEN|general> <!subteam^S0ALL> @channel'
  const DISCORD_EVIL = '<@123> <@!123> <@&456> <#789> @everyone @here'

  it('Slack mentions and broadcasts in every text field stay escaped', () => {
    const card = planCard(SLACK_EVIL, SLACK_EVIL, { header: SLACK_EVIL })
    const messages = cardToMessages(card, { locale: 'en' })
    expect(mentionsIn(messages)).toEqual([])
    for (const text of slackMrkdwn(messages)) expectSlackSafe(text)
  })

  it('Discord mentions in every text field stay escaped and allowed_mentions parses nothing', () => {
    const card = planCard(DISCORD_EVIL, DISCORD_EVIL, { header: DISCORD_EVIL })
    const messages = cardToDiscordMessages(card)
    expectDiscordSafe(discordTexts(messages).join('\n'))
    for (const m of messages) {
      expect(m.allowed_mentions).toEqual({ parse: [] })
      expect(validateMessage(m)).toEqual([])
    }
  })

  it('raw HTML in a plan is shown as text in the inbox', () => {
    const html = webOf(
      planCard('<script>alert(1)</script> <img src=x onerror=alert(1)> <a href="javascript:x">y</a>'),
    )
    expectHtmlSafe(html)
    expect(html).toContain('&lt;script>')
  })

  it('footnotes keep their page-local links, and a link inside one follows the link rule', () => {
    const html = webOf(planCard(`Step one[^1].\n\n[^1]: See ${DECEIVE}.`))
    expectHtmlSafe(html)
    expect(html).toContain('href="#user-content-fn-1"')
    const links = htmlLinks(html)
    expect(links).toHaveLength(1)
    for (const l of links) expectHonest(l, 'web')
  })
})

// ---------------------------------------------------------------------------------------------
// Property tests.

const host = fc.constantFrom(...HOSTS)
const label = fc.oneof(
  host,
  host.map((h) => `https://${h}`),
  host.map((h) => `x@${h}`),
  host.map((h) => `Open ${h} now`),
  fc.constantFrom('the docs', 'raw link', 'mail', '', '→', '(→ good.example)', '**bold**', '`code`'),
)
const CONTROL = [
  '<!channel>',
  '<!here>',
  '<!everyone>',
  '<!subteam^S0ALL>',
  '<!date^1700000000^{date}|today>',
  '<@U0BOSS>',
  '<#C0GEN|general>',
  '<@123>',
  '<@!123>',
  '<@&456>',
  '<#789>',
  '</deploy prod:123>',
  '<:party:42>',
  '<a:spin:43>',
  '<t:2000000000:R>',
  '<id:customize>',
  '@everyone',
  '@here',
  '@channel',
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '&lt;!channel&gt;',
  '&#60;@123&#62;',
  '\\<@123>',
]
const MARKUP = ['<', '>', '|', '&', '[', ']', '(', ')', '`', '```\n', '**', '*', '_', '~~', '\n', '\n\n']
const BLOCKS = [
  '# ',
  '- ',
  '1. ',
  '> ',
  '| a | b |\n|---|---|\n| ',
  '\n    ',
  '[^1]',
  '\n[^1]: ',
  '\n[r]: https://evil.example/r\n',
]
const fragment = fc.oneof(
  fc.constantFrom(...CONTROL),
  fc.constantFrom(...MARKUP, ...BLOCKS, ' ', '\u200b', '→'),
  host.map((h) => `https://${h}/p`),
  fc.tuple(host, label).map(([h, l]) => `<https://${h}/raw|${l}>`),
  host.map((h) => `<mailto:x@${h}|mail>`),
  fc.tuple(label, host).map(([l, h]) => `[${l}](https://${h}/login)`),
  fc.tuple(label, host).map(([l, h]) => `[${l}](mailto:a@${h})`),
  fc.tuple(label, host).map(([l, h]) => `![${l}](https://${h}/i.png)`),
  fc.tuple(label, host).map(([l, h]) => `[${l}](https://${h}@evil.example/)`),
  label.map((l) => `[${l}][r]`),
  fc.string({ maxLength: 6 }),
)
const agentText = fc.array(fragment, { maxLength: 14 }).map((parts) => parts.join(''))

describe('property: the markdown printers never emit agent control syntax', () => {
  it('Slack mrkdwn, Discord markdown and the inbox HTML, with the link rule on every link', () => {
    fc.assert(
      fc.property(agentText, (text) => {
        const slack = markdownToMrkdwn(text)
        expectSlackSafe(slack)
        for (const l of slackLinks(slack)) expectHonest(l, 'slack')
        const discord = markdownToDiscord(text)
        expectDiscordSafe(discord)
        for (const l of discordLinks(discord)) expectHonest(l, 'discord')
        const html = markdownToHtml(text)
        expectHtmlSafe(html)
        for (const l of htmlLinks(html)) expectHonest(l, 'web')
      }),
      { seed: SEED, numRuns: 1000 },
    )
  })

  it('whole cards: every text field (question, header, detail, labels, descriptions) on every surface', () => {
    const long = fc.array(fragment, { minLength: 30, maxLength: 80 }).map((parts) => parts.join(''))
    const field = fc.oneof({ weight: 4, arbitrary: agentText }, { weight: 1, arbitrary: long })
    const item = fc.record({
      question: field,
      header: field,
      detail: field,
      labels: fc.array(field, { minLength: 2, maxLength: 5 }),
      description: field,
    })
    fc.assert(
      fc.property(item, (q) => {
        const labels = [...new Set(q.labels.map((l, i) => `${i} ${l}`))]
        const card = newCard({
          callId: 'c-1',
          agentId: 'agent',
          now: 0,
          questions: [
            {
              id: 'q',
              question: q.question || 'q',
              header: q.header,
              detail: q.detail,
              options: labels.map((l) => ({ label: l, description: q.description })),
            },
          ],
        })
        const slack = cardToMessages(card, { locale: 'en' })
        expect(mentionsIn(slack)).toEqual([])
        for (const m of slack) {
          expect(checkMessage({ channel: 'C1', text: m.text, blocks: m.blocks } as never)).toBeUndefined()
          for (const text of slackMrkdwn(m)) {
            expectSlackSafe(text)
            for (const l of slackLinks(text)) expectHonest(l, 'slack')
          }
        }
        const discord = cardToDiscordMessages(card)
        for (const m of discord) {
          expect(m.allowed_mentions).toEqual({ parse: [] })
          expect(validateMessage(m)).toEqual([])
        }
        expectDiscordSafe(discordTexts(discord).join('\n'))
        for (const l of discordLinks(discordTexts(discord, true))) expectHonest(l, 'discord')
        const modal = discordOtherModal(card, 0)
        const modalTexts = (modal.components as { content?: string }[]).map((c) => c.content ?? '')
        expectDiscordSafe([modal.title, ...modalTexts].join('\n'))
        for (const l of discordLinks(modalTexts)) expectHonest(l, 'discord modal')
        const web = webOf(card)
        expectHtmlSafe(web)
        for (const l of htmlLinks(web)) expectHonest(l, 'web')
      }),
      { seed: SEED, numRuns: 120 },
    )
  })
})

describe('property: notices', () => {
  it('a notice title, text and agent id reach Slack and Discord escaped, links honest', () => {
    const long = fc.array(fragment, { minLength: 30, maxLength: 200 }).map((parts) => parts.join(''))
    const notice = fc.record({ title: agentText, text: fc.oneof(agentText, long), agentId: agentText })
    fc.assert(
      fc.property(notice, ({ title, text, agentId }) => {
        const n = { title, text, agentId: agentId || 'agent', id: 'n-1', at: 0 }
        const slack = slackNotice(n)
        expect(mentionsIn(slack)).toEqual([])
        expect(
          checkMessage({ channel: 'C1', text: slack.text, blocks: slack.blocks } as never),
        ).toBeUndefined()
        for (const t of slackMrkdwn(slack)) {
          expectSlackSafe(t)
          for (const l of slackLinks(t)) expectHonest(l, 'slack')
        }
        const discord = discordNotice(n)
        expect(discord.allowed_mentions).toEqual({ parse: [] })
        expect(validateMessage(discord)).toEqual([])
        expectDiscordSafe(discordTexts([discord]).join('\n'))
        for (const l of discordLinks(discordTexts([discord], true))) expectHonest(l, 'discord')
      }),
      { seed: SEED, numRuns: 200 },
    )
  })
})

describe('property: cutting to a limit never splits an escape', () => {
  const dense = fc
    .array(fc.oneof(fc.constantFrom(...CONTROL, '<', '&', '>', ' ', '\n'), fragment), { maxLength: 60 })
    .map((parts) => parts.join(''))

  it('Slack: every chunk and every cut is within the limit, whole entities, whole links', () => {
    fc.assert(
      fc.property(dense, fc.integer({ min: 18, max: 300 }), (text, max) => {
        const mrkdwn = markdownToMrkdwn(text)
        const chunks = splitMrkdwn(mrkdwn, max)
        for (const chunk of [...chunks, truncateMrkdwn(mrkdwn, max), escapeMrkdwnCut(text, max)]) {
          expect(chunk.length).toBeLessThanOrEqual(max)
          // Every `&` starts a whole entity, so no chunk ends in (or the next starts with) half of one.
          expect(chunk).not.toMatch(/&(?!amp;|lt;|gt;)/)
          expectSlackSafe(chunk)
        }
      }),
      { seed: SEED, numRuns: 800 },
    )
  })

  it('Discord: every chunk of escaped markdown stays within the limit and escaped', () => {
    fc.assert(
      fc.property(dense, fc.integer({ min: 40, max: 300 }), (text, max) => {
        for (const chunk of splitMarkdown(markdownToDiscord(text), max)) {
          expect(chunk.length).toBeLessThanOrEqual(max)
          expectDiscordSafe(chunk)
          // A cut never reopens code as live markup: every link a chunk shows is honest.
          for (const l of discordLinks(chunk)) expectHonest(l, 'discord chunk')
        }
      }),
      { seed: SEED, numRuns: 800 },
    )
  })
})

describe('code cut out of its fence stays text', () => {
  it('a quoted Discord code block split across chunks shows no live masked link', () => {
    const md = `> \`\`\`\n> ${'x '.repeat(30)}\n> ${DECEIVE}\n> \`\`\``
    for (const max of [60, 80, 100, 120]) {
      for (const chunk of splitMarkdown(markdownToDiscord(md), max)) {
        // Whatever the chunk renders as, no link in it may hide where it goes.
        const links = [...chunk.matchAll(/\[([^\]]*)\]\(([^()\s]+)\)/g)]
        for (const [, text = '', href = ''] of links) expectHonest({ text, href }, `discord chunk of ${max}`)
      }
    }
  })
})

describe('a link that fits stays a link across a cut', () => {
  it('a link right after the cut point is kept whole in the next chunk, not degraded', () => {
    // The second chunk starts with a space and the link, and the best space to cut at is inside it.
    const link = '<https://good.example/d|the docs about this>'
    const chunks = splitMrkdwn(`${'a'.repeat(60)} ${link}${'y'.repeat(100)}`, 70)
    expect(chunks.some((c) => c.includes(link))).toBe(true)
    for (const c of chunks) expectSlackSafe(c)
  })
})
