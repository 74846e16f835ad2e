// Section "calls": how many platform API calls one card costs, from the ask to the card in its final
// state, on Slack and on Discord, counted at the fakes. askbridge is the real `serve` (in this
// process), one platform at a time plus the web inbox; people click what is rendered.
import { join } from 'node:path'
import { PLATFORMS } from '../dist/adapters/platforms.js'
import { decodeComponentId } from '../dist/src/card/codec.js'
import { parseConfig } from '../dist/src/config/env.js'
import { serve } from '../dist/src/server/serve.js'
import { FakeDiscord } from '../dist-bench/test/fakes/discord/server.js'
import { FakeSlack } from '../dist-bench/test/fakes/slack/server.js'
import { FakeTeams } from '../dist-bench/test/fakes/teams/server.js'
import { sleep, table, until } from './lib.js'

/** After the card's last expected change, how long no further call may arrive before counting stops. */
const QUIET_MS = 1500
const GOAL = 2

const single = [{ id: 'go', question: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] }]
const batch = ['db', 'cache', 'queue'].map((id) => ({
  id,
  question: `Which ${id}?`,
  options: [{ label: 'A' }, { label: 'B' }],
}))

async function startBridge(dir, name, env) {
  const config = parseConfig(
    {
      ASKBRIDGE_PORT: '0',
      ASKBRIDGE_DB: join(dir, `${name}.db`),
      ASKBRIDGE_LOG_LEVEL: 'warn',
      ...env,
    },
    PLATFORMS,
  )
  return serve({ config, platforms: PLATFORMS })
}

