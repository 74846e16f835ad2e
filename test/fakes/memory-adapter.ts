import type { CardHost, ChatAdapter } from '../../src/answerer/adapter.js'
import { type ComponentRef, cardRef, decodeComponentId, encodeComponentId } from '../../src/card/codec.js'
import type { ControlRef } from '../../src/card/controls.js'
import { displayName } from '../../src/card/lifecycle.js'
import { resolveComponent } from '../../src/card/resolve.js'
import { statusText } from '../../src/card/status.js'
import { cleanDeep } from '../../src/card/text.js'
import type { CardState, Destination, Person } from '../../src/card/types.js'
import { allControls, cardView } from '../../src/card/view.js'

/** What the in-memory platform shows for a card: text and usable component ids. */
export interface MemoryMessage {
  id: string
  callId: string
  destination: Destination
  text: string
  components: string[]
  updates: number
}

/** A pure renderer for the in-memory platform: the card view as text and component ids. */
export function cardToMemoryMessage(card: CardState): Pick<MemoryMessage, 'text' | 'components'> {
  const view = cardView(card)
  const lines = view.questions.map(
    (q) => `${q.header ? `[${q.header}] ` : ''}${q.text}${q.detail ? `\n${q.detail}` : ''}`,
  )
  if (card.status === 'answered') {
    const answers = card.result?.answers ?? []
    lines.push(
      `Answered by ${displayName(card.answeredBy)}: ${answers
        .map((a) => [...a.selected, ...(a.custom ? [a.custom] : [])].join(', ') || 'skipped')
        .join(' | ')}`,
    )
  }
  const names = (people: readonly Person[]) => people.map((p) => displayName(p)).join(', ')
  const format = { people: names, time: (ms: number) => new Date(ms).toISOString(), text: (t: string) => t }
  for (const line of view.statusLines) if (line.kind !== 'outcome') lines.push(statusText(line, format))
  const id = (ref: ControlRef) =>
    encodeComponentId({ ...cardRef(card), ...ref } as ComponentRef & { agent: string })
  const components = allControls(view).flatMap((c) => {
    if (c.kind !== 'options') return [id(c.ref)]
    // Every option as its own component, plus one menu taking a set of values.
    const verb = c.mode === 'any' ? 'toggle' : 'choose'
    return [
      ...c.options.map((o) => id({ verb, q: c.q, o: o.index })),
      id({ verb: c.mode === 'any' ? 'set' : 'choose', q: c.q }),
    ]
  })
  return cleanDeep({ text: lines.join('\n'), components })
}

/**
 * An in-memory chat platform: the adapter and the "people" side in one object, so the
 * answerer and the contract suite can be exercised without a network.
 */
export class MemoryAdapter implements ChatAdapter {
  /** Which platform it stands in for (persons and responder rules use this name). */
  constructor(readonly platform: Destination['platform'] = 'slack') {}
  readonly messages = new Map<string, MemoryMessage>()
  readonly notices = new Map<string, string[]>()
  readonly groups = new Map<string, string[]>()
  private host: CardHost | undefined
  /** Shared by every instance, so a "restarted" platform never reuses a message id. */
  private static seq = 0
  /** Fail the next N posts (to test partial delivery). */
  failPosts = 0

  async start(host: CardHost): Promise<void> {
    this.host = host
  }

  async stop(): Promise<void> {
    this.host = undefined
  }

  async post(card: CardState, destination: Destination): Promise<unknown> {
    if (this.failPosts > 0) {
      this.failPosts--
      throw new Error('platform unavailable')
    }
    const id = `m${++MemoryAdapter.seq}`
    this.messages.set(id, { id, callId: card.callId, destination, ...cardToMemoryMessage(card), updates: 0 })
    return { id }
  }

  async update(card: CardState, ref: unknown): Promise<void> {
    const id = (ref as { id: string }).id
    const message = this.messages.get(id)
    if (!message) throw new Error(`no message ${id}`)
    Object.assign(message, cardToMemoryMessage(card), { updates: message.updates + 1 })
  }

  async notify(person: Person, text: string): Promise<void> {
    this.notices.set(person.userId, [...(this.notices.get(person.userId) ?? []), text])
  }

  async groupMembers(groupId: string): Promise<string[]> {
    return this.groups.get(groupId) ?? []
  }

  /** Messages showing a call's card. */
  messagesFor(callId: string): MemoryMessage[] {
    return [...this.messages.values()].filter((m) => m.callId === callId)
  }

  /**
   * A person uses a component of a posted message. It must be on the message (no reaching
   * past what is rendered). Refusals arrive as notices, as on a real platform.
   */
  async use(
    messageId: string,
    match: (ref: ComponentRef) => boolean,
    person: Person,
    input: { labels?: string[]; text?: string } = {},
    deliveryId = `d${++MemoryAdapter.seq}`,
  ) {
    const message = this.messages.get(messageId)
    const componentId = message?.components.find((c) => {
      const ref = decodeComponentId(c)
      return ref !== undefined && match(ref)
    })
    if (!message || !componentId || !this.host) throw new Error('no such component on the message')
    const ref = decodeComponentId(componentId)!
    const card = await this.host.getCard(ref)
    if (!card) throw new Error('no such card')
    // Labels are what a test names; the platform sends option indexes.
    const options = card.questions[ref.q ?? -1]?.options ?? []
    const values = input.labels?.map((l) => String(options.findIndex((o) => o.label === l)))
    const resolved = resolveComponent(
      ref,
      { ...(values ? { values } : {}), ...(input.text === undefined ? {} : { text: input.text }) },
      card,
    )
    if (resolved.kind === 'refusal') {
      await this.notify(person, resolved.refusal.message)
      return { ok: false, message: resolved.refusal.message }
    }
    if (resolved.kind === 'form') throw new Error('a form opens: use the component again with text')
    const action = resolved.action
    const outcome = await this.host.handle({
      ...cardRef(card),
      interaction: { id: deliveryId, actor: person, action, at: Date.now() },
    })
    if (outcome.message) await this.notify(person, outcome.message)
    return outcome
  }
}
