/**
 * The package as a user gets it: `npm pack`, then the README's Install commands in an empty
 * folder (a project dependency, then `npx askbridge --version` and `npx askbridge serve` on a free
 * port). It checks what the tarball holds, too: LICENSE and .env.example in, no source maps, no
 * tests or TypeScript sources.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { ensureBuilt, ROOT } from '../cli/built.js'

const run = promisify(execFile)
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string }

let dir: string
beforeAll(async () => {
  await ensureBuilt()
  dir = mkdtempSync(join(tmpdir(), 'askbridge-tarball-'))
}, 120_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * The environment of a person's shell: none of the npm_* variables `npm test` sets, which would
 * point npm at this checkout (npm_config_local_prefix) instead of the empty folder.
 */
function userEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^npm_/i.test(k) && !k.startsWith('VITEST')) env[k] = v
  }
  return env
}

/** The commands of the README's "Install" section (lines of its sh blocks, comments cut). */
function readmeInstallCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = /^## Install\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? ''
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    (m[1] ?? '')
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l !== '' && !l.startsWith('#')),
  )
}

/**
 * better-sqlite3 installs a prebuilt binary where one exists and compiles otherwise. This machine
 * cannot download one, and compiling takes minutes; so the binary built in this checkout is
 * offered as a local prebuild, which better-sqlite3's own install script (prebuild-install) unpacks
 * exactly as it would a downloaded one.
 */
async function offerPrebuild(project: string): Promise<void> {
  const sqlite = JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8')) as {
    version: string
  }
  const stage = join(dir, 'prebuild')
  mkdirSync(join(stage, 'build/Release'), { recursive: true })
  writeFileSync(
    join(stage, 'build/Release/better_sqlite3.node'),
    readFileSync(join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')),
  )
  const prebuilds = join(dir, 'prebuilds')
  mkdirSync(prebuilds)
  const name = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  await run('tar', ['czf', join(prebuilds, name), '-C', stage, 'build'])
  writeFileSync(join(project, '.prebuild-installrc'), `local-prebuilds=${prebuilds}\n`)
}

test('the packed tarball installs in an empty folder as the README says; --version and serve work there', async () => {
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    env: userEnv(),
  })
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
  if (!packed) throw new Error('npm pack printed nothing')
  const files = packed.files.map((f) => f.path)
  expect(files).toEqual(
    expect.arrayContaining([
      'LICENSE',
      '.env.example',
      'README.md',
      'package.json',
      'bin/askbridge.js',
      'slack-app-manifest.json',
      'dist/src/cli/main.js',
      'dist/src/index.d.ts',
      'dist/adapters/platforms.js',
    ]),
  )
  expect(files.filter((f) => f.endsWith('.map'))).toEqual([])
  expect(
    files.filter((f) => /^(src|adapters|test)\//.test(f) || (/\.ts$/.test(f) && !f.endsWith('.d.ts'))),
  ).toEqual([])
  expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(
    /^MIT License\n\nCopyright \(c\) 2026 askbridge contributors\n/,
  )

  // The README's commands, with the tarball standing in for the published package.
  const commands = readmeInstallCommands()
  for (const c of [
    'npm install -g askbridge',
    'npx askbridge@latest serve',
    'npm install askbridge',
    'npx askbridge --version',
    'npx askbridge serve',
  ]) {
    expect(commands).toContain(c)
  }
  const project = join(dir, 'project')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'trying-askbridge', private: true }))
  await offerPrebuild(project)
  const tarball = join(dir, packed.filename)
  const env = userEnv()
  // --prefer-offline: what this machine's npm cache holds is used, the rest comes from the registry.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project, env })

  const version = await run('npx', ['askbridge', '--version'], { cwd: project, env })
  expect(version.stdout.trim()).toBe(pkg.version)

  const serve = spawn('npx', ['askbridge', 'serve'], {
    cwd: project,
    env: { ...env, ASKBRIDGE_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  try {
    const url = await inboxUrl(serve)
    const health = await fetch(new URL('/healthz', url))
    expect(health.status).toBe(200)
  } finally {
    const exited = new Promise((resolve) => serve.once('exit', resolve))
    if (serve.exitCode === null && serve.pid !== undefined) process.kill(-serve.pid, 'SIGTERM')
    await exited
  }
}, 300_000)

/** Resolves with the inbox URL `serve` prints once it listens; rejects if it exits first. */
function inboxUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let err = ''
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString()
      const m = /Web inbox: (http:\/\/\S+)/.exec(err)
      if (m?.[1]) resolve(m[1])
    })
    child.once('exit', (code) =>
      reject(new Error(`askbridge serve exited (${code}) before listening:\n${err}`)),
    )
  })
}
