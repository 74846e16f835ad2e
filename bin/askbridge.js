#!/usr/bin/env node
// The askbridge command. The code lives in dist/ (npm run build).
import { main } from '../dist/src/cli/main.js'

main(process.argv.slice(2), {
  // The platforms, loaded only by `serve`: src/ imports no adapter.
  platforms: async () => (await import('../dist/adapters/platforms.js')).PLATFORMS,
}).then(
  (code) => {
    // Everything opened has been closed; exit once output is flushed rather than wait on
    // keep-alive sockets or stray timers.
    process.stdout.write('', () => process.exit(code))
  },
  (error) => {
    process.stderr.write(`askbridge: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
