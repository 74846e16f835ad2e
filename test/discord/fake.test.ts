/** The fake Discord itself: it must refuse what Discord refuses, in Discord's shapes. */
import { afterEach, describe, expect, it } from 'vitest'
import { FakeDiscord } from '../fakes/discord/server.js'
import { validateMessage, validateModal } from '../fakes/discord/validate.js'

let fake: FakeDiscord | undefined
afterEach(async () => {
  await fake?.close()
  fake = undefined
})

async function call(method: string, path: string, body?: unknown, auth = true) {
  const res = await fetch(`${fake?.apiUrl}/v10${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(auth ? { authorization: `Bot ${fake?.token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  }
}

const ok = { content: 'hi', allowed_mentions: { parse: [] } }

describe('fake Discord', () => {
  it('answers 400 Invalid Form Body with the path of each violation', async () => {
    fake = await new FakeDiscord().start()
    const channel = `/channels/${fake.channelId}/messages`
    const res = await call('POST', channel, {
      content: 'x'.repeat(2001),
      embeds: [{ title: 't'.repeat(257), description: 'd'.repeat(4000) }, { description: 'e'.repeat(2100) }],
      components: [
        {
          type: 1,
          components: [
            { type: 2, style: 1, label: 'l'.repeat(81), custom_id: 'a' },
            { type: 2, style: 1, label: 'ok', custom_id: 'a' },
          ],
        },
        {
          type: 1,
          components: [
            {
              type: 3,
              custom_id: 's',
              options: Array.from({ length: 26 }, (_, i) => ({ label: `${i}`, value: `${i}` })),
            },
          ],
        },
      ],
      allowed_mentions: { parse: [] },
    })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] },
        embeds: {
          _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED' }],
          0: { title: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
        },
        components: {
          0: { components: { 0: { label: expect.anything() }, 1: { custom_id: expect.anything() } } },
          1: { components: { 0: { options: expect.anything() } } },
        },
      },
    })
    expect(fake.rejected).toHaveLength(1)
    // Empty messages, six rows, and (test policy) messages that let Discord parse mentions.
    expect((await call('POST', channel, { allowed_mentions: { parse: [] } })).status).toBe(400)
    const row = { type: 1, components: [{ type: 2, style: 2, label: 'b', custom_id: 'b' }] }
    const six = Array.from({ length: 6 }, (_, i) => ({
      ...row,
      components: [{ ...row.components[0], custom_id: `b${i}` }],
    }))
    expect((await call('POST', channel, { components: six, allowed_mentions: { parse: [] } })).status).toBe(
      400,
    )
    expect((await call('POST', channel, { content: '@everyone' })).status).toBe(400)
    expect((await call('POST', channel, ok)).status).toBe(200)
  })

  it('requires the bot token on bot routes', async () => {
    fake = await new FakeDiscord().start()
    expect((await call('GET', '/users/@me', undefined, false)).status).toBe(401)
    expect((await call('GET', '/users/@me')).body).toMatchObject({ bot: true })
    expect((await call('GET', '/gateway/bot')).body).toMatchObject({
      shards: 1,
      url: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:/),
    })
  })

  it('injects 429 with retry_after and the rate-limit headers', async () => {
    fake = await new FakeDiscord().start()
    fake.rateLimit({ method: 'POST', count: 1, retryAfter: 0.25 })
    const limited = await call('POST', `/channels/${fake.channelId}/messages`, ok)
    expect(limited.status).toBe(429)
    expect(limited.body).toMatchObject({ retry_after: 0.25, global: false })
    expect(limited.headers.get('retry-after')).toBe('0.25')
    expect(limited.headers.get('x-ratelimit-bucket')).toBeTruthy()
    expect((await call('POST', `/channels/${fake.channelId}/messages`, ok)).status).toBe(200)
  })

  it('accepts every documented limit exactly and refuses one past it', () => {
    const at = limitCases(0)
    const past = limitCases(1)
    for (const [name, body] of Object.entries(at)) expect(check(name, body), name).toEqual([])
    for (const [name, body] of Object.entries(past)) expect(check(name, body), name).not.toEqual([])
  })

  it('validates modals and refuses expired or reused interaction tokens', async () => {
    fake = await new FakeDiscord({ delivery: 'http' }).start()
    const sent = await call('POST', `/channels/${fake.channelId}/messages`, {
      ...ok,
      components: [{ type: 1, components: [{ type: 2, style: 1, label: 'b', custom_id: 'b' }] }],
    })
    const messageId = String(sent.body?.id)
    const a = fake.prepareClick(messageId, 'b', { id: '1', username: 'a' })
    const badModal = await call(
      'POST',
      `/interactions/${a.id}/${a.token}/callback`,
      {
        type: 9,
        data: { custom_id: 'm', title: 't'.repeat(46), components: [] },
      },
      false,
    )
    expect(badModal.status).toBe(400)
    expect(badModal.body).toMatchObject({
      errors: { data: { title: expect.anything(), components: expect.anything() } },
    })
    // Test policy: an ephemeral reply must not let Discord parse mentions either.
    expect(
      (
        await call(
          'POST',
          `/interactions/${a.id}/${a.token}/callback`,
          { type: 4, data: { content: 'no', flags: 64 } },
          false,
        )
      ).status,
    ).toBe(400)
    expect((await call('POST', `/interactions/${a.id}/${a.token}/callback`, { type: 6 }, false)).status).toBe(
      204,
    )
    expect(
      (await call('POST', `/interactions/${a.id}/${a.token}/callback`, { type: 6 }, false)).body,
    ).toMatchObject({
      code: 40060,
    })
    const b = fake.prepareClick(messageId, 'b', { id: '1', username: 'a' })
    fake.expireTokens(b.token)
    expect(
      (await call('POST', `/interactions/${b.id}/${b.token}/callback`, { type: 6 }, false)).body,
    ).toMatchObject({
      code: 10062,
    })
    fake.expireTokens(a.token)
    expect((await call('POST', `/webhooks/${fake.applicationId}/${a.token}`, ok, false)).body).toMatchObject({
      code: 50027,
    })
  })
})

