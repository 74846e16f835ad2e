/**
 * Hostile agent text on every surface: raw HTML, javascript: links, mention and broadcast syntax,
 * bidi override characters and 200,000 characters render safely and within every platform limit.
 */
import { describe, expect, it } from 'vitest'
import { markdownToDiscord } from '../../adapters/discord/markdown.js'
import { cardToDiscordMessages } from '../../adapters/discord/render.js'
import { markdownToMrkdwn } from '../../adapters/slack/markdown.js'
import { cardToMessages } from '../../adapters/slack/render.js'
import { withCardLabels } from '../../adapters/web/actions.js'
import { markdownToHtml } from '../../adapters/web/markdown.js'
import { cardToWebView } from '../../adapters/web/view.js'
import { cardRef } from '../../src/card/codec.js'
import { newCard } from '../../src/card/lifecycle.js'
import { resolveComponent } from '../../src/card/resolve.js'
import type { CardState } from '../../src/card/types.js'
import { UserQuestionError } from '../../src/protocol/errors.js'
import { LIMITS } from '../../src/protocol/schemas.js'
import type { AskUserQuestionItem } from '../../src/protocol/types.js'
import { checkQuestions } from '../../src/protocol/validate.js'
import { validateMessage } from '../fakes/discord/validate.js'
import { cardToMemoryMessage } from '../fakes/memory-adapter.js'
import { checkMessage, mentionsIn } from '../fakes/slack/validate.js'
import { LONG_PLAN } from '../fixtures/plans.js'

const BIDI = /[\u202A-\u202E\u2066-\u2069]/

function card(q: Partial<AskUserQuestionItem>, patch: Partial<CardState> = {}): CardState {
  const question: AskUserQuestionItem = {
    id: 'q',
    question: 'Proceed?',
    options: [{ label: 'Yes' }, { label: 'No' }],
    ...q,
  }
  return {
    ...newCard({
      callId: 'c1',
      agentId: 'agent',
      questions: [question, { id: 'q2', question: 'And?' }],
      now: 0,
    }),
    ...patch,
  }
}

/** Every surface's output for a card, each checked against its platform's limits. */
function renderEverywhere(c: CardState) {
  const slack = cardToMessages(c)
  for (const m of slack) {
    expect(checkMessage({ channel: 'C1', text: m.text, blocks: m.blocks } as never)).toBeUndefined()
  }
  const discord = cardToDiscordMessages(c)
  for (const m of discord) expect(validateMessage(m)).toEqual([])
  const web = cardToWebView(c)
  const memory = cardToMemoryMessage(c)
  return { slack, discord, web, memory, all: JSON.stringify([slack, discord, web, memory]) }
}

describe('raw HTML', () => {
  const html =
    '<script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:x">y</a><iframe></iframe>'
  it('shows as text, never as markup', () => {
    const out = markdownToHtml(html)
    expect(out).not.toMatch(/<(script|img|iframe|a)\b/i)
    expect(out).toContain('&lt;script>alert(1)&lt;/script>')
    expect(markdownToMrkdwn(html)).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(markdownToDiscord(`${html}\n\n<div>\n\n**x**\n\n</div>`)).toContain('**x**')
  })
})

describe('links with unsafe schemes', () => {
  const links = [
    '[click](javascript:alert(1))',
    '[click](JAVASCRIPT:alert(1))',
    '[click](  javascript:alert(1) )',
    '[click](data:text/html;base64,PHNjcmlwdD4=)',
    '[click](vbscript:msgbox)',
    '<javascript:alert(1)>',
    '[click][ref]\n\n[ref]: javascript:alert(1)',
    '![img](javascript:alert(1))',
    '[click](/relative/path)',
  ]
  it.each(links)('%s is no link anywhere', (md) => {
    expect(markdownToHtml(md)).not.toMatch(/href=/)
    expect(markdownToMrkdwn(md)).not.toMatch(/<[a-z]+:/i)
    expect(markdownToDiscord(md)).not.toMatch(/\]\((?!https?:|mailto:)/i)
  })
  it('http, https and mailto stay links', () => {
    expect(
      markdownToHtml('[a](https://x.test) [b](http://x.test) [c](mailto:a@x.test)').match(/href=/g),
    ).toHaveLength(3)
  })
})

