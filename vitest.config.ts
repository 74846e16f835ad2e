import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/browser/**', 'node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // An unhandled rejection or error fails the run, even when every test passed (the default,
    // stated so that it stays).
    dangerouslyIgnoreUnhandledErrors: false,
  },
})
