/** The store's variables: where it lives (ASKBRIDGE_DB, checked up front) and how long questions and the audit are kept. */
import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { z } from 'zod'
import { isPostgresUrl, parsePostgresUrl } from '../store/pg-url.js'
import { optionalText, retention } from './values.js'

/**
 * What is wrong with an ASKBRIDGE_DB value, caught here so it is named with every other problem
 * rather than failing later, alone, when the store opens.
 */
function dbProblem(value: string): string | undefined {
  if (value === 'memory' || value === ':memory:') return undefined
  if (isPostgresUrl(value)) {
    const parsed = parsePostgresUrl(value)
    return 'problem' in parsed ? parsed.problem : undefined
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) && !value.startsWith('sqlite:')) {
    return 'must be sqlite:PATH, a file path or a postgres:// URL'
  }
  const path = value.startsWith('sqlite:') ? value.slice('sqlite:'.length) : value
  // An empty path would open a throwaway database: every question lost on restart.
  if (path.trim() === '') return 'needs a file path after "sqlite:"'
  const dir = dirname(resolve(path))
  if (!existsSync(dir)) return `the directory ${dir} does not exist`
  return undefined
}

export const storeVars = {
  ASKBRIDGE_DB: optionalText
    .transform((v, ctx) => {
      const problem = dbProblem(v ?? './askbridge.db')
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem })
        return z.NEVER
      }
      return v ?? './askbridge.db'
    })
    .meta({
      description:
        'Where questions, cards and the audit live: `sqlite:PATH` or a path (one bridge), or `postgres://USER:PASSWORD@HOST:PORT/DB[?schema=NAME]`, shared by several bridges. The password is secret.',
    }),
  /** Settled and dropped calls older than this are pruned (ms; 0 keeps everything). */
  ASKBRIDGE_RETENTION: retention(30 * 86_400_000).meta({
    description:
      'Settled and cancelled questions older than this are deleted with their log, card, posts and late replies (`30d`, `12h`, `90m`); `0` keeps everything. Open and continued questions are never deleted.',
    unit: 'ms',
  }),
  /** Audit entries older than this are pruned (ms; 0, the default, keeps the audit). */
  ASKBRIDGE_AUDIT_RETENTION: retention(0).meta({
    description: 'Audit entries older than this are deleted; `0` keeps the audit.',
    unit: 'ms',
  }),
}

/** The password in a postgres:// ASKBRIDGE_DB, kept out of logs. */
export function dbPassword(value: string): string | undefined {
  if (!isPostgresUrl(value)) return undefined
  const parsed = parsePostgresUrl(value)
  return 'target' in parsed ? parsed.target.password : undefined
}
