import { decodeComponentId } from '../../src/card/codec.js'
import { MemoryAdapter } from '../fakes/memory-adapter.js'
import { type ContractHarness, runAdapterContract } from './adapter-contract.js'

runAdapterContract('in-memory fake platform', async (): Promise<ContractHarness> => {
  const adapter = new MemoryAdapter()
  const first = (callId: string) => adapter.messagesFor(callId)[0]
  const person = (p: { userId: string; name: string }) => ({ platform: 'slack', ...p })
  return {
    adapter,
    destination: { platform: 'slack', channel: 'C0MEMORY' },
    people: { ann: { userId: 'ann', name: 'Ann' }, bob: { userId: 'bob', name: 'Bob' } },
    onlyAnn: { slack: { users: ['ann'] } },
    async press(callId, target, p) {
      const id = first(callId)?.id ?? ''
      await adapter.use(id, (r) => r.verb === target.verb && r.q === target.q && r.o === target.o, person(p))
    },
    async select(callId, q, labels, p) {
      await adapter.use(first(callId)?.id ?? '', (r) => r.verb === 'set' && r.q === q, person(p), { labels })
    },
    async submitForm(callId, verb, q, text, p) {
      const match =
        verb === 'decline'
          ? (r: { verb: string }) => r.verb === 'decline'
          : (r: { verb: string; q?: number }) => r.verb === 'other' && r.q === q
      await adapter.use(first(callId)?.id ?? '', match, person(p), { text })
    },
    async notices(p) {
      return adapter.notices.get(p.userId) ?? []
    },
    async text(callId) {
      return first(callId)?.text ?? ''
    },
    async live(callId) {
      return (first(callId)?.components ?? []).some((c) => decodeComponentId(c) !== undefined)
    },
    async messageCount(callId) {
      return adapter.messagesFor(callId).length
    },
    async close() {},
  }
})
