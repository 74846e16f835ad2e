import type { CardHost, ChatAdapter } from '../../src/answerer/adapter.js'
import { displayName, isLive } from '../../src/card/apply.js'
import { type ComponentRef, cardRef, decodeComponentId, encodeComponentId } from '../../src/card/codec.js'
import type { CardAction, CardState, Destination, Person } from '../../src/card/types.js'

/** What the in-memory platform shows for a card: text and usable component ids. */
export interface MemoryMessage {
  id: string
  callId: string
  destination: Destination
  text: string
  components: string[]
  updates: number
}

/** A pure renderer for the in-memory platform (the shape real renderers follow). */
export function cardToMemoryMessage(card: CardState): Pick<MemoryMessage, 'text' | 'components'> {
  const lines = card.questions.map(
    (q) => `${q.header ? `[${q.header}] ` : ''}${q.question}${q.detail ? `\n${q.detail}` : ''}`,
  )
  const components: string[] = []
  const live = isLive(card)
  if (card.status === 'answered') {
    const answers = card.result?.answers ?? []
    lines.push(
      `Answered by ${displayName(card.answeredBy)}: ${answers
        .map((a) => [...a.selected, ...(a.custom ? [a.custom] : [])].join(', ') || 'skipped')
        .join(' | ')}`,
    )
  }
  if (card.status === 'continued') lines.push('The agent has continued; your answer will still reach it.')
  if (card.status === 'cancelled') lines.push('This question was cancelled.')
  if (card.status === 'elsewhere') lines.push('Answered elsewhere.')
  if (card.quorum > 1) lines.push(`${card.approvals.length} of ${card.quorum} approvals`)
  if (live) {
    const id = (ref: Omit<ComponentRef, 'callId' | 'agent'>) =>
      encodeComponentId({ ...cardRef(card), ...ref })
    if (card.kind === 'approval') {
      components.push(id({ verb: 'approve' }), id({ verb: 'reject' }))
      const intent = card.questions[0]?.intent
      if (intent?.kind === 'approval' && intent.always !== undefined) components.push(id({ verb: 'always' }))
    } else if (card.kind === 'plan-review') {
      components.push(id({ verb: 'approve' }), id({ verb: 'decline' }))
    } else {
      card.questions.forEach((q, qi) => {
        ;(q.options ?? []).forEach((_o, oi) => {
          components.push(id({ verb: q.multiSelect ? 'toggle' : 'choose', q: qi, o: oi }))
        })
        components.push(id({ verb: 'set', q: qi }), id({ verb: 'other', q: qi }))
        if (card.questions.length > 1) components.push(id({ verb: 'skip', q: qi }))
      })
      if (card.questions.length > 1 || card.questions.some((q) => q.multiSelect))
        components.push(id({ verb: 'submit' }))
    }
    if (card.deadline !== undefined) components.push(id({ verb: 'hold' }))
  }
  return { text: lines.join('\n'), components }
}

/** Turn a used component (plus select values or form text) into a card action. */
export function componentToAction(
  card: CardState,
  ref: ComponentRef,
  input: { labels?: string[]; text?: string } = {},
): CardAction | undefined {
  const q = ref.q === undefined ? undefined : card.questions[ref.q]
  const label = q && ref.o !== undefined ? q.options?.[ref.o]?.label : undefined
  switch (ref.verb) {
    case 'choose':
    case 'toggle':
      return q && label !== undefined ? { type: ref.verb, questionId: q.id, label } : undefined
    case 'set':
      return q ? { type: 'set', questionId: q.id, labels: input.labels ?? [] } : undefined
    case 'other':
    case 'form':
      return q ? { type: 'other', questionId: q.id, text: input.text ?? '' } : undefined
    case 'skip':
      return q ? { type: 'skip', questionId: q.id } : undefined
    case 'decline':
      return { type: 'decline', ...(input.text ? { feedback: input.text } : {}) }
    case 'submit':
    case 'approve':
    case 'reject':
    case 'always':
    case 'hold':
      return { type: ref.verb }
    case 'page':
      return undefined
  }
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
    const action = card && componentToAction(card, ref, input)
    if (!action) throw new Error('component does not map to an action')
    const outcome = await this.host.handle({
      ...cardRef(card),
      interaction: { id: deliveryId, actor: person, action, at: Date.now() },
    })
    if (outcome.message) await this.notify(person, outcome.message)
    return outcome
  }
}
