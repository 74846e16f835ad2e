/**
 * The shared adapter contract, with the real DiscordAdapter (real discord.js Client) against the
 * fake Discord. People act only through components actually rendered on the card's messages.
 */
import { DiscordAdapter, type DiscordRef } from '../../adapters/discord/index.js'
import { decodeComponentId } from '../../src/card/codec.js'
import type { CardState, Destination } from '../../src/card/types.js'
import { type ContractHarness, type PersonSpec, runAdapterContract } from '../contract/adapter-contract.js'
import { FakeDiscord, type FakeUser, type StoredMessage } from '../fakes/discord/server.js'

/** The real adapter, remembering where it posted each card (what the answerer's store keeps). */
class ObservedDiscordAdapter extends DiscordAdapter {
  readonly refs = new Map<string, DiscordRef>()
  override async post(card: CardState, destination: Destination): Promise<DiscordRef> {
    const ref = await super.post(card, destination)
    this.refs.set(card.callId, ref)
    return ref
  }
}

type Json = Record<string, unknown>

runAdapterContract('discord (discord.js against the fake Discord)', async (): Promise<ContractHarness> => {
  const fake = await new FakeDiscord().start()
  const adapter = new ObservedDiscordAdapter({ token: fake.token, apiUrl: fake.apiUrl })
  const user = (p: PersonSpec): FakeUser => ({
    id: p.userId,
    username: p.name.toLowerCase(),
    global_name: p.name,
  })
  const messages = (callId: string): StoredMessage[] => {
    const ref = adapter.refs.get(callId)
    if (!ref) return []
    return ref.messageIds.flatMap((id) => {
      const m = fake.messages.get(id)
      return m ? [m] : []
    })
  }
  const find = (callId: string, test: (verb: string, q?: number, o?: number) => boolean) => {
    for (const message of messages(callId))
      for (const row of message.components)
        for (const c of (row.components as Json[] | undefined) ?? []) {
          const ref = decodeComponentId(String(c.custom_id))
          if (ref?.callId === callId && test(ref.verb, ref.q, ref.o))
            return { message, customId: String(c.custom_id), component: c }
        }
    throw new Error(`no matching component on ${callId}`)
  }
  const answered = async (record: { responded: Promise<Json> }) => {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('no response')), 5000),
    )
    return Promise.race([record.responded, timeout])
  }

  return {
    adapter,
    destination: { platform: 'discord', channel: fake.channelId },
    people: {
      ann: { userId: '310000000000000001', name: 'Ann' },
      bob: { userId: '310000000000000002', name: 'Bob' },
    },
    onlyAnn: { discord: { users: ['310000000000000001'] } },
    async press(callId, target, p) {
      const found = find(callId, (verb, q, o) => verb === target.verb && q === target.q && o === target.o)
      await answered(await fake.click(found.message.id, found.customId, user(p)))
    },
    async select(callId, q, labels, p) {
      const found = find(callId, (verb, qi) => verb === 'set' && qi === q)
      const options = (found.component.options as Json[]).map((o) => String(o.value))
      // Option values are the options' indexes; the labels are what the person reads.
      const values = labels.map((label) => {
        const option = (found.component.options as Json[]).find((o) => o.label === label)
        if (!option) throw new Error(`no option ${label}`)
        return String(option.value)
      })
      if (!values.every((v) => options.includes(v))) throw new Error('value not offered')
      await answered(await fake.select(found.message.id, found.customId, values, user(p)))
    },
    async submitForm(callId, verb, q, text, p) {
      const found = find(callId, (v, qi) => v === verb && (verb === 'decline' || qi === q))
      const opened = await fake.click(found.message.id, found.customId, user(p))
      await answered(opened)
      await answered(await fake.submitModal(opened, text, user(p)))
    },
    async notices(p) {
      return fake.notices.get(p.userId) ?? []
    },
    async text(callId) {
      return messages(callId)
        .map((m) =>
          [
            m.content,
            ...m.embeds.map((e) => [(e.author as Json | undefined)?.name, e.title, e.description].join('\n')),
          ].join('\n'),
        )
        .join('\n')
    },
    async live(callId) {
      return messages(callId).some((m) => m.components.length > 0)
    },
    async messageCount(callId) {
      return messages(callId).length
    },
    async close() {
      if (fake.rejected.length) throw new Error(`the fake refused payloads: ${JSON.stringify(fake.rejected)}`)
      await fake.close()
    },
  }
})
