import { type ChildProcessByStdio, spawn } from 'node:child_process'
import type { Readable } from 'node:stream'
import { BIN } from '../cli/built.js'

/** One `askbridge serve` child process (the built command): a replica a test can SIGKILL. */
export interface Replica {
  child: ChildProcessByStdio<null, Readable, Readable>
  url: string
  output: () => string
  exited: Promise<number | null>
}

/** Start `askbridge serve` with exactly this environment; resolves once it listens. */
export async function startReplica(env: Record<string, string>): Promise<Replica> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      const m = /Web inbox: (http:\/\/\S+)\/inbox/.exec(stderr)
      if (m?.[1]) resolve(m[1])
    })
    child.stdout.resume()
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)))
  })
  return { child, url, output: () => stderr, exited }
}

/** Stop a replica still running (SIGTERM) and wait for it. */
export async function stopReplica(replica: Replica): Promise<void> {
  if (replica.child.exitCode !== null || replica.child.signalCode !== null) return
  replica.child.kill('SIGTERM')
  await replica.exited
}
