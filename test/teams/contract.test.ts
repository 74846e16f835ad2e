/**
 * The shared adapter contract, with the real TeamsAdapter (Agents SDK JWT verification and
 * ConnectorClient) against the fake Teams.
 */
import { decodeComponentId } from '../../src/card/codec.js'
import { type ContractHarness, type PersonSpec, runAdapterContract } from '../contract/adapter-contract.js'
import type { FakeTeamsUser } from '../fakes/teams/server.js'
import { teamsRig } from './rig.js'

type Json = Record<string, unknown>

runAdapterContract('teams (Agents SDK against the fake Teams)', async (): Promise<ContractHarness> => {
  const rig = await teamsRig()
  const user = (p: PersonSpec): FakeTeamsUser => ({ aadObjectId: p.userId, name: p.name })
  const inputFor = (all: Json[], verb: string, q: number, type: string) =>
    all.find((e) => {
      if (e.type !== type) return false
      const ref = decodeComponentId(String(e.id))
      return ref?.verb === verb && (verb === 'decline' || ref.q === q)
    })
  return {
    adapter: rig.adapter,
    destination: { platform: 'teams', channel: rig.fake.channelId },
    people: {
      ann: { userId: '11111111-1111-4111-8111-111111111111', name: 'Ann' },
      bob: { userId: '22222222-2222-4222-8222-222222222222', name: 'Bob' },
    },
    onlyAnn: { teams: { users: ['11111111-1111-4111-8111-111111111111'] } },
    async press(callId, target, p) {
      await rig.execute(
        callId,
        (verb, q, o) => verb === target.verb && q === target.q && o === target.o,
        user(p),
      )
    },
    async select(callId, q, labels, p) {
      const all = rig.elements(callId)
      const set = inputFor(all, 'set', q, 'Input.ChoiceSet') ?? inputFor(all, 'choose', q, 'Input.ChoiceSet')
      if (!set) throw new Error(`no choice set for question ${q}`)
      const choices = set.choices as Array<{ title: string; value: string }>
      const values = labels.map((label) => {
        const choice = choices.find((c) => c.title === label || c.title.startsWith(`${label} — `))
        if (!choice) throw new Error(`no option ${label}`)
        return choice.value
      })
      const ref = decodeComponentId(String(set.id))
      await rig.execute(
        callId,
        (verb, qi, o) => verb === ref?.verb && qi === q && o === undefined,
        user(p),
        () => ({ [String(set.id)]: values.join(',') }),
      )
    },
    async submitForm(callId, verb, q, text, p) {
      const input = inputFor(rig.elements(callId), verb, q, 'Input.Text')
      if (!input) throw new Error(`no ${verb} input for question ${q}`)
      await rig.execute(
        callId,
        (v, qi) => v === verb && (verb === 'decline' || qi === q),
        user(p),
        () => ({ [String(input.id)]: text }),
      )
    },
    async notices(p) {
      return rig.fake.notices.get(p.userId) ?? []
    },
    async text(callId) {
      return rig.text(callId)
    },
    async live(callId) {
      return rig.elements(callId).some((e) => e.type === 'Action.Execute')
    },
    async messageCount(callId) {
      return rig.activity(callId) ? 1 : 0
    },
    close: () => rig.close(),
  }
})
