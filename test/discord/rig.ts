/**
 * The Discord end-to-end rig: the fake Discord, the real discord.js Client inside DiscordAdapter,
 * and the real ChatAnswerer + UserQuestionService on an in-memory SQLite store.
 */

import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DiscordAdapter, type DiscordRef } from '../../adapters/discord/index.js'
import { isPostPending } from '../../src/answerer/adapter.js'
import { ChatAnswerer } from '../../src/answerer/chat.js'
import { type ComponentRef, decodeComponentId } from '../../src/card/codec.js'
import type { Destination, Mention } from '../../src/card/types.js'
import type { RoutePlan } from '../../src/routing/types.js'
import { UserQuestionService } from '../../src/service/service.js'
import { openStore } from '../../src/store/index.js'
import {
  FakeDiscord,
  type FakeDiscordOptions,
  type FakeUser,
  type InteractionRecord,
  type StoredMessage,
} from '../fakes/discord/server.js'
import { keyFor } from '../helpers/service.js'

export const alice: FakeUser = {
  id: '210000000000000001',
  username: 'alice',
  global_name: 'Alice',
  locale: 'en-US',
}
export const bob: FakeUser = { id: '210000000000000002', username: 'bob', global_name: 'Bob', locale: 'de' }

export interface RigOptions extends FakeDiscordOptions {
  /** Serve HTTP interactions (sets the fake's delivery to http). */
  http?: boolean
  mention?: Mention[]
  ackAfterMs?: number
  /** Route settings (quorum, responders) for every question. */
  plan?: Partial<RoutePlan>
}

/** Wait for the adapter's initial response to an interaction (failing with the fake's errors). */
export async function waitResponded(record: InteractionRecord): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no interaction response; fake errors: ${JSON.stringify(record.errors)}`)),
      8000,
    )
  })
  try {
    await Promise.race([record.responded, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export async function discordRig(options: RigOptions = {}) {
  // The end-to-end tests are about cards and clicks, and several post more than a bucket's 5
  // messages in 5 s: the fake's rate limits are on only where a test asks (burst.test.ts).
  const fake = await new FakeDiscord({
    rateLimits: false,
    ...options,
    ...(options.http ? { delivery: 'http' } : {}),
  }).start()
  const store = openStore('memory')
  const service = new UserQuestionService({ store })
  const adapter = new DiscordAdapter({
    token: fake.token,
    apiUrl: fake.apiUrl,
    ...(options.http ? { publicKey: fake.publicKeyHex } : {}),
    ...(options.ackAfterMs === undefined ? {} : { ackAfterMs: options.ackAfterMs }),
  })
  const destination: Destination = {
    platform: 'discord',
    channel: fake.channelId,
    ...(options.mention ? { mention: options.mention } : {}),
  }
  const plan = options.plan
  const chat = new ChatAnswerer({
    service,
    adapters: [adapter],
    escalationIntervalMs: 0,
    ...(plan
      ? {
          router: {
            resolve: () => ({
              name: 'test',
              destinations: [destination],
              quorum: 1,
              excludeRequester: false,
              escalation: [],
              ...plan,
            }),
          },
        }
      : { destinations: [destination] }),
  })
  service.use(chat.answerer)
  let http: Server | undefined
  if (options.http) {
    http = createServer((req, res) => {
      if (req.url === '/discord/interactions') void adapter.handleHttp(req, res)
      else res.writeHead(404).end()
    })
    http.listen(0, '127.0.0.1')
    await once(http, 'listening')
    fake.interactionsUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/discord/interactions`
  }
  await chat.start()

  /** The card's messages in the fake, first to last. */
  const messages = async (callId: string): Promise<StoredMessage[]> => {
    const posts = await store.listPosts(await keyFor(store, callId))
    // Only once its post is recorded: while the store holds the claim, a long card's first
    // messages may be out while its last (the buttons) is still on the way.
    const ref = posts[0]?.ref as DiscordRef | undefined
    if (!ref || isPostPending(ref)) return []
    const ids = new Set(ref.messageIds)
    return fake.channelMessages(ref.channelId).filter((m) => ids.has(m.id) || sameCard(m, callId))
  }

  /** Find a live component by what it does. */
  const component = async (callId: string, match: Partial<ComponentRef> & { verb: ComponentRef['verb'] }) => {
    for (const message of await messages(callId)) {
      for (const row of message.components) {
        for (const c of (row.components as Record<string, unknown>[] | undefined) ?? []) {
          const ref = decodeComponentId(String(c.custom_id))
          if (!ref || ref.callId !== callId || ref.verb !== match.verb) continue
          if (match.q !== undefined && ref.q !== match.q) continue
          if (match.o !== undefined && ref.o !== match.o) continue
          return { message, customId: String(c.custom_id), component: c }
        }
      }
    }
    return undefined
  }

  const mustComponent = async (
    callId: string,
    match: Partial<ComponentRef> & { verb: ComponentRef['verb'] },
  ) => {
    const found = await component(callId, match)
    if (!found) throw new Error(`no live ${match.verb} component on ${callId}`)
    return found
  }

  const press = async (
    callId: string,
    match: Partial<ComponentRef> & { verb: ComponentRef['verb'] },
    user = alice,
  ) => {
    const found = await mustComponent(callId, match)
    const record = await fake.click(found.message.id, found.customId, user)
    await waitResponded(record)
    return record
  }

  const choose = async (callId: string, q: number, values: string[], user = alice, page = 0) => {
    const found = await mustComponent(callId, { verb: 'set', q, o: page })
    const record = await fake.select(found.message.id, found.customId, values, user)
    await waitResponded(record)
    return record
  }

  const hasLiveComponents = async (callId: string) =>
    (await messages(callId)).some((m) => m.components.length > 0)

  const text = async (callId: string) =>
    (await messages(callId))
      .map((m) => [m.content, ...m.embeds.map((e) => `${e.title ?? ''}\n${e.description ?? ''}`)].join('\n'))
      .join('\n')

  const close = async () => {
    await chat.stop()
    await service.close()
    if (http) {
      http.closeAllConnections()
      await new Promise<void>((resolve) => http?.close(() => resolve()))
    }
    await fake.close()
  }

  return {
    fake,
    store,
    service,
    adapter,
    chat,
    destination,
    messages,
    component,
    mustComponent,
    press,
    choose,
    waitResponded,
    hasLiveComponents,
    text,
    close,
  }
}

function sameCard(message: StoredMessage, callId: string): boolean {
  return message.components.some((row) =>
    ((row.components as Record<string, unknown>[] | undefined) ?? []).some(
      (c) => decodeComponentId(String(c.custom_id))?.callId === callId,
    ),
  )
}

export type DiscordRig = Awaited<ReturnType<typeof discordRig>>
