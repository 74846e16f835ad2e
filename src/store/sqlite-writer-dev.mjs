// The writer thread's entry when askbridge runs from its TypeScript sources (the test suite):
// tsx compiles sqlite-writer.ts and what it imports. The built package starts sqlite-writer.js.
import { register } from 'tsx/esm/api'

register()
await import('./sqlite-writer.ts')
