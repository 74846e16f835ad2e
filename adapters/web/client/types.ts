/**
 * What the inbox server sends its page and the page sends back: the one contract between
 * adapters/web (Node) and adapters/web/client (the browser). Pure types, shared by both sides.
 *
 * The unions here spell out the core's words (card kinds, statuses, tones). The server builds
 * these views from the core's types (view.ts), so a word the core adds and the page does not
 * know fails the type check there.
 */

/** How strongly a control is presented (button styles). */
export type WebTone = 'primary' | 'danger' | 'neutral'

/** The text forms a card opens (see FormKind in src/card/controls.ts). */
export type WebFormKind = 'other' | 'decline' | 'approve' | 'reject'

/**
 * One control as the page shows it: the card view's control with its reference spelled out. The
 * page turns each into a widget and each use into the card action named by `verb`; it decides no
 * card rule itself.
 */
export type WebControl =
  | { kind: 'button'; verb: string; q?: number; label: string; tone: WebTone }
  | {
      kind: 'form'
      verb: string
      q?: number
      label: string
      tone: WebTone
      form: WebFormKind
    }
  | {
      kind: 'options'
      q: number
      mode: 'one' | 'any'
      options: Array<{ index: number; label: string; description?: string; chosen: boolean }>
    }

/** One question as the inbox page shows it. Text fields are plain text (the page sets textContent); `*Html` fields are safe HTML. */
export interface WebQuestionView {
  id: string
  question: string
  header?: string
  detailHtml?: string
  subject?: string
  /** What a person can use on this question, in order (empty once the card is finished). */
  controls: WebControl[]
  /** Shared draft or final answer, as one line of plain text. */
  note?: string
  /** The final answer's parts (labels, then the quoted free text); empty: skipped. */
  answer?: string[]
}

/** A card as the inbox page shows it: plain data, no functions. */
export interface WebCardView {
  callId: string
  agentId: string
  kind: 'questions' | 'approval' | 'plan-review'
  status: 'open' | 'continued' | 'answered' | 'cancelled' | 'elsewhere'
  live: boolean
  createdAt: number
  deadline?: number
  questions: WebQuestionView[]
  /** Card-wide controls (Submit, Take my time). */
  footer: WebControl[]
  /** Status lines as plain text (times in UTC), with their kind (see StatusLine in src/card/status.ts). */
  statusLines: Array<{ kind: string; text: string }>
  /** Who is on call and where that came from (PagerDuty, last known, fallback). */
  oncall?: string
  /** A finished card: answered/approved (`ok`), rejected or declined (`bad`), or closed (`neutral`). */
  tone?: 'ok' | 'bad' | 'neutral'
  /** Distinct approvers an approval needs. */
  quorum: number
  holders: Array<{ userId: string; name: string }>
  result?: Array<{ id: string; selected: string[]; custom?: string }>
  answeredAt?: number
  version?: number
}

/** `GET /inbox/api/me`: who the page answers as when inbox sign-in is on. */
export type WebMe =
  | { signedIn: true; userId: string; name: string; email: string; csrf: string }
  | { signedIn: false }

/**
 * `GET /inbox/api/cards`: live cards and the newest page of finished ones; with `?cursor=`, the
 * next (older) page of finished cards only. `nextCursor` is there when older ones follow.
 */
export interface WebCardList {
  cards: WebCardView[]
  nextCursor?: string
}

/** `POST /inbox/api/cards/:callId/actions`: the outcome, with the card as it is now. */
export interface WebActionReply {
  ok: boolean
  message?: string
  card: WebCardView
}

/** The `notice` server-sent event: a private note for one person, maybe about one card. */
export interface WebNotice {
  userId: string
  text: string
  callId?: string
  agentId?: string
}

/**
 * A notice without buttons (a Claude Code session is waiting or finished): the `fyi` server-sent
 * event, and each item of `GET /inbox/api/notices` (newest first). Text only, untrusted.
 */
export interface WebFyi {
  title: string
  text: string
  agentId: string
  id: string
  at: number
}

/** `GET /inbox/api/notices`. */
export interface WebFyiList {
  notices: WebFyi[]
  /** How many notices the server keeps: the page keeps as many. */
  limit: number
}
