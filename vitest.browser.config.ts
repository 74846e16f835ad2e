import { defineConfig } from 'vitest/config'

// Browser tests drive a real headless Chromium (Debian's /usr/bin/chromium via playwright-core).
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/browser/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One more try for a test that failed: 2 of 6 runs of this suite on 2026-12-03 each failed one
    // different test (a 30 s timeout waiting on the page, an approval not yet shown), and passed
    // alone and in the next run. A test that fails twice in a row still fails the suite; the
    // flake itself is not yet found.
    retry: 1,
  },
})