describe('mentions and broadcasts', () => {
  const pings =
    '<!channel> <!here> <!everyone> @channel @here @everyone <@U0123ABCD> <@W0123> <!subteam^S0123|team> <@&123456789012345678> <@!123456789012345678> <#123456789012345678>'
  it('agent text pings nobody on any surface, in detail, labels, header and names', () => {
    const c = card(
      {
        question: pings,
        header: pings.slice(0, 100),
        detail: `# ${pings}\n\n- ${pings}\n\n| a |\n|---|\n| ${pings} |`,
        options: [{ label: pings }, { label: 'No' }],
      },
      { drafts: { q2: { selected: [], custom: pings, by: { platform: 'web', userId: 'x', name: pings } } } },
    )
    const { slack, discord } = renderEverywhere(c)
    expect(slack.flatMap((m) => mentionsIn(m.blocks))).toEqual([])
    for (const m of discord) {
      expect(m.allowed_mentions).toEqual({ parse: [] })
      const text = JSON.stringify([m.content, m.embeds, m.components])
      expect(text).not.toMatch(/(?<!\u200b)@(everyone|here)/)
      expect(text).not.toMatch(/<(@[!&]?|#)\d/)
    }
  })
  it('in markdown output too', () => {
    expect(markdownToMrkdwn(pings)).not.toMatch(/<[!@#]/)
    expect(markdownToMrkdwn(pings)).not.toMatch(/@(channel|here|everyone)/)
    expect(markdownToDiscord(pings)).not.toMatch(/<(@[!&]?|#)\d|(?<!\u200b)@(everyone|here)/)
  })
})

describe('bidi override and isolate characters', () => {
  const evil = 'Approve\u202Egpj.exe\u202C \u2066x\u2069 \u202Ay\u202B\u202D\u2067\u2068'
  it('never reach any surface: labels, headers, questions, detail, names, answers', () => {
    const c = card(
      {
        question: evil,
        header: evil,
        detail: `**${evil}** [${evil}](https://x.test)\n\n| ${evil} |\n|-|\n| ${evil} |`,
        options: [{ label: evil, description: evil }, { label: 'No' }],
      },
      { drafts: { q2: { selected: [], custom: evil, by: { platform: 'web', userId: 'u', name: evil } } } },
    )
    const { all } = renderEverywhere(c)
    expect(all).not.toMatch(BIDI)
    expect(markdownToHtml(evil)).not.toMatch(BIDI)
    const answered = renderEverywhere({
      ...c,
      status: 'answered',
      result: {
        answers: [
          { id: 'q', selected: [evil] },
          { id: 'q2', selected: [], custom: evil },
        ],
      },
      answeredBy: { platform: 'slack', userId: 'U1', name: evil },
    })
    expect(answered.all).not.toMatch(BIDI)
  })
  it('an option whose label had them can still be picked: the action names the real label', () => {
    const c = card({ options: [{ label: evil }, { label: 'No' }] })
    expect(resolveComponent({ ...cardRef(c), verb: 'choose', q: 0, o: 0 }, {}, c)).toEqual({
      kind: 'action',
      action: { type: 'choose', questionId: 'q', label: evil },
    })
    // The inbox page sends the label it showed (cleaned); the adapter maps it back.
    const shown = cardToWebView(c).questions[0]?.controls.find((x) => x.kind === 'options')
    const label = shown?.kind === 'options' ? (shown.options[0]?.label ?? '') : ''
    expect(label).not.toMatch(BIDI)
    expect(withCardLabels({ type: 'choose', questionId: 'q', label }, c)).toEqual({
      type: 'choose',
      questionId: 'q',
      label: evil,
    })
  })
})

describe('200,000 characters', () => {
  const huge = (n: number) => {
    let text = `${LONG_PLAN}\n\n`
    while (text.length < n)
      text += `Paragraph with **bold**, \`code\` and <b>html</b> @here. ${'word '.repeat(40)}\n\n`
    return text.slice(0, n)
  }
  it('a detail at the protocol limit renders on every surface within their limits, nothing cut', {
    timeout: 120_000,
  }, () => {
    const detail = huge(LIMITS.detailLength)
    expect(detail).toHaveLength(200_000)
    const c = card({ detail })
    const { slack, discord, web } = renderEverywhere(c)
    expect(slack.length).toBeGreaterThan(10)
    expect(discord.length).toBeGreaterThan(10)
    // The last words of the detail are still shown on every surface.
    const tail = detail
      .trimEnd()
      .split(/\s+/)
      .slice(-3)
      .join(' ')
      .replace(/[*`<>@]/g, '')
    expect(JSON.stringify(slack)).toContain(tail.split(' ').at(-1))
    expect(JSON.stringify(discord)).toContain(tail.split(' ').at(-1))
    expect(web.questions[0]?.detailHtml).not.toMatch(/<b>/)
  })
  it('one character past the limit is refused with a coded error before any surface sees it', () => {
    const questions = [{ id: 'q', question: 'Proceed?', detail: 'x'.repeat(LIMITS.detailLength + 1) }]
    expect(() => checkQuestions(questions)).toThrowError(UserQuestionError)
    try {
      checkQuestions(questions)
    } catch (error) {
      expect((error as UserQuestionError).code).toBe('BAD_QUESTION')
    }
  })
})
