/**
 * A notice without buttons (src/answerer/notices.ts) as one Slack message: the title in bold, the
 * agent's message as mrkdwn, and who raised it when. Agent text goes through the card renderers'
 * escaping (no `<!channel>`, `@here`, `<@U…>` or links it did not write as links) and every
 * block stays within Slack's limits.
 */
import type { webApi } from '@slack/bolt'
import type { Destination, Notice } from '../../src/adapter-kit.js'
import { SLACK_LIMITS, type SlackMessage } from './blocks.js'
import { markdownToMrkdwn } from './markdown.js'
import type { ChannelQueues } from './queue.js'
import { slackDate } from './render.js'
import { escapeMrkdwn, truncateMrkdwn, truncatePlain } from './text.js'

/** The notice as a message: pure, so tests can check its limits. */
export function noticeMessage(notice: Notice): SlackMessage {
  const title = truncateMrkdwn(
    `:information_source: *${escapeMrkdwn(notice.title)}*`,
    SLACK_LIMITS.sectionText,
  )
  const body = notice.text.trim()
    ? truncateMrkdwn(markdownToMrkdwn(notice.text), SLACK_LIMITS.sectionText)
    : ''
  const from = truncateMrkdwn(
    `${escapeMrkdwn(notice.agentId)} · ${slackDate(notice.at)} · for your information, nothing to answer`,
    SLACK_LIMITS.sectionText,
  )
  return {
    text: escapeMrkdwn(truncatePlain(`${notice.title}: ${notice.text}`, 300)),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: title } },
      ...(body ? [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: body } }] : []),
      { type: 'context', elements: [{ type: 'mrkdwn', text: from }] },
    ],
  }
}

export interface NoticePostDeps {
  client: webApi.WebClient
  queues: ChannelQueues
  openDm(userId: string): Promise<string>
}

/** Post a notice through the channel's queue (paced with the cards posted there). */
export async function postNoticeMessage(
  deps: NoticePostDeps,
  notice: Notice,
  destination: Destination,
): Promise<{ channel: string; ts: string }> {
  const channel = destination.channel ?? (destination.user ? await deps.openDm(destination.user) : undefined)
  if (!channel) throw new Error('A Slack destination needs a channel or a user')
  const message = noticeMessage(notice)
  const result = await deps.queues.run(channel, (call) =>
    call('chat.postMessage', () =>
      deps.client.chat.postMessage({ channel, ...message, unfurl_links: false, unfurl_media: false }),
    ),
  )
  if (!result.ts) throw new Error('chat.postMessage returned no ts')
  return { channel: result.channel ?? channel, ts: result.ts }
}
