#!/usr/bin/env -S node --max-semi-space-size=2
// The askbridge command. The code lives in dist/ (npm run build).
//
// --max-semi-space-size=2: V8's young generation grows to two 16 MiB semi-spaces under load and keeps
// them, and every scavenge of a large young generation promotes the objects of requests still in
// flight, which then sit in the old generation as garbage until a full collection. Capped at 2 MiB,
// a bridge holding 10,000 open asks stays around 115 MiB RSS instead of 140-190 MiB, and scavenges
// are shorter, so the slowest clicks are faster too (docs/capacity.md, Memory). `env -S` passes the
// flag wherever the command is run through this file (npx, npm's bin links, cmd-shim on Windows);
// started as `node bin/askbridge.js`, pass it yourself.
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
