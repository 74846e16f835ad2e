/** Starting against a Discord API that accepts connections and never answers fails fast, naming DISCORD_API_URL. */
import { createServer, type Socket } from 'node:net'
import { expect, it } from 'vitest'
import { DiscordAdapter } from '../../adapters/discord/index.js'
import type { CardHost } from '../../src/answerer/adapter.js'
import type { Logger } from '../../src/log.js'

const host: CardHost = {
  handle: async () => ({ ok: false, message: 'unused' }),
  getCard: async () => undefined,
}

it('a Discord API that never answers: says what it waits for, then names DISCORD_API_URL', async () => {
  const sockets = new Set<Socket>()
  const silent = createServer((socket) => void sockets.add(socket))
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`
  const said: Array<{ msg: string; fields: unknown }> = []
  const logger: Logger = {
    debug: () => {},
    info: (msg, fields) => void said.push({ msg, fields }),
    warn: () => {},
    error: () => {},
  }
  const adapter = new DiscordAdapter({ token: 'discord-test-token', apiUrl: url, logger, startCheckMs: 200 })
  try {
    await expect(adapter.start(host)).rejects.toThrow(
      `cannot reach the Discord API at ${url} (DISCORD_API_URL): no answer within 0.2 s`,
    )
    expect(said).toContainEqual({
      msg: 'waiting for the Discord API to answer (DISCORD_API_URL), up to 0.2 s',
      fields: { url },
    })
  } finally {
    await adapter.stop()
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => silent.close(() => resolve()))
  }
})
