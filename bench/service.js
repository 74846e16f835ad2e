// Section "service": ask -> answer round trips through the real service on a real SQLite file.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { ChatAnswerer } from '../dist/src/answerer/chat.js'
import { cardRef } from '../dist/src/card/codec.js'
import { UserQuestionService } from '../dist/src/service/service.js'
import { openStore } from '../dist/src/store/index.js'
import { fmt, summarize, table } from './lib.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2000)
const WARMUP = 200
const question = { id: 'colour', question: 'Which colour?', options: [{ label: 'Red' }, { label: 'Blue' }] }
const answer = { answers: [{ id: 'colour', selected: ['Red'] }] }

async function measure(name, once) {
  for (let i = 0; i < WARMUP; i++) await once(`warm-${i}`)
  const latencies = []
  const start = performance.now()
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now()
    await once(`run-${i}`)
    latencies.push(performance.now() - t)
  }
  const seconds = (performance.now() - start) / 1000
  return { name, rounds: ROUNDS, perSecond: ROUNDS / seconds, ...summarize(latencies) }
}

/** A platform that "clicks" the first option as soon as the card is posted. */
class InstantPlatform {
  platform = 'slack'
  async start(host) {
    this.host = host
  }
  async stop() {}
  async post(card) {
    queueMicrotask(() => {
      void this.host.handle({
        ...cardRef(card),
        interaction: {
          id: `click-${card.callId}`,
          actor: { platform: 'slack', userId: 'U1', name: 'Bench' },
          action: { type: 'choose', questionId: 'colour', label: 'Red' },
          at: Date.now(),
        },
      })
    })
    return { id: card.callId }
  }
  async update() {}
  async notify() {}
}

export default async function service({ dir }) {
  const results = []
  for (const durability of ['full', 'normal']) {
    const store = openStore(join(dir, `service-${durability}.db`), { durability })
    const service = new UserQuestionService({ store })
    service.use(async () => answer)
    const agent = service.agents.ensure('bench')
    results.push(
      await measure(`service: blocking ask, instant answerer (durability ${durability})`, (id) =>
        service.ask({ questions: [question], agent, wait: { callId: `b-${id}` } }),
      ),
    )
    results.push(
      await measure(`service: timed ask (60 s window), instant answerer (durability ${durability})`, (id) =>
        service.askTimed({ questions: [question], agent }, `t-${id}`, 60_000),
      ),
    )
    await service.close()
    await store.close()
  }
  {
    const store = openStore(join(dir, 'chat.db'))
    const service = new UserQuestionService({ store })
    const chat = new ChatAnswerer({
      service,
      adapters: [new InstantPlatform()],
      destinations: [{ platform: 'slack', channel: 'C1' }],
      escalationIntervalMs: 0,
    })
    service.use(chat.answerer)
    await chat.start()
    const agent = service.agents.ensure('bench')
    results.push(
      await measure('chat answerer: card posted, clicked, answered (SQLite card CAS + audit)', (id) =>
        service.ask({ questions: [question], agent, wait: { callId: `c-${id}` } }),
      ),
    )
    await service.close()
    await chat.stop()
    await store.close()
  }
  const markdown = `Each round trip is one \`ask\` through the real \`UserQuestionService\` on a real SQLite file
(WAL), sequentially, after ${WARMUP} warm-up rounds. The answerer answers at once, so the figures measure
askbridge's own overhead: validation, the event log writes, the waterfall and (last row) the card
compare-and-set, audit and copy update. \`durability full\` (the default) fsyncs every commit so an
acknowledged answer survives power loss; \`normal\` shows what that costs. No goal rests on
these; they show the core's cost apart from any platform.

${table(
  ['benchmark', 'rounds', 'round trips/s', 'p50 ms', 'p99 ms'],
  results.map((r) => [r.name, r.rounds, Math.round(r.perSecond), fmt(r.p50), fmt(r.p99)]),
)}`
  return { markdown, goals: [] }
}
