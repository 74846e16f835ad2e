/** Notices without buttons stay within every platform's limits, whatever the agent wrote. */
import { describe, expect, it } from 'vitest'
import { noticeMessage as discordNotice } from '../../adapters/discord/notice.js'
import { embedLength } from '../../adapters/discord/render.js'
import { blockTextLength, SLACK_LIMITS } from '../../adapters/slack/blocks.js'
import { noticeMessage as slackNotice } from '../../adapters/slack/notice.js'
import { NOTICE_TEXT_CHARS, type Notice } from '../../src/answerer/adapter.js'

const notice = (title: string, text: string): Notice => ({
  id: 'notice-1',
  agentId: 'claude-code:abc123',
  title,
  text,
  at: Date.UTC(2026, 10, 30, 12),
})

// Escaping grows text (`&` -> `&amp;`, `@everyone` -> `@\u200beveryone`): the worst cases.
const worst = [
  '&<>'.repeat(NOTICE_TEXT_CHARS / 3),
  '@everyone '.repeat(NOTICE_TEXT_CHARS / 10),
  '*'.repeat(NOTICE_TEXT_CHARS),
  `\`\`\`\n${'x\n'.repeat(NOTICE_TEXT_CHARS / 2 - 4)}`,
]

describe('notice limits', () => {
  it.each(worst.map((text, i) => [i, text] as const))('worst case %i fits Slack', (_i, text) => {
    const message = slackNotice(notice('&'.repeat(200), text))
    expect(message.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage)
    for (const block of message.blocks) {
      if (block.type === 'section')
        expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText)
    }
    expect(blockTextLength(message.blocks)).toBeLessThanOrEqual(SLACK_LIMITS.messageTextBudget)
    expect(message.blocks.some((b) => b.type === 'actions')).toBe(false)
  })

  it.each(worst.map((text, i) => [i, text] as const))('worst case %i fits Discord', (_i, text) => {
    const message = discordNotice(notice('@everyone '.repeat(40), text))
    const embed = message.embeds[0]
    expect(embed?.title?.length).toBeLessThanOrEqual(256)
    expect(embed?.description?.length ?? 0).toBeLessThanOrEqual(4096)
    expect(embedLength(embed ?? {})).toBeLessThanOrEqual(6000)
    expect(message.content.length).toBeLessThanOrEqual(2000)
    expect(message.components).toEqual([])
    expect(message.allowed_mentions).toEqual({ parse: [] })
  })

  it('an empty message shows only the title and who raised it', () => {
    expect(slackNotice(notice('Claude Code is waiting', '')).blocks.map((b) => b.type)).toEqual([
      'section',
      'context',
    ])
    expect(discordNotice(notice('Claude Code is waiting', '')).embeds[0]?.description).toBeUndefined()
  })
})