function ask(url, callId, questions, timeoutMs) {
  return fetch(`${url}/v1/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId, questions, ...(timeoutMs ? { timeoutMs } : {}) }),
  }).then((res) => res.json())
}

/** Calls made from `from` on, once none has come for QUIET_MS. */
async function settle(log, from) {
  let seen = -1
  while (log().length !== seen) {
    seen = log().length
    await sleep(QUIET_MS)
  }
  return log().slice(from)
}

const slackPlatform = {
  name: 'Slack',
  async start(dir) {
    const fake = await FakeSlack.start()
    const bridge = await startBridge(dir, 'slack', {
      SLACK_BOT_TOKEN: fake.options.botToken,
      SLACK_SIGNING_SECRET: fake.options.signingSecret,
      SLACK_CHANNEL: 'C0CALLS',
      SLACK_API_URL: fake.apiUrl,
    })
    fake.interactivityUrl = `${bridge.url}/slack/events`
    const user = { id: 'U0ANN', name: 'Ann' }
    return {
      url: bridge.url,
      log: () => fake.calls.map((c) => c.method),
      /** Click the element of `callId` matching (verb, q, o); false when it is not shown. */
      async press(callId, verb, q, o) {
        for (const message of fake.messagesOf(callId))
          for (const id of fake.liveActionIds(callId)) {
            const ref = decodeComponentId(id)
            if (ref?.verb !== verb || ref.q !== q || ref.o !== o) continue
            if (!JSON.stringify(message.blocks).includes(id)) continue
            const delivery = await fake.deliver(fake.actionPayload(user, message, id))
            if (delivery.status !== 200) throw new Error(`click ${id}: ${delivery.status}`)
            return true
          }
        return false
      },
      shown: (callId) => fake.messagesOf(callId).length > 0,
      live: (callId) => fake.liveActionIds(callId).length > 0,
      text: (callId) => JSON.stringify(fake.messagesOf(callId).map((m) => m.blocks)),
      async stop() {
        await bridge.close()
        await fake.close()
      },
    }
  },
}

const discordPlatform = {
  name: 'Discord',
  async start(dir) {
    const fake = await new FakeDiscord().start()
    const bridge = await startBridge(dir, 'discord', {
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.apiUrl,
      DISCORD_CHANNEL_ID: fake.channelId,
    })
    const user = { id: '220000000000000001', username: 'ann', global_name: 'Ann' }
    const messagesOf = (callId) =>
      fake.channelMessages().filter((m) => JSON.stringify(m.components).includes(`|${callId}|`))
    const componentsOf = (message) =>
      message.components.flatMap((row) => (Array.isArray(row.components) ? row.components : [row]))
    const known = new Map()
    const mine = (callId) => {
      // A finished card has no components left: remember which messages were this call's.
      for (const m of messagesOf(callId)) known.set(m.id, callId)
      return fake.channelMessages().filter((m) => known.get(m.id) === callId)
    }
    return {
      url: bridge.url,
      log: () =>
        fake.requests.map(
          (r) => `${r.method} ${r.path.replace(/\d{6,}/g, ':id').replace(/\/[\w-]{20,}/g, '/:token')}`,
        ),
      async press(callId, verb, q, o) {
        for (const message of mine(callId))
          for (const component of componentsOf(message)) {
            const ref = component.custom_id ? decodeComponentId(component.custom_id) : undefined
            if (ref?.verb !== verb || ref.q !== q || ref.o !== o || component.disabled) continue
            if (component.type === 2) await fake.click(message.id, component.custom_id, user)
            else
              await fake.select(
                message.id,
                component.custom_id,
                [String(component.options[o ?? 0].value)],
                user,
              )
            return true
          }
        return false
      },
      shown: (callId) => mine(callId).length > 0,
      live: (callId) => mine(callId).some((m) => componentsOf(m).some((c) => c.custom_id && !c.disabled)),
      text: (callId) => JSON.stringify(mine(callId)),
      async stop() {
        await bridge.close()
        await fake.close()
      },
    }
  },
}

const teamsPlatform = {
  name: 'Teams',
  async start(dir) {
    const fake = await new FakeTeams().start()
    const bridge = await startBridge(dir, 'teams', {
      TEAMS_APP_ID: fake.appId,
      TEAMS_APP_PASSWORD: fake.appPassword,
      TEAMS_TENANT_ID: fake.tenantId,
      TEAMS_SERVICE_URL: fake.serviceUrl,
      TEAMS_AUTHORITY_URL: fake.authorityUrl,
      TEAMS_CHANNEL: fake.channelId,
    })
    fake.botUrl = `${bridge.url}/teams/messages`
    const user = { aadObjectId: '11111111-1111-4111-8111-111111111111', name: 'Ann' }
    const known = new Map()
    const mine = (callId) => {
      // A finished card has no buttons left: remember which activities were this call's.
      for (const a of fake.conversation())
        if (JSON.stringify(a.activity).includes(`|${callId}|`)) known.set(a.id, callId)
      return fake.conversation().filter((a) => known.get(a.id) === callId)
    }
    const executes = (activity) => {
      const out = []
      const visit = (x) => {
        if (Array.isArray(x)) x.forEach(visit)
        else if (x && typeof x === 'object') {
          if (x.type === 'Action.Execute') out.push(x)
          for (const v of Object.values(x)) visit(v)
        }
      }
      visit(activity.attachments)
      return out
    }
    return {
      url: bridge.url,
      // Connector calls only: the Entra token (one an hour) and the key set are not Teams API calls.
      log: () =>
        fake.requests
          .filter((r) => r.path.startsWith('/amer/'))
          .map(
            (r) =>
              `${r.method} ${r.path.replace(/\/activities\/\d+/, '/activities/:id').replace(/conversations\/[^/]+/, 'conversations/:id')}`,
          ),
      async press(callId, verb, q, o) {
        for (const stored of mine(callId))
          for (const action of executes(stored.activity)) {
            const ref = decodeComponentId(String(action.data?.askbridge))
            if (ref?.verb !== verb || ref.q !== q || ref.o !== o) continue
            const record = await fake.execute(stored.id, action, {}, user)
            if (record.status !== 200) throw new Error(`click: ${record.status}`)
            return true
          }
        return false
      },
      shown: (callId) => mine(callId).length > 0,
      live: (callId) => mine(callId).some((a) => executes(a.activity).length > 0),
      text: (callId) => JSON.stringify(mine(callId).map((a) => a.activity)),
      async stop() {
        await bridge.close()
        await fake.close()
      },
    }
  },
}

/** The calls one card costs in each case. */
const cases = [
  {
    name: 'single question, answered by a click',
    single: true,
    async run(p, callId) {
      const answered = ask(p.url, callId, single)
      await until(() => p.shown(callId), 'card posted')
      await sleep(QUIET_MS)
      if (!(await p.press(callId, 'choose', 0, 0))) throw new Error('no option button')
      await answered
      await until(() => !p.live(callId), 'card finished')
    },
  },
  {
    name: `batch of ${batch.length} questions: one click each, then Submit`,
    async run(p, callId) {
      const answered = ask(p.url, callId, batch)
      await until(() => p.shown(callId), 'card posted')
      await sleep(QUIET_MS)
      for (let q = 0; q < batch.length; q++) {
        if (!(await p.press(callId, 'choose', q, 1))) throw new Error(`no option for question ${q}`)
        await sleep(300)
      }
      if (!(await p.press(callId, 'submit'))) throw new Error('no Submit')
      await answered
      await until(() => !p.live(callId), 'card finished')
    },
  },
  {
    name: 'timed single question (1 s window) answered late',
    async run(p, callId) {
      const pending = await ask(p.url, callId, single, 1000)
      if (pending.pending !== true) throw new Error(`not pending: ${JSON.stringify(pending)}`)
      await until(() => p.text(callId).includes('continued'), 'card says the agent continued')
      await sleep(QUIET_MS)
      if (!(await p.press(callId, 'choose', 0, 0))) throw new Error('no option button')
      await until(() => !p.live(callId), 'card finished')
    },
  },
]

export default async function calls({ dir, log }) {
  const rows = []
  const goals = []
  for (const platform of [slackPlatform, discordPlatform, teamsPlatform]) {
    const p = await platform.start(dir)
    try {
      await sleep(QUIET_MS)
      for (const [i, c] of cases.entries()) {
        const from = p.log().length
        await c.run(p, `calls-${i}`)
        const made = await settle(p.log, from)
        const byKind = new Map()
        for (const m of made) byKind.set(m, (byKind.get(m) ?? 0) + 1)
        rows.push([platform.name, c.name, made.length, [...byKind].map(([m, n]) => `${m} ×${n}`).join(', ')])
        log(`${platform.name}, ${c.name}: ${made.length}`)
        if (c.single)
          goals.push({
            goal: `≤ ${GOAL} API calls per single-question card on ${platform.name}`,
            figure: `${made.length}`,
            pass: made.length <= GOAL,
          })
      }
    } finally {
      await p.stop()
    }
  }
  const markdown = `Every request askbridge makes to the platform's API (counted at the fake) from the ask until the card is
in its final state and no further request came for ${QUIET_MS / 1000} s. \`askbridge serve\` runs in this process with
one platform (Slack over signed HTTP interactivity; Discord over the gateway) plus the web inbox; the
clicks are the fake's person using what is rendered. Connection set-up (auth.test, gateway) is before the
count starts. Acknowledging a Slack click is the HTTP response, not an API call; a Discord interaction
callback is one. A Teams click is an invoke answered in its HTTP response with the new card; the other
copies are updated through the connector.

${table(['platform', 'card', 'API calls', 'which'], rows)}`
  return { markdown, goals }
}
