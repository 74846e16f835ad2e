import type { EventEmitter } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { Config } from '../config/index.js'
import { HttpError } from '../errors.js'
import type { Logger } from '../log.js'
import type { PlatformModule } from '../platform.js'
import type { loadRoutes } from '../routing/routes.js'
import type { ServiceEvents } from '../service/events.js'

type Routes = ReturnType<typeof loadRoutes>

/**
 * One entry per command. The dispatcher answers `--help`/`-h` from `usage` before the command
 * runs, so no command reads stdin, opens a socket or validates configuration to print its help.
 * A new command needs only an entry here.
 */
interface Command {
  /** One line for the top-level usage. */
  summary: string
  /** What `askbridge COMMAND --help` prints (loaded lazily so each command starts fast). */
  usage: () => string | Promise<string>
  run: (argv: string[], io: MainIo) => Promise<number>
}

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'run the bridge: HTTP API, web inbox, configured adapters',
    usage: () =>
      'usage: askbridge serve\n\n' +
      'Runs the bridge: the HTTP API, the web inbox and every adapter whose credentials are set.\n' +
      'Configured by environment variables or .env (see .env.example).',
    run: (argv, io) => runServe(argv, io),
  },
  ask: {
    summary: 'ask a question through a running bridge (askbridge ask --help)',
    usage: async () => (await import('./ask-args.js')).ASK_USAGE,
    run: async (argv, io) => {
      // Each command loads only what it uses: `ask` in a CI step should start fast.
      const { runAsk } = await import('./ask.js')
      const controller = new AbortController()
      const onSigint = () => controller.abort()
      process.once('SIGINT', onSigint)
      try {
        return await runAsk(argv, {
          env: io.env,
          stdout: io.stdout,
          stderr: io.stderr,
          tty: io.stderrIsTty,
          signal: controller.signal,
        })
      } finally {
        process.off('SIGINT', onSigint)
      }
    },
  },
  mcp: {
    summary: 'an MCP server on stdio (ask_user_question, get_question_replies)',
    usage: () =>
      'usage: askbridge mcp\n\n' +
      'An MCP server on stdin/stdout for an MCP client to start, for example:\n' +
      '  claude mcp add askbridge -- npx askbridge mcp\n' +
      'Tools: ask_user_question, get_question_replies. It talks to a running `askbridge serve`.\n' +
      'Environment: ASKBRIDGE_URL (default http://127.0.0.1:8787), ASKBRIDGE_API_TOKEN,\n' +
      'ASKBRIDGE_AGENT_ID (default mcp), ASKBRIDGE_MCP_TIMEOUT (seconds, default 50; -1 waits).',
    run: async (argv, io) => {
      if (argv.length > 0) {
        io.stderr(`askbridge mcp: unexpected argument "${argv[0]}"; configure with environment variables\n`)
        return 2
      }
      const { runMcp } = await import('./mcp.js')
      try {
        await runMcp(io.env)
        return 0
      } catch (error) {
        io.stderr(`askbridge mcp: ${(error as Error).message}\n`)
        return 1
      }
    },
  },
  hook: {
    summary: 'a Claude Code command hook: hook JSON on stdin, its answer on stdout',
    usage: async () => (await import('./hook.js')).HOOK_USAGE,
    run: async (argv, io) => {
      const { runHook } = await import('./hook.js')
      return runHook(argv, { env: io.env, stdout: io.stdout, stderr: io.stderr })
    },
  },
  audit: {
    summary: 'print the audit log as JSON lines (--call ID, --since TIME)',
    usage: () =>
      'usage: askbridge audit [--call ID] [--since TIME] [--url URL]\n\n' +
      'Prints the audit log as JSON lines (GET /v1/audit). --call-id is the same as --call;\n' +
      '--since takes an ISO date or epoch milliseconds.',
    run: (argv, io) => runAudit(argv, io),
  },
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length))
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  askbridge ${name.padEnd(width)}  ${c.summary}`)
  return `askbridge: carry an agent's questions to people (Slack, Discord, a local web inbox)

usage:
${lines.join('\n')}
  askbridge --version
  askbridge COMMAND --help

