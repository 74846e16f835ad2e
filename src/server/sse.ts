import type { IncomingMessage, ServerResponse } from 'node:http'

/** Options of {@link openSse}. */
export interface SseOptions {
  /** Comment lines keep proxies from closing an idle stream. @default 15000 */
  heartbeatMs?: number
  /**
   * A client that stops reading is dropped once this much is buffered for it, so a slow
   * reader never holds memory or blocks anyone else. @default 4 MiB
   */
  maxBufferedBytes?: number
  /** Extra response headers. */
  headers?: Record<string, string>
}

/** One open Server-Sent Events stream. */
export interface SseStream {
  /** Send one event; returns false once the stream is closed. */
  send(event: string, data: unknown, id?: string): boolean
  comment(text: string): void
  close(): void
  readonly closed: boolean
  /** Resolves when the client goes away or close() is called. */
  readonly done: Promise<void>
}

export function wantsEventStream(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').includes('text/event-stream')
}

/** Start an SSE response. */
export function openSse(req: IncomingMessage, res: ServerResponse, options: SseOptions = {}): SseStream {
  const maxBuffered = options.maxBufferedBytes ?? 4 * 1024 * 1024
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...options.headers,
  })
  // Flush headers at once so EventSource clients see the stream open.
  res.write(': open\n\n')
  let closed = false
  let resolveDone: () => void = () => {}
  const done = new Promise<void>((r) => {
    resolveDone = r
  })
  const heartbeat = setInterval(() => write(': ping\n\n'), options.heartbeatMs ?? 15_000)
  heartbeat.unref()
  const close = () => {
    if (closed) return
    closed = true
    clearInterval(heartbeat)
    if (!res.writableEnded) res.end()
    resolveDone()
  }
  const write = (chunk: string): boolean => {
    if (closed) return false
    if (res.writableLength > maxBuffered) {
      res.destroy()
      close()
      return false
    }
    res.write(chunk)
    return true
  }
  req.on('close', close)
  res.on('close', close)
  res.on('error', close)
  return {
    send(event, data, id) {
      const json = JSON.stringify(data)
      return write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${json}\n\n`)
    },
    comment(text) {
      write(`: ${text.replace(/\n/g, ' ')}\n\n`)
    },
    close,
    get closed() {
      return closed
    },
    done,
  }
}
