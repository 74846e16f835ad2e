/**
 * A notice without buttons (src/answerer/notices.ts) as one Teams message: an Adaptive Card with
 * the title, the agent's message (markdown, escaped like card text: no `<at>`, no broadcasts) and
 * who raised it. Within the size limit: the message is shortened until it fits.
 */
import type { Notice } from '../../src/adapter-kit.js'
import { CARD_CONTENT_TYPE, type TeamsMessage } from './card-schema.js'
import { TEAMS_LIMITS as L } from './limits.js'
import { markdownToTeams } from './markdown.js'
import { messageBytes } from './render.js'
import { plain } from './text.js'

export function noticeToTeamsMessage(notice: Notice): TeamsMessage {
  let text = notice.text
  for (;;) {
    const message: TeamsMessage = {
      type: 'message',
      attachments: [
        {
          contentType: CARD_CONTENT_TYPE,
          content: {
            type: 'AdaptiveCard',
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            version: L.cardVersion,
            body: [
              { type: 'TextBlock', text: plain(notice.title), wrap: true, weight: 'Bolder', size: 'Medium' },
              ...markdownToTeams(text),
              {
                type: 'TextBlock',
                text: plain(`${notice.agentId} · for your information, nothing to answer`),
                wrap: true,
                isSubtle: true,
                size: 'Small',
              },
            ],
            msteams: { width: 'Full' },
          },
        },
      ],
    }
    if (messageBytes(message) <= L.messageBytes || text.length === 0) return message
    text = `${text.slice(0, Math.floor(text.length * 0.8))}…`
  }
}
