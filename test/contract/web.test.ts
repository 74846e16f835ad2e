/**
 * The web inbox through the shared adapter contract, over its real wire: the inbox's HTTP routes
 * on a real server (`GET /inbox/api/cards`, `POST /inbox/api/cards/:callId/actions`, the SSE
 * stream for private notices). A press only sends what the card's view offers the page.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { WebAdapter } from '../../adapters/web/adapter.js'
import type { WebCardView } from '../../adapters/web/client/types.js'
import type { CardAction } from '../../src/card/types.js'
import {
  type ComponentTarget,
  type ContractHarness,
  type PersonSpec,
  runAdapterContract,
} from './adapter-contract.js'

runAdapterContract('web inbox (HTTP)', async (): Promise<ContractHarness> => {
  const adapter = new WebAdapter({ heartbeatMs: 60_000 })
  const server: Server = createServer((req, res) => {
    void adapter.handleHttp(req, res, new URL(req.url ?? '/', 'http://inbox')).then((mine) => {
      if (!mine) res.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const notices = new Map<string, string[]>()
  const noticeFor = (userId: string, text: string) =>
    notices.set(userId, [...(notices.get(userId) ?? []), text])

  // Private notices pushed outside a click's response arrive on the page's event stream.
  const events = new AbortController()
  void (async () => {
    const res = await fetch(`${base}/inbox/api/events`, { signal: events.signal })
    const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader()
    let buffer = ''
    for (;;) {
      const { value, done } = (await reader?.read()) ?? { done: true, value: undefined }
      if (done) return
      buffer += value
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = /^event: (.*)$/m.exec(frame)?.[1]
        const data = /^data: (.*)$/m.exec(frame)?.[1]
        if (event === 'notice' && data) {
          const n = JSON.parse(data) as { userId: string; text: string }
          noticeFor(n.userId, n.text)
        }
      }
    }
  })().catch(() => {})

  const view = async (callId: string): Promise<WebCardView | undefined> => {
    const res = await fetch(`${base}/inbox/api/cards`)
    const body = (await res.json()) as { cards: WebCardView[] }
    return body.cards.find((c) => c.callId === callId)
  }
  const send = async (callId: string, action: CardAction, person: PersonSpec) => {
    const res = await fetch(`${base}/inbox/api/cards/${encodeURIComponent(callId)}/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action, person: { name: person.name } }),
    })
    const body = (await res.json()) as { ok?: boolean; message?: string }
    if (body.message) noticeFor(person.userId, body.message)
  }
  /** The controls the page shows, with the question each belongs to (-1: the card's footer). */
  const controlsOf = (v: WebCardView) => [
    ...v.questions.flatMap((q, qi) => q.controls.map((control) => ({ control, qi }))),
    ...v.footer.map((control) => ({ control, qi: -1 })),
  ]
  /** The action the page's control for `target` sends, or an error when the page shows no such control. */
  const actionFor = (v: WebCardView, target: ComponentTarget): CardAction => {
    if (!v.live) throw new Error(`card ${v.callId} is finished: no controls`)
    const question = target.q === undefined ? undefined : v.questions[target.q]
    for (const { control, qi } of controlsOf(v)) {
      if (control.kind === 'options') {
        const option = control.options.find((o) => o.index === target.o)
        if ((target.verb === 'choose' || target.verb === 'toggle') && qi === target.q && question && option)
          return {
            type: control.mode === 'any' ? 'toggle' : 'choose',
            questionId: question.id,
            label: option.label,
          }
        continue
      }
      if (control.kind !== 'button' || control.verb !== target.verb) continue
      if (control.verb === 'skip' && question && control.q === target.q)
        return { type: 'skip', questionId: question.id }
      if (control.verb === 'approve' || control.verb === 'reject' || control.verb === 'always')
        return { type: control.verb }
      if (control.verb === 'submit' || control.verb === 'hold') return { type: control.verb }
    }
    throw new Error(`the inbox shows no ${target.verb} control here`)
  }
  const mustView = async (callId: string) => {
    const v = await view(callId)
    if (!v) throw new Error(`card ${callId} is not in the inbox`)
    return v
  }

  return {
    adapter,
    destination: { platform: 'web' },
    people: { ann: { userId: 'web:Ann', name: 'Ann' }, bob: { userId: 'web:Bob', name: 'Bob' } },
    // The inbox has no per-person identity without sign-in: a route either lets it answer or not.
    refuseAll: { web: false },
    async press(callId, target, person) {
      await send(callId, actionFor(await mustView(callId), target), person)
    },
    async select(callId, q, labels, person) {
      // The page has no menus: a selection is a press of each option's button.
      const v = await mustView(callId)
      for (const label of labels) {
        const picker = v.questions[q]?.controls.find((c) => c.kind === 'options')
        const o =
          picker?.kind === 'options' ? (picker.options.find((x) => x.label === label)?.index ?? -1) : -1
        await send(callId, actionFor(v, { verb: 'toggle', q, o }), person)
      }
    },
    async submitForm(callId, verb, q, text, person) {
      const v = await mustView(callId)
      const question = v.questions[q]
      const form = question?.controls.find((c) => c.kind === 'form' && c.form === verb)
      if (!v.live || !question || !form) throw new Error(`no ${verb} box here`)
      if (verb === 'decline') {
        await send(callId, { type: 'decline', feedback: text }, person)
      } else {
        await send(callId, { type: 'other', questionId: question.id, text }, person)
      }
    },
    async notices(person) {
      return notices.get(person.userId) ?? []
    },
    async text(callId) {
      const v = await view(callId)
      if (!v) return ''
      const strip = (html: string) => html.replace(/<[^>]*>/g, '')
      return [
        ...v.questions.flatMap((q) => [
          q.question,
          strip(q.detailHtml ?? ''),
          ...q.controls.flatMap((c) => (c.kind === 'options' ? c.options.map((o) => o.label) : [])),
          ...(q.answer ?? []),
        ]),
        v.status,
        ...v.statusLines.map((l) => l.text),
        ...(v.result ?? []).flatMap((a) => [...a.selected, a.custom ?? '']),
      ].join('\n')
    },
    async live(callId) {
      return (await view(callId))?.live === true
    },
    async messageCount(callId) {
      return (await view(callId)) ? 1 : 0
    },
    async close() {
      events.abort()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
})
