import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parse } from 'dotenv'
import type { PlatformDescriptor } from '../platform-descriptor.js'
import { type Config, parseConfig } from './env.js'

export * from './env.js'

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** The environment to read; `.env` values fill in what it lacks. @default process.env */
  env?: Record<string, string | undefined>
  /** The `.env` file. @default `.env` in the working directory */
  envFile?: string
  /** The platforms whose variables are read too (adapters/platforms.ts). */
  platforms: readonly PlatformDescriptor[]
}

/**
 * Read `.env` (quietly; real environment variables win) and validate everything.
 * Throws a ConfigError naming every problem at once.
 */
export function loadConfig(options: LoadConfigOptions): Config {
  const env = options.env ?? process.env
  const file = resolve(options.envFile ?? '.env')
  if (existsSync(file)) {
    // Real environment variables win over the file, as with dotenv's own config().
    const fromFile = parse(readFileSync(file))
    return parseConfig({ ...fromFile, ...definedOnly(env) }, options.platforms)
  }
  return parseConfig(env, options.platforms)
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v
  return out
}
