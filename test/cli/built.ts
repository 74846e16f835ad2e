import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BIN = join(ROOT, 'bin/askbridge.js')
const MAIN = join(ROOT, 'dist/src/cli/main.js')
const LOCK = join(ROOT, 'dist/.test-build-lock')

function newest(dir: string): number {
  let max = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) max = Math.max(max, newest(path))
    else if (entry.name.endsWith('.ts')) max = Math.max(max, statSync(path).mtimeMs)
  }
  return max
}

function fresh(): boolean {
  if (!existsSync(MAIN)) return false
  return statSync(MAIN).mtimeMs >= Math.max(newest(join(ROOT, 'src')), newest(join(ROOT, 'adapters')))
}

/**
 * The CLI tests run the built command (bin/askbridge.js imports dist/). `npm test` builds first;
 * when run alone, build once here (one test file at a time, guarded by a lock directory).
 */
export async function ensureBuilt(): Promise<void> {
  for (;;) {
    if (fresh()) return
    try {
      mkdirSync(join(ROOT, 'dist'), { recursive: true })
      mkdirSync(LOCK)
    } catch {
      // Someone else is building; a lock older than two minutes is left over from a crash.
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 120_000) rmSync(LOCK, { recursive: true })
      await new Promise((r) => setTimeout(r, 250))
      continue
    }
    try {
      if (fresh()) return
      await new Promise<void>((done) => {
        // Type errors elsewhere in the tree do not stop tsc from emitting.
        execFile('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT }, () => done())
      })
      if (!existsSync(MAIN)) throw new Error('npm run build did not produce dist/src/cli/main.js')
      return
    } finally {
      rmSync(LOCK, { recursive: true, force: true })
    }
  }
}
