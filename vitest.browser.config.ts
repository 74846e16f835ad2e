import { defineConfig } from 'vitest/config'

// Browser tests drive a real headless Chromium (Debian's /usr/bin/chromium via playwright-core).
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/browser/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
