import { spawn } from 'node:child_process'
import { BIN } from './built.js'

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Run `askbridge ...` as a child process. */
export function askbridge(
  args: string[],
  options: { env?: Record<string, string>; cwd: string; stdin?: string },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: options.cwd, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.stdin ?? '')
  })
}
