/**
 * Microsoft Teams limits askbridge keeps to. Sources (Microsoft Learn, Teams platform docs):
 * - "Optimize your bot with rate limiting in Teams" (bots/how-to/rate-limit): per bot per
 *   conversation 7 operations a second, 8 per 2 s, 60 per 30 s, 1800 per hour; 429 with
 *   Retry-After past them;
 * - "Format your bot messages" / "Cards reference": a message (its Adaptive Card included) is
 *   limited to about 28 KB, larger ones are refused with 413;
 * - "Work with Universal Actions for Adaptive Cards": schema 1.5 for Action.Execute, at most 60
 *   `refresh.userIds`;
 * - "Respond to the dialog submit action": an app has five seconds to answer an invoke.
 */
export const TEAMS_LIMITS = {
  /** Bytes of the activity JSON (card included) Teams accepts in one message. */
  messageBytes: 28 * 1024,
  /** Adaptive Card schema version with Action.Execute (Universal Actions). */
  cardVersion: '1.5',
  /** Operations per conversation, per window (ms). */
  perConversation: [
    { ops: 7, windowMs: 1_000 },
    { ops: 8, windowMs: 2_000 },
    { ops: 60, windowMs: 30_000 },
    { ops: 1_800, windowMs: 3_600_000 },
  ],
  /** `refresh.userIds` entries. */
  refreshUserIds: 60,
  /** An invoke (Action.Execute) must be answered within this; askbridge answers well before. */
  invokeMs: 5_000,
  /** Characters of a TextBlock askbridge writes before cutting (display only; the card has the rest). */
  buttonTitle: 80,
} as const