configuration: environment variables or a .env file (see .env.example)`
}

/** `--help` or `-h` among the arguments (before a `--` that ends the options). */
function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === '--help' || a === '-h')
}

/** The process seams main() uses; tests pass their own. */
export interface MainIo {
  env: Record<string, string | undefined>
  stdout: (text: string) => void
  stderr: (text: string) => void
  stderrIsTty: boolean
  /**
   * The platforms (adapters/platforms.js), loaded only by `serve`. bin/askbridge.js passes
   * them, so nothing under src/ imports an adapter.
   */
  platforms?: () => Promise<readonly PlatformModule[]>
}

const processIo: MainIo = {
  env: process.env,
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  stderrIsTty: process.stderr.isTTY === true,
}

/** Run the CLI; resolves to the exit code (serve and mcp resolve when they stop). */
export async function main(argv: string[], io: Partial<MainIo> = {}): Promise<number> {
  return run(argv, { ...processIo, ...io })
}

async function run(argv: string[], io: MainIo): Promise<number> {
  const [command, ...rest] = argv
  const entry =
    command === undefined ? undefined : Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
  if (entry) {
    if (wantsHelp(rest)) {
      io.stdout(`${await entry.usage()}\n`)
      return 0
    }
    return entry.run(rest, io)
  }
  switch (command) {
    case '--version':
    case '-v':
      io.stdout(`${version()}\n`)
      return 0
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      // `askbridge help ask` is `askbridge ask --help`.
      const topic = rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0]) ? COMMANDS[rest[0]] : undefined
      io.stdout(`${topic ? await topic.usage() : usage()}\n`)
      return command === undefined ? 2 : 0
    }
    default:
      io.stderr(`askbridge: unknown command "${command}"\n\n${usage()}\n`)
      return 2
  }
}

async function runServe(argv: string[], io: MainIo): Promise<number> {
  if (argv.length > 0) {
    io.stderr(`askbridge serve: unexpected argument "${argv[0]}"; configure with environment variables\n`)
    return 2
  }
  if (!io.platforms) {
    io.stderr('askbridge: no platforms were given to serve (run it through bin/askbridge.js)\n')
    return 1
  }
  const platforms = await io.platforms()
  const checked = await checkedSetup(io, platforms)
  if ('problems' in checked) {
    const { ConfigError } = await import('../config/index.js')
    io.stderr(`${new ConfigError(checked.problems).message}\n`)
    return 1
  }
  const { config, routes } = checked
  const { jsonLogger } = await import('../log.js')
  const { secretsOf } = await import('../config/index.js')
  const secrets = secretsOf(config, platforms)
  const log: Logger = jsonLogger({
    level: config.ASKBRIDGE_LOG_LEVEL,
    // Registered secrets are cut from every line too, whatever their shape.
    stream: { write: (line: string) => io.stderr(scrub(line, secrets)) },
  })
  const { serve } = await import('../server/serve.js')
  const onUnhandled = (error: unknown) => log.error('unhandled rejection', { error })
  process.on('unhandledRejection', onUnhandled)
  let bridge: Awaited<ReturnType<typeof serve>>
  try {
    bridge = await serve({
      config,
      logger: log,
      platforms,
      ...(routes === undefined ? {} : { routes }),
      // Each inbox sign-in link works once; the next is printed (never logged) when one is used.
      onInboxLink: (link) => io.stderr(`askbridge: the inbox sign-in link was used; the next one: ${link}\n`),
    })
  } catch (error) {
    io.stderr(await startFailure(error, config, secrets))
    process.off('unhandledRejection', onUnhandled)
    return 1
  }
  // What a burst of asks and clicks made V8 take, handed back once the bridge goes quiet.
  const { returnHeapAtRest } = await import('./heap-at-rest.js')
  // The signal handlers are in place before the line that says the bridge is up: a supervisor
  // that stops it the moment it reads that line gets a clean close, not a kill by the signal.
  const stopped = untilStopped(bridge, log, io)
  io.stderr(`askbridge is running. Web inbox: ${bridge.inboxUrl}\n`)
  const heap = returnHeapAtRest(log, { work: workDone(bridge.service) })
  await stopped
  heap.stop()
  process.off('unhandledRejection', onUnhandled)
  return 0
}

/**
 * A running count of the questions the service has asked, answered, continued and ended: light,
 * bursty use leaves the event loop almost idle, and this is what tells it from rest.
 */
function workDone(service: EventEmitter<ServiceEvents>): () => number {
  let done = 0
  const count = () => {
    done++
  }
  for (const event of ['asked', 'answered', 'pending', 'dropped', 'reply'] as const) service.on(event, count)
  return () => done
}

/**
 * The configuration and the routes file, checked before anything opens; or every problem at
 * once (the variables, the routes file, PagerDuty's token, which platforms get questions).
 */
async function checkedSetup(
  io: MainIo,
  platforms: readonly PlatformModule[],
): Promise<{ config: Config; routes: Routes | undefined } | { problems: string[] }> {
  const { ConfigError, loadConfig } = await import('../config/index.js')
  const { loadRoutes, RoutesError } = await import('../routing/routes.js')
  const problems: string[] = []
  let config: Config | undefined
  try {
    config = loadConfig({ env: io.env, platforms })
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    problems.push(...error.problems)
  }
  // The routes file is configuration too: its problems go in the same message.
  const routesPath = config ? config.ASKBRIDGE_ROUTES : io.env.ASKBRIDGE_ROUTES?.trim() || undefined
  let routes: Routes | undefined
  if (routesPath !== undefined) {
    try {
      routes = loadRoutes(routesPath, platforms)
    } catch (error) {
      if (!(error instanceof RoutesError)) throw error
      problems.push(...error.problems.map((p) => `ASKBRIDGE_ROUTES (${routesPath}): ${p}`))
    }
  }
  const { pagerDutyTokenProblems } = await import('../oncall/startup.js')
  problems.push(
    ...pagerDutyTokenProblems(
      routes,
      config ? config.PAGERDUTY_API_TOKEN : io.env.PAGERDUTY_API_TOKEN?.trim(),
    ),
  )
  if (config !== undefined && problems.length === 0) {
    // Which platforms get questions: checked once the variables and the routes file are valid.
    const { platformProblems } = await import('../config/platforms.js')
    problems.push(...platformProblems(config, routes, platforms, routesPath))
  }
  if (problems.length > 0 || config === undefined) return { problems }
  return { config, routes }
}

/** What `serve` prints when the bridge cannot start; secrets are cut from it. */
async function startFailure(error: unknown, config: Config, secrets: string[]): Promise<string> {
  const { ConfigError } = await import('../config/index.js')
  const e = error as NodeJS.ErrnoException
  // Checks that need the network (PagerDuty schedules, the sign-in issuer): one message all the same.
  if (error instanceof ConfigError) return `${scrub(error.message, secrets)}\n`
  if (e.name === 'RoutesError') return `askbridge: ASKBRIDGE_ROUTES: ${e.message}\n`
  const why =
    e.code === 'EADDRINUSE'
      ? `port ${config.ASKBRIDGE_PORT} on ${config.ASKBRIDGE_HOST} is in use (ASKBRIDGE_PORT)`
      : scrub(e.message ?? String(error), secrets)
  return `askbridge: cannot start: ${why}\n`
}

/** Run until SIGTERM or SIGINT, then close the bridge (a second signal exits at once). */
function untilStopped(bridge: { close: () => Promise<void> }, log: Logger, io: MainIo): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) {
        io.stderr('askbridge: forced exit\n')
        process.exit(1)
      }
      stopping = true
      log.info('signal received', { signal })
      void bridge.close().finally(resolve)
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGINT', () => stop('SIGINT'))
  })
}

async function runAudit(argv: string[], io: MainIo): Promise<number> {
  let values: {
    call?: string | undefined
    'call-id'?: string | undefined
    since?: string | undefined
    url?: string | undefined
  }
  try {
    values = parseArgs({
      args: argv,
      options: {
        call: { type: 'string' },
        // The first name this flag had; kept so existing scripts keep working.
        'call-id': { type: 'string' },
        since: { type: 'string' },
        url: { type: 'string' },
      },
    }).values
  } catch (error) {
    io.stderr(`askbridge audit: ${(error as Error).message}\n`)
    return 2
  }
  if (values.call !== undefined && values['call-id'] !== undefined && values.call !== values['call-id']) {
    io.stderr('askbridge audit: --call and --call-id name different calls; give one\n')
    return 2
  }
  const callId = values.call ?? values['call-id']
  let since: number | undefined
  if (values.since !== undefined) {
    since = /^\d+$/.test(values.since) ? Number(values.since) : Date.parse(values.since)
    if (!Number.isFinite(since)) {
      io.stderr('askbridge audit: --since takes an ISO date or epoch milliseconds\n')
      return 2
    }
  }
  const { clientFromEnv } = await import('./env.js')
  try {
    const client = clientFromEnv(io.env, values.url === undefined ? {} : { url: values.url })
    const { events } = await client.audit({
      ...(callId === undefined ? {} : { callId }),
      ...(since === undefined ? {} : { since }),
    })
    for (const e of events) io.stdout(`${JSON.stringify(e)}\n`)
    return 0
  } catch (error) {
    if (error instanceof HttpError && error.status === 404 && error.code === 'NOT_FOUND' && !callId) {
      io.stderr('askbridge audit: this bridge has no audit endpoint (GET /v1/audit)\n')
      return 1
    }
    io.stderr(`askbridge audit: ${(error as Error).message}\n`)
    return error instanceof HttpError && error.code === 'BAD_URL' ? 2 : 1
  }
}

function scrub(text: string, secrets: string[]): string {
  let out = text
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]')
  return out
}

function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'askbridge') return pkg.version ?? '0.0.0'
    }
    dir = dirname(dir)
  }
  return '0.0.0'
}