type Json = Record<string, unknown>
const am = { allowed_mentions: { parse: [] } }
const button = (i: number, extra: Json = {}) => ({
  type: 2,
  style: 2,
  label: 'b',
  custom_id: `b${i}`,
  ...extra,
})
const row = (components: Json[]) => ({ type: 1, components })
const select = (n: number, extra: Json = {}, option: Json = {}) => ({
  type: 3,
  custom_id: 's',
  options: Array.from({ length: n }, (_, i) => ({ label: `o${i}`, value: `v${i}`, ...option })),
  ...extra,
})
const input = (extra: Json) => ({
  type: 18,
  label: 'Answer',
  component: { type: 4, custom_id: 't', style: 2, ...extra },
})
const modal = (extra: Json = {}) => ({ custom_id: 'm', title: 'Title', components: [input({})], ...extra })

/** Bodies at each limit (`over` = 0) or one past it (`over` = 1) (docs/platform-limits.md#messages-components-and-modals). */
function limitCases(over: number): Record<string, Json> {
  const n = (limit: number) => limit + over
  const x = (limit: number) => 'x'.repeat(limit + over)
  const embed = (extra: Json) => ({ embeds: [{ description: 'd', ...extra }], ...am })
  return {
    'message: action rows (5)': {
      components: Array.from({ length: n(5) }, (_, i) => row([button(i)])),
      ...am,
    },
    'message: buttons per row (5)': {
      components: [row(Array.from({ length: n(5) }, (_, i) => button(i)))],
      ...am,
    },
    'message: custom_id (100)': { components: [row([button(0, { custom_id: x(100) })])], ...am },
    'message: button label (80)': { components: [row([button(0, { label: x(80) })])], ...am },
    'message: select options (25)': { components: [row([select(n(25))])], ...am },
    'message: select max_values (25)': {
      components: [row([select(25, { max_values: n(25) })])],
      ...am,
    },
    'message: select option label (100)': { components: [row([select(1, {}, { label: x(100) })])], ...am },
    'message: select option value (100)': { components: [row([select(1, {}, { value: x(100) })])], ...am },
    'message: select option description (100)': {
      components: [row([select(1, {}, { description: x(100) })])],
      ...am,
    },
    'message: select placeholder (150)': { components: [row([select(1, { placeholder: x(150) })])], ...am },
    'message: content (2000)': { content: x(2000), ...am },
    'message: embeds (10)': {
      embeds: Array.from({ length: n(10) }, () => ({ description: 'd' })),
      ...am,
    },
    'embed: title (256)': embed({ title: x(256) }),
    'embed: description (4096)': embed({ description: x(4096) }),
    'embed: fields (25)': embed({
      fields: Array.from({ length: n(25) }, () => ({ name: 'n', value: 'v' })),
    }),
    'embed: field name (256)': embed({ fields: [{ name: x(256), value: 'v' }] }),
    'embed: field value (1024)': embed({ fields: [{ name: 'n', value: x(1024) }] }),
    'embed: footer (2048)': embed({ footer: { text: x(2048) } }),
    'embed: author (256)': embed({ author: { name: x(256) } }),
    'embed: 6000 in total': {
      embeds: [
        { title: 'x'.repeat(256), description: 'x'.repeat(4096) },
        { description: 'x'.repeat(6000 - 256 - 4096 + over) },
      ],
      ...am,
    },
    'modal: custom_id (100)': modal({ custom_id: x(100) }),
    'modal: title (45)': modal({ title: x(45) }),
    'modal: components (5)': modal({
      components: Array.from({ length: n(5) }, (_, i) => ({
        ...input({}),
        component: { ...input({}).component, custom_id: `t${i}` },
      })),
    }),
    'modal: at least one component': modal({ components: over ? [] : [input({})] }),
    'modal: text input max_length (4000)': modal({ components: [input({ max_length: n(4000) })] }),
    'modal: text input value (4000)': modal({ components: [input({ value: x(4000) })] }),
    'modal: text input placeholder (100)': modal({ components: [input({ placeholder: x(100) })] }),
    'modal: label (45)': modal({ components: [{ ...input({}), label: x(45) }] }),
    'modal: label description (100)': modal({ components: [{ ...input({}), description: x(100) }] }),
  }
}

function check(name: string, body: Json) {
  return name.startsWith('modal:') ? validateModal(body) : validateMessage(body, { strictMentions: true })
}
