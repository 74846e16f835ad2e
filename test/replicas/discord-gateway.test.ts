/**
 * Two bridges on one PostgreSQL database, both connected to the (fake) Discord gateway: every
 * interaction reaches both sessions, exactly one bridge (the leadership holder) responds, and
 * when it goes the other takes over.
 */
import { afterEach, expect, it } from 'vitest'
import { decodeComponentId } from '../../src/card/codec.js'
import { alice, waitResponded } from '../discord/rig.js'
import { FakeDiscord, type InteractionRecord } from '../fakes/discord/server.js'
import { type TestSchema, testSchema } from '../helpers/pg.js'
import { request, startBridge, type TestBridge, until } from '../server/helpers.js'

let schema: TestSchema | undefined
let fake: FakeDiscord | undefined
const bridges: TestBridge[] = []
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()))
  await fake?.close()
  await schema?.drop()
  schema = undefined
})

const colour = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }

it('one bridge answers each gateway interaction; when it goes, another takes over', async () => {
  schema = await testSchema()
  fake = await new FakeDiscord().start()
  const env = {
    ASKBRIDGE_DB: schema.url,
    DISCORD_BOT_TOKEN: fake.token,
    DISCORD_API_URL: fake.apiUrl,
    DISCORD_CHANNEL_ID: fake.channelId,
  }
  const leader = async () =>
    (
      await schema?.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1",
        [`askbridge-lead:askbridge_${schema?.schema}:discord-gateway`.slice(0, 63)],
      )
    )?.[0]?.n === '1'
  const a = await startBridge(env)
  bridges.push(a)
  await until(leader, 'bridge A leading the gateway')
  const b = await startBridge(env)
  bridges.push(b)

  const click = async (callId: string, option: number): Promise<InteractionRecord> => {
    const found = await until(() => {
      for (const message of fake?.channelMessages() ?? []) {
        for (const row of message.components) {
          for (const c of (row.components as Array<Record<string, unknown>> | undefined) ?? []) {
            const ref = decodeComponentId(String(c.custom_id))
            if (ref?.callId === callId && ref.verb === 'choose' && ref.o === option)
              return { message, customId: String(c.custom_id) }
          }
        }
      }
      return undefined
    }, `a button on ${callId}`)
    const record = await (fake as FakeDiscord).click(found.message.id, found.customId, alice)
    await waitResponded(record)
    return record
  }

  const first = request(a.url, 'POST', '/v1/ask', { callId: 'g-1', questions: [colour] })
  const record = await click('g-1', 1)
  expect((await first).body.answers).toEqual([{ id: 'colour', selected: ['Blue'] }])
  // Both sessions got the interaction; one bridge responded, nobody answered it twice.
  expect(record.errors).toEqual([])

  // Bridge A goes away; bridge B takes the gateway over and answers the next click.
  bridges.splice(bridges.indexOf(a), 1)
  await a.close()
  await until(leader, 'bridge B leading the gateway', 1000)
  const second = request(b.url, 'POST', '/v1/ask', { callId: 'g-2', questions: [colour] })
  const again = await click('g-2', 0)
  expect(again.errors).toEqual([])
  expect((await second).body.answers).toEqual([{ id: 'colour', selected: ['Red'] }])
})
