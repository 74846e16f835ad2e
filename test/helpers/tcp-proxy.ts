import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy to a real server that a test can cut and restore: `cut()` drops every open
 * connection and refuses new ones (the server "goes away"), `restore()` listens again on the
 * same port. For PostgreSQL lost while running, without touching the shared server.
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  port = 0

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort)
    await proxy.listen()
    return proxy
  }

  private listen(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost)
      for (const s of [client, upstream]) {
        this.sockets.add(s)
        s.on('close', () => this.sockets.delete(s))
        s.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream)
      upstream.pipe(client)
    })
    this.server = server
    return new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => {
        const address = server.address()
        if (address && typeof address === 'object') this.port = address.port
        resolve()
      })
    })
  }

  /** The server goes away: open connections drop, new ones are refused. */
  async cut(): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const s of this.sockets) s.destroy()
    this.sockets.clear()
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  }

  /** The server is back on the same address. */
  restore(): Promise<void> {
    return this.listen()
  }

  async close(): Promise<void> {
    await this.cut()
  }
}
