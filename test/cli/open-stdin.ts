import { spawn } from 'node:child_process'
import { BIN } from './built.js'

export interface Exit {
  code: number | null
  stdout: string
  stderr: string
  /** The process was still running when the bound ran out (and was killed). */
  hung: boolean
}

/**
 * Run `askbridge ...` with stdin a pipe that is never closed, as in a terminal: a command that
 * reads stdin when it should not never exits. The wait is bounded: past `boundMs` the child is
 * killed and `hung` is true.
 */
export function runWithOpenStdin(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; boundMs?: number },
): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: options.cwd, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let hung = false
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    const bound = setTimeout(() => {
      hung = true
      child.kill('SIGKILL')
    }, options.boundMs ?? 10_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(bound)
      child.stdin.destroy()
      resolve({ code, stdout, stderr, hung })
    })
  })
}
