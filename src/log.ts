/** Structured logging: one JSON object a line. Secrets never reach a log line. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

const SECRET_KEY = /token|secret|password|authorization|signature|key$/i
// Slack tokens (xoxb-, xapp-, ...), Discord bot tokens, bearer values.
const SECRET_VALUE =
  /\b(xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|[MNO][A-Za-z\d_-]{20,}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{20,}|Bearer\s+\S+)/g

/** Replace secret-looking keys and values anywhere in a value. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(SECRET_VALUE, '[redacted]')
  if (depth > 6 || value === null || typeof value !== 'object') return value
  if (value instanceof Error) return { name: value.name, message: redact(value.message, depth + 1) }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEY.test(k) && typeof v === 'string' ? '[redacted]' : redact(v, depth + 1)
  }
  return out
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const
export type LogLevel = keyof typeof LEVELS

/** JSON lines to a stream (stderr by default), redacted. */
export function jsonLogger(
  options: { level?: LogLevel; stream?: { write(s: string): unknown }; base?: Record<string, unknown> } = {},
): Logger {
  const min = LEVELS[options.level ?? 'info']
  const stream = options.stream ?? process.stderr
  const write = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[level] < min) return
    const line = { time: new Date().toISOString(), level, msg: message, ...options.base, ...fields }
    stream.write(`${JSON.stringify(redact(line))}\n`)
  }
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  }
}
