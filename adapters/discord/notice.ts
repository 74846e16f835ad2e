/**
 * A notice without buttons (src/answerer/notices.ts) as one Discord message: an embed with the
 * title, the agent's message as Discord markdown and who raised it, no components, and
 * `allowed_mentions` empty. Agent text goes through the card renderers' escaping (no
 * `@everyone`, `<@&role>` or markup it did not write) and stays within Discord's limits.
 */
import type { Notice } from '../../src/adapter-kit.js'
import { DISCORD_LIMITS as L } from './limits.js'
import { markdownToDiscord } from './markdown.js'
import type { DiscordMessage } from './render.js'
import { clamp, escapeMentions, splitMarkdown } from './text.js'

const INFO = 0x99aab5

/** The notice as a message: pure, so tests can check its limits. */
export function noticeMessage(notice: Notice): DiscordMessage {
  const body = notice.text.trim() ? markdownToDiscord(notice.text) : ''
  const [first, ...rest] = body ? splitMarkdown(body, L.embedDescription - 2) : []
  return {
    content: '',
    embeds: [
      {
        color: INFO,
        title: clamp(escapeMentions(notice.title), L.embedTitle),
        ...(first ? { description: rest.length ? `${first} …` : first } : {}),
        footer: {
          text: clamp(
            `${escapeMentions(notice.agentId)} · for your information, nothing to answer`,
            L.embedFooter,
          ),
        },
        timestamp: new Date(notice.at).toISOString(),
      },
    ],
    components: [],
    allowed_mentions: { parse: [] },
  }
}
